-- per serving-engine step (engine_step: vLLM step annotations, else worker frames): phase, tokens, requests, wall and GPU ms, kernels, graph replays; @top rows
-- gpu_busy_ms: the union of the GPU work launched inside the step (graph replays included);
-- start_ms: from the trace's first step. docs/inference.md.
SELECT s.trace, s.iteration, s.phase, s.tokens, s.prefill_requests, s.decode_requests, s.source,
       round((s.ts - min(s.ts) OVER (PARTITION BY s.trace)) / 1e6, 3) AS start_ms, round(s.dur / 1e6, 3) AS wall_ms,
       round((SELECT union_ns(g.ts, g.ts + g.dur) FROM launched(s.uid) g) / 1e6, 3) AS gpu_busy_ms,
       (SELECT count(*) FROM launched(s.uid) g WHERE g.kind = 'kernel') AS kernels,
       (SELECT count(*) FROM descendants(s.uid) d WHERE d.kind = 'runtime' AND is_graph_launch(d.name)) AS graph_replays
FROM engine_step s
ORDER BY s.trace, s.iteration
LIMIT coalesce(@top, 1000);
