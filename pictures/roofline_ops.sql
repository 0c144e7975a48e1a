-- Roofline points of ops: those with a FLOPs model (the chart appends "AND (user's WHERE)").
SELECT uid, trace, name, short_name(name), op_category(name), perf(uid) FROM op
WHERE flops(uid) IS NOT NULL
