-- per device: peak allocated GiB, when (ms from the trace's start), the op and python frame there, reserved peak, allocations, frees, never freed ([memory] events, profile_memory=True; memory_ops, memory_leaks: per op, never freed)
-- peak_bytes (peak_gib = / 2^30): the largest `allocated` of the device's [memory] events
-- (memory_event): "Total Allocated" where the trace records it, else (2021-era traces: Bytes
-- only) the running sum of Bytes from the trace's start, which allocated_from says ('Total
-- Allocated' / 'sum of Bytes'): then peak_bytes is the most allocated at once beyond what was
-- allocated before the trace began. Where that sum never rises above 0 (the trace only frees
-- what was allocated before it) there is no peak to point at: every peak column is NULL.
-- peak_ms: the peak's first [memory] event, in ms from the trace's first event (the summary's
-- span start); peak_uid: that event; peak_op: the nearest op above it; peak_source: source(),
-- the user's frame. peak_reserved_bytes: the largest "Total Reserved" (NULL where not recorded).
-- never_freed: allocations with no later free of their address in the trace (count, bytes; NULL
-- where events have no Addr). The row's trace is last. Sums of Bytes saturate at int64's limits
-- (memory_event), as tlsql's own time sums do, rather than fail with "integer overflow".
WITH memory_rows AS MATERIALIZED (
  SELECT *, row_number() OVER (PARTITION BY trace, device ORDER BY allocated DESC, ts, uid) AS top,
         row_number() OVER (PARTITION BY trace, device ORDER BY ts, uid) AS first,
         row_number() OVER (PARTITION BY trace, device ORDER BY ts DESC, uid DESC) AS last
  FROM memory_alloc),
d AS (
  SELECT trace, device, max(reserved) AS peak_reserved_bytes, max(allocated_from) AS allocated_from,
         max(CASE WHEN first = 1 THEN allocated END) AS first_allocated,
         max(CASE WHEN last = 1 THEN allocated END) AS last_allocated,
         count(*) FILTER (WHERE bytes > 0) AS allocations, count(*) FILTER (WHERE bytes < 0) AS frees,
         CASE WHEN count(addr) = count(*) THEN count(*) FILTER (WHERE never_freed) END AS never_freed,
         CASE WHEN count(addr) = count(*) THEN CAST(total(bytes) FILTER (WHERE never_freed) AS INTEGER) END
           AS never_freed_bytes
  FROM memory_rows GROUP BY trace, device),
p AS (SELECT * FROM memory_rows WHERE top = 1 AND (allocated_from = 'Total Allocated' OR allocated > 0)),
start AS (SELECT trace, min(ts) AS t0 FROM event WHERE trace IN (SELECT trace FROM d) GROUP BY trace)
SELECT d.device, round(p.allocated / 1073741824.0, 3) AS peak_gib, round((p.ts - s.t0) / 1e6, 3) AS peak_ms,
       (SELECT name FROM event WHERE uid = p.op) AS peak_op, source(p.uid) AS peak_source, d.allocated_from,
       p.allocated AS peak_bytes, p.uid AS peak_uid,
       round(d.peak_reserved_bytes / 1073741824.0, 3) AS peak_reserved_gib, d.peak_reserved_bytes,
       d.first_allocated, d.last_allocated, d.allocations, d.frees, d.never_freed, d.never_freed_bytes, d.trace
FROM d LEFT JOIN p ON p.trace = d.trace AND p.device = d.device LEFT JOIN start s ON s.trace = d.trace
ORDER BY d.trace, d.device;
