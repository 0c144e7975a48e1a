-- per rank and step (what `tlsql fleet` stores as fleet.db's fleet_steps): the steps report's rows with the rank instead of the trace id
-- The steps report's definition (engine_steps: serving-engine steps, else the ProfilerSteps),
-- one row per (rank, step). start_ms: from the rank's first step. fleet_summary and
-- fleet_stragglers compare ranks on wall_ms and gpu_busy_ms.
SELECT t.rank, s.iteration, s.phase, s.source,
       round((s.ts - min(s.ts) OVER (PARTITION BY s.trace)) / 1e6, 3) AS start_ms, round(s.dur / 1e6, 3) AS wall_ms,
       round(s.gpu_busy / 1e6, 3) AS gpu_busy_ms, round((s.gpu_end - s.gpu_start) / 1e6, 3) AS gpu_span_ms, s.kernels
FROM engine_steps('main') s JOIN trace t ON t.id = s.trace
ORDER BY t.rank, s.trace, s.iteration;
