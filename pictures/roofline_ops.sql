-- Roofline points of ops: those with a FLOPs model of their own, not wrappers summing the ops
-- beneath them (the chart appends "AND (user's WHERE)", which reads op's columns: the numbers
-- come from one scan of perf_rows under names no op column has). Label and category are NULL:
-- the chart works them out once per name (short_name, op_category). The last column: the op's
-- shapes, which with its name make the labelled groups. The source test comes first: SQLite tests
-- the terms in the order written, and a row's source is known without working out its FLOPs.
SELECT uid, trace, name, NULL, NULL, p_flops, p_bytes, p_gpu_ns, p_peak_tflops,
       p_peak_tbps, p_peak_dtype, p_peak_units, coalesce(input_dims, '') || coalesce(input_types, '')
FROM (SELECT o.*, p.flops AS p_flops, p.bytes AS p_bytes, p.gpu_ns AS p_gpu_ns, p.peak_tflops AS p_peak_tflops,
             p.peak_tbps AS p_peak_tbps, p.peak_dtype AS p_peak_dtype, p.peak_units AS p_peak_units
      FROM perf_rows('@schema') p CROSS JOIN @schema.op o ON o.uid = p.uid
      WHERE p.source IN ('model', 'inductor') AND p.flops IS NOT NULL)
WHERE 1
