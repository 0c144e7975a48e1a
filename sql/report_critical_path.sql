-- critical path of one annotation instance (HTA's critical_path_analysis): us and % of the path per bound_by class; @annotation (default 'ProfilerStep'), @instance (from 0), @rank
-- The path's edges are critical_path(annotation, instance, trace): one row per edge, in order
-- (docs/reports.md). cpu_bound: host ops and calls; gpu_compute_bound / gpu_communication_bound:
-- GPU work; gpu_kernel_launch_overhead: a launch's wait for an idle stream; gpu_kernel_kernel_overhead:
-- gaps between GPU work on a stream. Dependencies and synchronizations weigh nothing.
WITH p AS MATERIALIZED (
  SELECT bound_by, dur FROM critical_path(
    coalesce(@annotation, 'ProfilerStep'), coalesce(@instance, 0),
    (SELECT min(id) FROM trace WHERE @rank IS NULL OR rank = @rank)))
SELECT bound_by, round(sum(dur) / 1e3, 3) AS us, round(100.0 * sum(dur) / (SELECT sum(dur) FROM p), 2) AS pct,
       count(*) AS edges
FROM p WHERE bound_by <> ''
GROUP BY bound_by
ORDER BY sum(dur) DESC, bound_by;
