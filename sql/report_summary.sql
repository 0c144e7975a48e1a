-- per trace: file, rank, devices, span, steps, events per kind, GPU busy %; then the top 10 kernels and ops by GPU time, and the health rows
-- span: first start to last end of any event, and steps: trace_stats() (counted in the perf pass,
-- which reads every row anyway); GPU busy: the union of kernels, memcpys and memsets
-- over the span of the GPU events (as the timeline report's busy_time / total_time).
WITH st AS (SELECT id AS trace, trace_stats(id) AS j FROM trace),
busy AS (SELECT trace, union_ns(ts, end) AS ns, max(end) - min(ts) AS gpu_span FROM gpu GROUP BY trace),
devs AS (SELECT trace, group_concat(DISTINCT name) AS devices FROM device GROUP BY trace)
SELECT t.id AS trace, t.path, t.rank, t.world_size, d.devices,
       round(((s.j ->> 'span_end') - (s.j ->> 'span_start')) / 1e6, 3) AS span_ms,
       s.j ->> 'steps' AS steps, s.j ->> 'first_step' AS first_step, s.j ->> 'last_step' AS last_step,
       s.j ->> 'events' AS events, round(b.ns / 1e6, 3) AS gpu_busy_ms,
       round(100.0 * b.ns / b.gpu_span, 2) AS gpu_busy_pct
FROM trace t LEFT JOIN st s ON s.trace = t.id
LEFT JOIN busy b ON b.trace = t.id LEFT JOIN devs d ON d.trace = t.id ORDER BY t.id;
SELECT name AS kernel, count(*) AS count, round(sum(dur) / 1e3, 3) AS total_us,
       round(100.0 * sum(dur) / (SELECT sum(dur) FROM kernel), 2) AS pct_of_kernel_time
FROM kernel GROUP BY name ORDER BY sum(dur) DESC LIMIT 10;
SELECT name AS op, category, count(*) AS count, round(sum(gpu_ns) / 1e3, 3) AS gpu_us
FROM counted_op GROUP BY name, category ORDER BY sum(gpu_ns) DESC LIMIT 10;
SELECT t.path, h."check", h.count, h.example_uid, h.detail
FROM health h JOIN trace t ON t.id = h.trace ORDER BY t.id, h."check";
