-- per trace: file, rank, devices, span, steps, events per kind, GPU busy % (top kernels and ops: .report kernels / ops; loader repairs: .report health)
-- span: first start to last end of any event, and steps: trace_stats() (counted in the perf pass,
-- which reads every row anyway); GPU busy: the union of kernels, memcpys and memsets
-- over the span of the GPU events (as the timeline report's busy_time / total_time). @schema.:
-- main, or the diff's other trace in the HTML report. modeled_gpu_pct: the share of the counted
-- GPU time (counted_op) in ops with a FLOPs model, what the FLOP/s figures of the other reports
-- cover (the shell notes it on stderr below 50).

WITH st AS (SELECT id AS trace, trace_stats(id, '@schema') AS j FROM @schema.trace),
busy AS (SELECT trace, union_ns(ts, end) AS ns, max(end) - min(ts) AS gpu_span FROM @schema.gpu GROUP BY trace),
devs AS (SELECT trace, group_concat(DISTINCT name) AS devices FROM @schema.device GROUP BY trace),
cover AS (SELECT o.trace, perf_sum(o.uid, '@schema') AS s
          FROM perf_rows('@schema') p CROSS JOIN @schema.event o ON o.uid = p.uid
          WHERE p.counted = 1 AND p.gpu_ns > 0 GROUP BY o.trace)
SELECT t.id AS trace, t.path, t.rank, t.world_size, d.devices,
       round(((s.j ->> 'span_end') - (s.j ->> 'span_start')) / 1e6, 3) AS span_ms,
       s.j ->> 'steps' AS steps, s.j ->> 'first_step' AS first_step, s.j ->> 'last_step' AS last_step,
       s.j ->> 'events' AS events, round(b.ns / 1e6, 3) AS gpu_busy_ms,
       round(100.0 * b.ns / b.gpu_span, 2) AS gpu_busy_pct,
       round(100.0 * (c.s ->> 'modeled_ns') / (c.s ->> 'gpu_ns'), 2) AS modeled_gpu_pct
FROM @schema.trace t LEFT JOIN st s ON s.trace = t.id
LEFT JOIN busy b ON b.trace = t.id LEFT JOIN devs d ON d.trace = t.id LEFT JOIN cover c ON c.trace = t.id
ORDER BY t.id;
