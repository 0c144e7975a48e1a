-- GEMM ops per unique shapes: instances that ran GPU work, GFLOP per call, GPU time, TFLOP/s, TB/s, achieved %, bound, ex_uid (TraceLens's GEMM sheet)
-- The ops that carry a GEMM model of their own (perf_source 'model' / 'inductor') and ran GPU work;
-- gpu_us / mean_us: their GPU time (gpu_time: the union of their kernels, TraceLens's Kernel
-- Time); gflop_per_call: one call's FLOPs; tflops / tbps / achieved_pct / bound: perf_sum's
-- (udf/perf_sum.h), the group's FLOPs over its GPU time, where TraceLens averages each call's
-- rate (docs/reports.md "Column names").
WITH m AS (SELECT uid, name, input_dims, input_types, input_strides, concrete_inputs, flops(uid) AS f,
                  gpu_time(uid) AS ns
           FROM op WHERE op_category(name) LIKE 'GEMM%' AND perf_source(uid) IN ('model', 'inductor'))
SELECT name, input_dims, input_types, count, gflop_per_call, gpu_us, mean_us, round(s ->> 'tflops', 3) AS tflops,
       round(s ->> 'tbps', 4) AS tbps, round(s ->> 'achieved_pct', 2) AS achieved_pct, s ->> 'bound' AS bound, ex_uid
FROM (SELECT name, input_dims, input_types, count(*) AS count, round(max(f) / 1e9, 6) AS gflop_per_call,
             sum(ns) AS ns, round(sum(ns) / 1e3, 3) AS gpu_us, round(avg(ns) / 1e3, 3) AS mean_us, perf_sum(uid) AS s,
             min(uid) AS ex_uid
      FROM m WHERE f IS NOT NULL AND ns > 0
      GROUP BY name, input_dims, input_types, input_strides, concrete_inputs)
ORDER BY ns DESC LIMIT coalesce(@top, 50);
