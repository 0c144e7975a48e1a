-- main vs other through the call tree per (op, shapes): diff_tree_ops summed, the largest |delta_us| first, then a totals row; @top rows, @totals 0 drops the totals row
-- TraceLens's unique-args summary of its diff (get_df_diff_stats_unique_args), with both sides on
-- one row: diff_tree_ops's rows (one per lowest common ancestor) grouped by name (the ops that
-- launched the kernels), the ancestor's name and its input_dims / input_types in main. count: the
-- ancestors (op instances); per side the kernels, their summed time (µs), the GFLOP (diff_tree_ops's
-- flops_trace1/2 summed, / 1e9: each counted op's once) and TFLOP/s = those FLOPs over the kernel
-- time of the ancestors that have them (docs/reports.md, "Column names"); delta_us =
-- trace2 - trace1; speedup = trace1 / trace2 time; ex_lca_uid: the instance whose time changed
-- most (.tree ex_lca_uid shows both trees). The last row, name '(total)', sums every ancestor,
-- also those past @top (default: all rows).
WITH g AS (
  SELECT coalesce(g.ops_trace1, g.ops_trace2) AS name, l.name AS lca_name, l.input_dims, l.input_types, g.lca_uid,
         g.num_kernels_trace1 AS k1, g.num_kernels_trace2 AS k2, g.kernel_time_trace1 AS t1,
         g.kernel_time_trace2 AS t2, g.flops_trace1 AS f1, g.flops_trace2 AS f2
  FROM tree_diff_groups g JOIN main.event l ON l.uid = g.lca_uid),
per AS (SELECT name, lca_name, input_dims, input_types, count(*) AS n, sum(k1) AS k1, sum(k2) AS k2,
               sum(t1) AS t1, sum(t2) AS t2, sum(f1) AS f1, sum(f2) AS f2,
               sum(t1) FILTER (WHERE f1 IS NOT NULL) AS mt1, sum(t2) FILTER (WHERE f2 IS NOT NULL) AS mt2,
               max(abs(t2 - t1)) AS most, lca_uid AS ex
        FROM g GROUP BY name, lca_name, input_dims, input_types),
shown AS (SELECT 0 AS k, * FROM per ORDER BY abs(t2 - t1) DESC, t1 DESC, name, lca_name, input_dims, input_types
          LIMIT CASE WHEN @top = 'all' THEN -1 ELSE coalesce(@top, -1) END),
rows AS (SELECT * FROM shown
         UNION ALL
         SELECT 1, '(total)', NULL, NULL, NULL, n, k1, k2, t1, t2, f1, f2, mt1, mt2, NULL, NULL
         FROM (SELECT count(*) AS n, sum(k1) AS k1, sum(k2) AS k2, sum(t1) AS t1, sum(t2) AS t2, sum(f1) AS f1,
                      sum(f2) AS f2, sum(t1) FILTER (WHERE f1 IS NOT NULL) AS mt1,
                      sum(t2) FILTER (WHERE f2 IS NOT NULL) AS mt2 FROM g)
         WHERE n > 0 AND coalesce(@totals, 1) <> 0)
SELECT name, lca_name AS lowest_common_ancestor_name, input_dims, input_types, n AS count,
       k1 AS num_kernels_trace1, k2 AS num_kernels_trace2,
       round(t1 / 1e3, 3) AS kernel_time_trace1_us, round(t2 / 1e3, 3) AS kernel_time_trace2_us,
       round((t2 - t1) / 1e3, 3) AS delta_us, round(1.0 * t1 / nullif(t2, 0), 3) AS speedup,
       round(f1 / 1e9, 3) AS gflop_trace1, round(f2 / 1e9, 3) AS gflop_trace2,
       round(f1 / nullif(mt1, 0) / 1e3, 3) AS tflops_trace1, round(f2 / nullif(mt2, 0) / 1e3, 3) AS tflops_trace2,
       ex AS ex_lca_uid
FROM rows ORDER BY k, abs(t2 - t1) DESC, t1 DESC, name, lca_name, input_dims, input_types;
