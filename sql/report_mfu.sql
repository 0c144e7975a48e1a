-- per ProfilerStep: model FLOPs (the counted ops), wall and GPU busy ms, achieved TFLOP/s and model FLOPs utilisation (% of the GPU's peak for the step's dominant dtype); @rank
-- model_tflop: the FLOPs of counted_op (each op's own model, counted once) whose host start is in
-- the step. dtype / units: the dtype and units (matrix / vector) holding most of those FLOPs, and
-- peak_tflops that GPU's peak for them (gpu_spec); dtype_flops_pct their share. mfu_pct: all the
-- step's model FLOPs per wall second (the ProfilerStep's duration) against that peak;
-- busy_mfu_pct: the same per second of GPU busy time (the union of the GPU work the step
-- launched). modeled_gpu_pct: the share of the step's counted GPU time (counted_op: ops and the
-- launch calls that are their own launchers, each GPU ns once) in ops with a FLOPs model; the
-- rest adds no FLOPs (custom kernels, unrecorded shapes: MFU undercounts them; communication has
-- none to count). The shell says so on stderr below 50.
-- gpu_busy_pct: gpu_busy_ms as % of wall_ms, a share, so capped at 100: the GPU work a step
-- launches can run past the step's end (the last kernels of an overlapped pipeline step), and its
-- busy time then exceeds the step's wall time; gpu_busy_ms and busy_mfu_pct keep all of it, and
-- the note (about_report.sql, also in `notes`) says which steps were capped and by how much.
-- docs/reports.md.
WITH steps AS (
  SELECT e.trace, e.step, e.ts, e.dur FROM event e
  -- (GLOB first: writing every op's step as text to compare cost more than the rest of the scan)
  WHERE e.kind IN ('annotation', 'cpu_op') AND e.step IS NOT NULL AND e.name GLOB 'ProfilerStep#*'
    AND e.name = 'ProfilerStep#' || e.step),
-- (The ops' FLOPs summed per step, dtype and units in one grouping pass: the step's total and its
-- dominant dtype come from those few rows.)
ops AS MATERIALIZED (
  SELECT o.trace, o.step, p.peak_dtype AS dtype, p.peak_units AS units, sum(p.flops) AS f, max(p.peak_tflops) AS peak
  FROM perf_rows('main') p CROSS JOIN op o ON o.uid = p.uid
  WHERE p.counted = 1 AND o.step IS NOT NULL AND p.flops > 0
  GROUP BY o.trace, o.step, p.peak_dtype, p.peak_units),
total AS (SELECT trace, step, sum(f) AS f FROM ops GROUP BY trace, step),
dominant AS (
  SELECT * FROM (SELECT trace, step, dtype, units, f, peak,
                        row_number() OVER (PARTITION BY trace, step ORDER BY f DESC, dtype, units) AS r
                 FROM ops)
  WHERE r = 1),
-- (step_busy: the same union per step as a GROUP BY over gpu_steps, from one pass over the store)
gpu AS (SELECT trace, step, busy_ns AS busy FROM step_busy('main')),
cover AS (
  SELECT o.trace, o.step, perf_sum(o.uid) AS s
  FROM perf_rows('main') p CROSS JOIN event o ON o.uid = p.uid
  WHERE p.counted = 1 AND p.gpu_ns > 0 AND o.step IS NOT NULL
  GROUP BY o.trace, o.step)
SELECT s.step, round(s.dur / 1e6, 3) AS wall_ms, round(g.busy / 1e6, 3) AS gpu_busy_ms,
       round(100.0 * min(g.busy, s.dur) / s.dur, 2) AS gpu_busy_pct, round(t.f / 1e12, 6) AS model_tflop,
       round(100.0 * (c.s ->> 'modeled_ns') / (c.s ->> 'gpu_ns'), 2) AS modeled_gpu_pct, d.dtype, d.units,
       round(100.0 * d.f / t.f, 1) AS dtype_flops_pct, d.peak AS peak_tflops,
       round(t.f / s.dur / 1e3, 3) AS achieved_tflops, round(100.0 * t.f / s.dur / 1e3 / d.peak, 2) AS mfu_pct,
       round(t.f / g.busy / 1e3, 3) AS busy_tflops, round(100.0 * t.f / g.busy / 1e3 / d.peak, 2) AS busy_mfu_pct,
       r.rank, s.trace
FROM steps s JOIN trace r ON r.id = s.trace
LEFT JOIN total t ON t.trace = s.trace AND t.step = s.step
LEFT JOIN dominant d ON d.trace = s.trace AND d.step = s.step
LEFT JOIN gpu g ON g.trace = s.trace AND g.step = s.step
LEFT JOIN cover c ON c.trace = s.trace AND c.step = s.step
WHERE @rank IS NULL OR r.rank = @rank
ORDER BY s.trace, s.step;
