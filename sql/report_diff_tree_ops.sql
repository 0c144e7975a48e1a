-- main vs other per matched op (the lowest common ancestors of tree_diff): both sides' kernels, GPU time, FLOPs and achieved %, speedup; @top rows
-- One row per lowest common ancestor (TraceLens's per-LCA summary of diff_stats): name, the ops
-- that launched its kernels (trace1's, else trace2's, ' | ' between several); per side the number
-- of kernels, their summed time (µs) and names in start order; speedup = trace1 / trace2 time;
-- delta = trace2 - trace1; flops_* / achieved_pct_* of the ancestor on each side (its own model, or
-- the sum beneath it: docs/perf_models.md). Sorted by trace1 time, as TraceLens.
WITH d AS MATERIALIZED (SELECT * FROM tree_diff WHERE lca_uid IS NOT NULL),
k AS MATERIALIZED (
  SELECT d.lca_uid, d.lca_other_uid, d.source, d.uid, e.dur, e.ts, o.name AS op FROM d
  JOIN main.event e ON e.uid = d.uid LEFT JOIN main.event o ON o.uid = d.cpu_op_uid WHERE d.source = 'trace1'
  UNION ALL
  SELECT d.lca_uid, d.lca_other_uid, d.source, d.uid, e.dur, e.ts, o.name FROM d
  JOIN other.event e ON e.uid = d.uid LEFT JOIN other.event o ON o.uid = d.cpu_op_uid WHERE d.source = 'trace2'),
g AS MATERIALIZED (
  SELECT lca_uid, max(lca_other_uid) AS lca_other_uid,
         count(*) FILTER (WHERE source = 'trace1') AS n1, count(*) FILTER (WHERE source = 'trace2') AS n2,
         coalesce(sum(dur) FILTER (WHERE source = 'trace1'), 0) AS t1, coalesce(sum(dur) FILTER (WHERE source = 'trace2'), 0) AS t2
  FROM k GROUP BY lca_uid ORDER BY t1 DESC, lca_uid),  -- the output's order: sorting it last moved every row's name arrays
ops AS MATERIALIZED (
  SELECT lca_uid, source, group_concat(op, ' | ') AS ops
  FROM (SELECT DISTINCT lca_uid, source, op FROM k WHERE op IS NOT NULL ORDER BY lca_uid, source, op)
  GROUP BY lca_uid, source),
names AS MATERIALIZED (
  SELECT lca_uid, json_group_array((SELECT name FROM main.event WHERE uid = k.uid)) FILTER (WHERE source = 'trace1') AS names1,
         json_group_array((SELECT name FROM other.event WHERE uid = k.uid)) FILTER (WHERE source = 'trace2') AS names2
  FROM (SELECT * FROM k ORDER BY lca_uid, ts) k GROUP BY lca_uid)
SELECT coalesce(o1.ops, o2.ops) AS name, l.name AS lowest_common_ancestor_name, g.lca_uid AS lowest_common_ancestor_id,
       g.lca_other_uid AS lowest_common_ancestor_other_uid, l.input_dims AS "Input Dims", l.input_types AS "Input type",
       round(g.t1 / 1e3, 3) AS kernel_time_trace1_us, round(g.t2 / 1e3, 3) AS kernel_time_trace2_us,
       g.n1 AS num_kernels_trace1, g.n2 AS num_kernels_trace2, n.names1 AS kernel_names_trace1,
       n.names2 AS kernel_names_trace2, round(1.0 * g.t1 / nullif(g.t2, 0), 3) AS "speedup (trace1/trace2)",
       round((g.t2 - g.t1) / 1e3, 3) AS "delta_us (trace2 - trace1)",
       flops(g.lca_uid) AS flops_trace1, flops(g.lca_other_uid, 'other') AS flops_trace2,
       round(achieved_pct(g.lca_uid), 2) AS achieved_pct_trace1, round(achieved_pct(g.lca_other_uid, 'other'), 2) AS achieved_pct_trace2
FROM g JOIN names n ON n.lca_uid = g.lca_uid JOIN main.event l ON l.uid = g.lca_uid
LEFT JOIN ops o1 ON o1.lca_uid = g.lca_uid AND o1.source = 'trace1'
LEFT JOIN ops o2 ON o2.lca_uid = g.lca_uid AND o2.source = 'trace2'
LIMIT coalesce(@top, -1);
