-- GEMM ops per unique shapes: instances that ran GPU work, GFLOP per call, GPU time, TFLOP/s, TB/s, achieved %, bound, ex_uid (TraceLens's GEMM sheet), and GEMM kernels under custom ops (kernel, FLOPs NULL, note); @top rows
-- The GEMM rows of the view op_sheet (sql/views.sql says what each column is): the modeled ops per
-- shape, and GEMM kernels under ops of category other or under no op (a custom autograd Function, a
-- record_function annotation), per launching work and kernel, FLOPs NULL and why in note.
SELECT name, input_dims, input_types, count, gflop_per_call, gpu_us, mean_us, tflops, tbps, achieved_pct, bound, ex_uid,
       kernel, note
FROM op_sheet WHERE family = 'GEMM'
ORDER BY gpu_ns DESC LIMIT coalesce(@top, 50);
