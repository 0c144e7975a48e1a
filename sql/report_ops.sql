-- per op and category: count, GPU time and share, GFLOPs, TFLOP/s, TB/s, FLOPs/byte, achieved %, bound (TraceLens ops summary); @top rows, @iteration / @phase
-- @iteration / @phase: only the ops inside those serving-engine steps (engine_step_member; phase 'prefill',
-- 'decode' or 'mixed'). Unfiltered this is op_summary's rollup (the view, for queries): keep the
-- two alike; tests/shell/engine_steps.py checks they give the same rows.
-- (One grouping pass over the scan: the total for gpu_pct is a window over the groups, where a
-- materialized CTE read twice cost a copy of every counted row and twice the time.)
SELECT name, category, count(*) AS count, round(sum(ns) / 1e3, 3) AS gpu_us,
       round(100.0 * sum(ns) / sum(sum(ns)) OVER (), 2) AS gpu_pct,
       round(sum(f) / 1e9, 6) AS gflops, round(sum(f) / sum(ns) / 1e3, 3) AS tflops,
       round(sum(b) / sum(ns) / 1e3, 4) AS tbps, round(sum(f) / sum(b), 3) AS flops_per_byte,
       round(avg(pct), 2) AS achieved_pct,
       CASE WHEN sum(b) > 0 AND avg(ridge) IS NOT NULL
            THEN CASE WHEN sum(f) / sum(b) >= avg(ridge) THEN 'compute' ELSE 'memory' END END AS bound
FROM (SELECT o.name, op_category(o.name) AS category, p.gpu_ns AS ns, p.flops AS f, p.bytes AS b,
             p.achieved_pct AS pct, p.peak_tflops / p.peak_tbps AS ridge
      FROM perf_rows('main') p CROSS JOIN event o ON o.uid = p.uid
      WHERE p.counted = 1
        AND ((@iteration IS NULL AND @phase IS NULL)
             OR o.uid IN (SELECT uid FROM engine_step_member
                          WHERE (@iteration IS NULL OR iteration = @iteration) AND (@phase IS NULL OR phase = @phase))))
GROUP BY name, category
ORDER BY gpu_us DESC LIMIT coalesce(@top, 50);
