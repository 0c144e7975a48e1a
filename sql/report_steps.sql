-- per serving-engine step (engine_step: step annotations, else worker frames, else the host loop; else the trace's ProfilerSteps): phase, tokens, requests, wall, GPU busy and span ms, kernels, graph replays; @top rows
-- gpu_busy_ms: the union of the GPU work launched inside the step (engine_step_gpu; graph replays
-- included); gpu_span_ms: from that work's first start to its last end (NULL: none; more than
-- wall_ms when the GPU runs behind the host); graph_replays: the graph launch calls among its host
-- events (engine_step_member). A trace with no serving step shows its ProfilerSteps (source
-- 'profiler_step', iteration N of ProfilerStep#N; their GPU work is what the step's ops launched,
-- as the mfu report counts it). start_ms: from the trace's first step. One pass (engine_steps,
-- udf/analysis/engine_steps.h). docs/inference.md.
SELECT trace, iteration, phase, tokens, prefill_requests, decode_requests, source,
       round((ts - min(ts) OVER (PARTITION BY trace)) / 1e6, 3) AS start_ms, round(dur / 1e6, 3) AS wall_ms,
       round(gpu_busy / 1e6, 3) AS gpu_busy_ms, round((gpu_end - gpu_start) / 1e6, 3) AS gpu_span_ms, kernels,
       graph_replays
FROM engine_steps('main')
ORDER BY trace, iteration
LIMIT coalesce(@top, 1000);
