-- Roofline points of ops: those with a FLOPs model of their own, not wrappers summing the ops
-- beneath them (the chart appends "AND (user's WHERE)").
SELECT uid, trace, name, short_name(name), op_category(name), flops(uid), bytes(uid), gpu_time(uid),
       peak_tflops(uid), peak_tbps(uid), peak_dtype(uid), peak_units(uid)
FROM op
WHERE flops(uid) IS NOT NULL AND perf_source(uid) IN ('model', 'inductor')
