-- per device: peak allocated bytes, when, the op and python frame there, reserved peak, allocations, frees, never freed ([memory] events, profile_memory=True; memory_ops, memory_leaks: per op, never freed)
-- peak_bytes: the largest Total Allocated the trace records; peak_ts / peak_uid: its first
-- [memory] event at that total; peak_op: the nearest op above it; peak_source: source(), the
-- user's frame; never_freed: allocations with no later free of their address in the trace
-- (count, bytes). The row's trace is last.
DROP TABLE IF EXISTS temp.memory_rows;
CREATE TEMP TABLE memory_rows AS SELECT * FROM memory_alloc;
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
