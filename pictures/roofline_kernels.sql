-- Roofline points of kernels with FLOPs (their own or their launching op's), in the category of
-- the op that launched them (the chart appends "AND (user's WHERE)").
SELECT uid, trace, name, short_name(name),
       op_category(coalesce((SELECT p.name FROM event p WHERE p.uid = kernel.launcher AND p.kind = 'cpu_op'), name)),
       flops(uid), bytes(uid), gpu_time(uid), peak_tflops(uid), peak_tbps(uid), peak_dtype(uid), peak_units(uid)
FROM kernel
WHERE flops(uid) IS NOT NULL
