-- CONV ops per unique shapes: count, GFLOPs, GPU time, TFLOP/s, TB/s, achieved %, bound, ex_uid (TraceLens's CONV sheet)
WITH m AS (SELECT uid, name, input_dims, input_types, input_strides, concrete_inputs, flops(uid) AS f, bytes(uid) AS b,
                  gpu_time(uid) AS ns, achieved_pct(uid) AS pct, bound(uid) AS bnd
           FROM op WHERE op_category(name) LIKE 'CONV%' AND perf_source(uid) IN ('model', 'inductor'))
SELECT name, input_dims, input_types, count(*) AS count, round(max(f) / 1e9, 6) AS gflops,
       round(sum(ns) / 1e3, 3) AS gpu_us, round(avg(ns) / 1e3, 3) AS mean_us,
       round(avg(f / ns) / 1e3, 3) AS tflops, round(avg(b / ns) / 1e3, 4) AS tbps,
       round(avg(pct), 2) AS achieved_pct, max(bnd) AS bound, min(uid) AS ex_uid
FROM m WHERE f IS NOT NULL
GROUP BY name, input_dims, input_types, input_strides, concrete_inputs ORDER BY sum(ns) DESC LIMIT coalesce(@top, 50);
