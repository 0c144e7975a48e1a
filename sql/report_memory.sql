-- per device: peak allocated bytes, when, the op and python frame there; per op: allocations and frees; the allocations never freed ([memory] events, profile_memory=True); @top rows
-- Three result sets (each row's trace last). 1) per device: peak_bytes (the largest Total Allocated the trace
-- records), peak_ts / peak_uid (its first [memory] event at that total), peak_op (the nearest op
-- above it) and peak_source (source(): the user's frame), peak_reserved_bytes, first / last
-- allocated, allocations and frees, and never_freed (allocations with no later free of their
-- address in the trace) count and bytes. 2) per device and op (the nearest op above each event):
-- allocations, gross bytes allocated, bytes freed, net. 3) the largest never-freed allocations.
DROP TABLE IF EXISTS temp.memory_rows;
CREATE TEMP TABLE memory_rows AS
SELECT m.*, (SELECT a.uid FROM ancestors(m.uid) a WHERE a.kind = 'cpu_op' LIMIT 1) AS op,
       m.bytes > 0 AND lead(m.bytes) OVER (PARTITION BY m.trace, m.device, m.addr ORDER BY m.ts, m.uid) IS NULL
         AS never_freed
FROM memory_event m;
SELECT d.device, p.allocated AS peak_bytes, p.ts AS peak_ts, p.uid AS peak_uid,
       (SELECT name FROM event WHERE uid = p.op) AS peak_op, source(p.uid) AS peak_source,
       d.peak_reserved_bytes, d.first_allocated, d.last_allocated, d.allocations, d.frees, d.never_freed,
       d.never_freed_bytes, d.trace
FROM (SELECT trace, device, max(reserved) AS peak_reserved_bytes,
             (SELECT allocated FROM memory_rows f WHERE f.trace = m.trace AND f.device = m.device
              ORDER BY ts, uid LIMIT 1) AS first_allocated,
             (SELECT allocated FROM memory_rows f WHERE f.trace = m.trace AND f.device = m.device
              ORDER BY ts DESC, uid DESC LIMIT 1) AS last_allocated,
             count(*) FILTER (WHERE bytes > 0) AS allocations, count(*) FILTER (WHERE bytes < 0) AS frees,
             count(*) FILTER (WHERE never_freed) AS never_freed,
             coalesce(sum(bytes) FILTER (WHERE never_freed), 0) AS never_freed_bytes
      FROM memory_rows m GROUP BY trace, device) d
CROSS JOIN memory_rows p ON p.uid = (SELECT uid FROM memory_rows x WHERE x.trace = d.trace AND x.device = d.device
                                     ORDER BY allocated DESC, ts, uid LIMIT 1)
ORDER BY d.trace, d.device;
SELECT m.device, coalesce(o.name, '(no op)') AS op, count(*) FILTER (WHERE m.bytes > 0) AS allocations,
       coalesce(sum(m.bytes) FILTER (WHERE m.bytes > 0), 0) AS gross_bytes,
       -coalesce(sum(m.bytes) FILTER (WHERE m.bytes < 0), 0) AS freed_bytes, coalesce(sum(m.bytes), 0) AS net_bytes,
       m.trace
FROM memory_rows m LEFT JOIN event o ON o.uid = m.op
GROUP BY m.trace, m.device, o.name
ORDER BY gross_bytes DESC LIMIT coalesce(@top, 50);
SELECT m.device, m.uid, m.ts, m.bytes, (SELECT name FROM event WHERE uid = m.op) AS op, source(m.uid) AS source,
       m.trace
FROM memory_rows m WHERE m.never_freed
ORDER BY m.bytes DESC, m.uid LIMIT coalesce(@top, 50);
