-- per serving-engine step (engine_step: step annotations, else worker frames, else the host loop): phase, tokens, requests, wall and GPU ms, kernels, graph replays; @top rows
-- gpu_busy_ms: the union of the GPU work launched inside the step (engine_step_gpu; graph replays
-- included); graph_replays: the graph launch calls among its host events (engine_step_member);
-- start_ms: from the trace's first step. docs/inference.md.
WITH s AS MATERIALIZED (SELECT * FROM engine_step),
g AS (SELECT x.trace, x.iteration, union_ns(e.ts, e.end) AS busy, count(*) FILTER (WHERE e.kind = 'kernel') AS kernels
      FROM engine_step_gpu x JOIN event e ON e.uid = x.gpu GROUP BY x.trace, x.iteration),
r AS (SELECT m.trace, m.iteration, count(*) AS launches
      FROM engine_step_member m JOIN event e ON e.uid = m.uid
      WHERE e.kind = 'runtime' AND is_graph_launch(e.name) GROUP BY m.trace, m.iteration)
SELECT s.trace, s.iteration, s.phase, s.tokens, s.prefill_requests, s.decode_requests, s.source,
       round((s.ts - min(s.ts) OVER (PARTITION BY s.trace)) / 1e6, 3) AS start_ms, round(s.dur / 1e6, 3) AS wall_ms,
       round(coalesce(g.busy, 0) / 1e6, 3) AS gpu_busy_ms, coalesce(g.kernels, 0) AS kernels,
       coalesce(r.launches, 0) AS graph_replays
FROM s LEFT JOIN g ON g.trace = s.trace AND g.iteration = s.iteration
       LEFT JOIN r ON r.trace = s.trace AND r.iteration = s.iteration
ORDER BY s.trace, s.iteration
LIMIT coalesce(@top, 1000);
