-- per serving-engine step (engine_step: vLLM step annotations, else worker frames): phase, tokens, requests, wall and GPU ms, kernels, graph replays; @top rows
-- gpu_busy_ms: the union of the GPU work launched inside the step (graph replays included);
-- start_ms: from the trace's first step. docs/inference.md.
-- (Each step's GPU work is walked once, for its busy time and its kernels.)
WITH s AS MATERIALIZED (SELECT * FROM engine_step),
g AS (SELECT s.uid, union_ns(l.ts, l.ts + l.dur) AS busy, count(*) FILTER (WHERE l.kind = 'kernel') AS kernels
      FROM s CROSS JOIN launched(s.uid) l GROUP BY s.uid)
SELECT s.trace, s.iteration, s.phase, s.tokens, s.prefill_requests, s.decode_requests, s.source,
       round((s.ts - min(s.ts) OVER (PARTITION BY s.trace)) / 1e6, 3) AS start_ms, round(s.dur / 1e6, 3) AS wall_ms,
       round(coalesce(g.busy, 0) / 1e6, 3) AS gpu_busy_ms, coalesce(g.kernels, 0) AS kernels,
       (SELECT count(*) FROM descendants(s.uid) d WHERE d.kind = 'runtime' AND is_graph_launch(d.name)) AS graph_replays
FROM s LEFT JOIN g ON g.uid = s.uid
ORDER BY s.trace, s.iteration
LIMIT coalesce(@top, 1000);
