-- per rank and step (what `tlsql fleet` stores as fleet.db's fleet_steps): the steps report's wall and GPU ms with the rank, and the step's GPU time as computation, communication and exposed communication
-- The steps report's definition (engine_steps: serving-engine steps, else the ProfilerSteps), one
-- row per (rank, step); start_ms: from the rank's first step. What the step's GPU work was, by the
-- timeline report's rule over that work (gpu_class_of's 'tracelens' rule: communication = a
-- communication library's kernels, computation = the other kernels and memsets): compute_ms, the
-- union of its computation; comm_ms, of its communication; exposed_comm_ms, communication time
-- no computation overlaps. A step's GPU work: for a ProfilerStep, the GPU events of that step (the
-- `step` column: launched inside it, as the steps report and mfu count them); for a serving step,
-- engine_step_gpu. fleet_stragglers compares the ranks per step on these.
WITH s AS (SELECT * FROM engine_steps('main')),
g AS (SELECT trace, step AS iteration, 1 AS profiler, ts, end,
             CASE gpu_class_of(kind, name, 'tracelens') WHEN 'communication' THEN 'comm' WHEN 'memcpy' THEN 'memcpy'
                  ELSE 'comp' END AS type
      FROM gpu WHERE step IS NOT NULL
      UNION ALL
      SELECT e.trace, m.iteration, 0, e.ts, e.end,
             CASE gpu_class_of(e.kind, e.name, 'tracelens') WHEN 'communication' THEN 'comm' WHEN 'memcpy' THEN 'memcpy'
                  ELSE 'comp' END
      FROM engine_step_gpu m JOIN gpu e ON e.uid = m.gpu),
u AS (SELECT trace, iteration, profiler, union_ns(ts, end) FILTER (WHERE type = 'comp') AS comp,
             union_ns(ts, end) FILTER (WHERE type = 'comm') AS comm,
             union_ns(ts, end) FILTER (WHERE type IN ('comp', 'comm')) AS comp_comm
      FROM g GROUP BY trace, iteration, profiler)
SELECT t.rank, s.iteration, s.phase, s.source,
       round((s.ts - min(s.ts) OVER (PARTITION BY s.trace)) / 1e6, 3) AS start_ms, round(s.dur / 1e6, 3) AS wall_ms,
       round(s.gpu_busy / 1e6, 3) AS gpu_busy_ms, round((s.gpu_end - s.gpu_start) / 1e6, 3) AS gpu_span_ms, s.kernels,
       round(coalesce(u.comp, 0) / 1e6, 3) AS compute_ms, round(coalesce(u.comm, 0) / 1e6, 3) AS comm_ms,
       round(coalesce(u.comp_comm - coalesce(u.comp, 0), 0) / 1e6, 3) AS exposed_comm_ms
FROM s JOIN trace t ON t.id = s.trace
LEFT JOIN u ON u.trace = s.trace AND u.iteration = s.iteration AND u.profiler = (s.source = 'profiler_step')
ORDER BY t.rank, s.trace, s.iteration;
