-- CONV ops per unique shapes: instances that ran GPU work, GFLOP per call, GPU time, TFLOP/s, TB/s, achieved %, bound, ex_uid (TraceLens's CONV sheet); @top rows
-- The CONV rows of the view op_sheet (sql/views.sql says what each column is).
SELECT name, input_dims, input_types, count, gflop_per_call, gpu_us, mean_us, tflops, tbps, achieved_pct, bound, ex_uid
FROM op_sheet WHERE family = 'CONV'
ORDER BY gpu_ns DESC LIMIT coalesce(@top, 50);
