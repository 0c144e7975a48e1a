-- per rank: idle, compute and non-compute GPU time in µs and % of the kernel span (HTA temporal breakdown); @steps @rank
-- HTA's get_temporal_breakdown: GPU events = kernels, memcpys, memsets; kernel_time = first start to
-- last end; idle = kernel_time - their union; compute = union of computation kernels (not nccl,
-- not memcpy / memset: gpu_class_of(kind, name, 'hta')); non_compute = the rest. @steps: 'complete' (default: every ProfilerStep
-- but the last, as HTA's TraceAnalysis reads traces), 'all', or a step number. @rank: one rank.
WITH sel AS (SELECT g.trace, g.ts, g.end AS e_end,
                    gpu_class_of(g.kind, g.name, 'hta') = 'compute' AS compute
             FROM gpu_steps g
             WHERE (@rank IS NULL OR g.rank = @rank)
               AND CASE coalesce(@steps, 'complete')
                     WHEN 'all' THEN 1
                     WHEN 'complete' THEN g.complete
                     ELSE g.step = @steps END),
m AS (SELECT trace, max(e_end) - min(ts) AS span, union_ns(ts, e_end) AS busy,
             union_ns(ts, e_end) FILTER (WHERE compute) AS comp
      FROM sel GROUP BY trace)
SELECT t.rank, (span - busy) / 1e3 AS "idle_time(us)", comp / 1e3 AS "compute_time(us)",
       (busy - comp) / 1e3 AS "non_compute_time(us)", span / 1e3 AS "kernel_time(us)",
       round(100.0 * (span - busy) / span, 2) AS idle_time_pctg, round(100.0 * comp / span, 2) AS compute_time_pctg,
       round(100.0 * (busy - comp) / span, 2) AS non_compute_time_pctg
FROM m JOIN trace t ON t.id = m.trace ORDER BY t.rank, t.id;
