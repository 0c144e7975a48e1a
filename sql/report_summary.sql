-- per trace: file, rank, devices, span, steps, events per kind, GPU busy %; then the top 10 kernels and ops by GPU time, and the health rows
-- span: first start to last end of any event; GPU busy: the union of kernels, memcpys and memsets
-- over the span of the GPU events (as the timeline report's busy_time / total_time).
WITH kinds AS (SELECT trace, json_group_object(kind, n) AS events
               FROM (SELECT trace, kind, count(*) AS n FROM event GROUP BY kind, trace ORDER BY trace, n DESC, kind DESC)
               GROUP BY trace),
span AS (SELECT trace, min(ts) AS t0, max(end) AS t1, count(DISTINCT step) AS steps, min(step) AS first_step,
                max(step) AS last_step
         FROM event WHERE ts IS NOT NULL GROUP BY trace),
busy AS (SELECT trace, union_ns(ts, end) AS ns, max(end) - min(ts) AS gpu_span FROM gpu GROUP BY trace),
devs AS (SELECT trace, group_concat(DISTINCT name) AS devices FROM device GROUP BY trace)
SELECT t.id AS trace, t.path, t.rank, t.world_size, d.devices, round((s.t1 - s.t0) / 1e6, 3) AS span_ms,
       s.steps, s.first_step, s.last_step, k.events, round(b.ns / 1e6, 3) AS gpu_busy_ms,
       round(100.0 * b.ns / b.gpu_span, 2) AS gpu_busy_pct
FROM trace t LEFT JOIN span s ON s.trace = t.id LEFT JOIN kinds k ON k.trace = t.id
LEFT JOIN busy b ON b.trace = t.id LEFT JOIN devs d ON d.trace = t.id ORDER BY t.id;
SELECT name AS kernel, count(*) AS count, round(sum(dur) / 1e3, 3) AS total_us,
       round(100.0 * sum(dur) / (SELECT sum(dur) FROM kernel), 2) AS pct_of_kernel_time
FROM kernel GROUP BY name ORDER BY sum(dur) DESC LIMIT 10;
SELECT name AS op, category, count(*) AS count, round(sum(gpu_ns) / 1e3, 3) AS gpu_us
FROM counted_op GROUP BY name, category ORDER BY sum(gpu_ns) DESC LIMIT 10;
SELECT t.path, h."check", h.count, h.example_uid, h.detail
FROM health h JOIN trace t ON t.id = h.trace ORDER BY t.id, h."check";
