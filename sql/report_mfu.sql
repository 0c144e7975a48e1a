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
-- (step_flops: the ops' FLOPs per step, dtype and units, the dominant dtype and the counted GPU
-- time, from one pass over the perf table and the store; the GROUP BYs that did it sorted every
-- modeled op's row.)
f AS (SELECT trace, step, flops, dtype, units, dtype_flops, peak_tflops, gpu_ns, modeled_ns FROM step_flops('main')),
-- (step_busy: the same union per step as a GROUP BY over gpu_steps, from one pass over the store)
gpu AS (SELECT trace, step, busy_ns AS busy FROM step_busy('main'))
SELECT s.step, round(s.dur / 1e6, 3) AS wall_ms, round(g.busy / 1e6, 3) AS gpu_busy_ms,
       round(100.0 * min(g.busy, s.dur) / s.dur, 2) AS gpu_busy_pct, round(f.flops / 1e12, 6) AS model_tflop,
       round(100.0 * f.modeled_ns / f.gpu_ns, 2) AS modeled_gpu_pct, f.dtype, f.units,
       round(100.0 * f.dtype_flops / f.flops, 1) AS dtype_flops_pct, f.peak_tflops,
       round(f.flops / s.dur / 1e3, 3) AS achieved_tflops, round(100.0 * f.flops / s.dur / 1e3 / f.peak_tflops, 2) AS mfu_pct,
       round(f.flops / g.busy / 1e3, 3) AS busy_tflops, round(100.0 * f.flops / g.busy / 1e3 / f.peak_tflops, 2) AS busy_mfu_pct,
       r.rank, s.trace
FROM steps s JOIN trace r ON r.id = s.trace
LEFT JOIN f ON f.trace = s.trace AND f.step = s.step
LEFT JOIN gpu g ON g.trace = s.trace AND g.step = s.step
WHERE @rank IS NULL OR r.rank = @rank
ORDER BY s.trace, s.step;
