-- Roofline points of kernels with FLOPs (their own or their launching op's), in the category of
-- the op that launched them (the chart appends "AND (user's WHERE)").
SELECT uid, trace, name, short_name(name),
       op_category(coalesce((SELECT p.name FROM @schema.event p WHERE p.uid = launcher AND p.kind = 'cpu_op'), name)),
       p_flops, p_bytes, p_gpu_ns, p_peak_tflops, p_peak_tbps, p_peak_dtype, p_peak_units, ''
FROM (SELECT k.*, p.flops AS p_flops, p.bytes AS p_bytes, p.gpu_ns AS p_gpu_ns, p.peak_tflops AS p_peak_tflops,
             p.peak_tbps AS p_peak_tbps, p.peak_dtype AS p_peak_dtype, p.peak_units AS p_peak_units
      FROM perf_rows('@schema') p CROSS JOIN @schema.kernel k ON k.uid = p.uid
      WHERE p.flops IS NOT NULL)
WHERE 1
