-- main vs other through the call tree (TraceLens's TraceDiff diff_stats): one row per GPU kernel / copy / fill of either side, with its op, shapes, time and the lowest common ancestor of the two trees; @top rows
-- The trees are aligned from the roots down, each node's children against its counterpart's by
-- name (tree_diff, docs/reports.md), so an op matches its counterpart whatever kernels it runs.
-- source: trace1 (main) or trace2 (other); cpu_op_*: the op that launched the kernel on its side;
-- kernel_time: the kernel's duration, µs; lowest_common_ancestor_*: the nearest op (or frame)
-- above the kernel that both trees have, named by its uid in main (the same id for both sides'
-- rows); other_uid: the same kernel in the other trace, when both ran it.
WITH d AS MATERIALIZED (SELECT * FROM tree_diff),
rows AS (
  SELECT e.name, o.name AS cpu_op_name, d.cpu_op_uid, d.source, d.uid AS gpu_op_uid, d.other_uid,
         o.input_dims, o.input_types, o.input_strides, o.concrete_inputs, e.dur, e.ts, d.lca_uid, d.lca_other_uid
  FROM d JOIN main.event e ON e.uid = d.uid LEFT JOIN main.event o ON o.uid = d.cpu_op_uid
  WHERE d.source = 'trace1'
  UNION ALL
  SELECT e.name, o.name, d.cpu_op_uid, d.source, d.uid, d.other_uid,
         o.input_dims, o.input_types, o.input_strides, o.concrete_inputs, e.dur, e.ts, d.lca_uid, d.lca_other_uid
  FROM d JOIN other.event e ON e.uid = d.uid LEFT JOIN other.event o ON o.uid = d.cpu_op_uid
  WHERE d.source = 'trace2')
SELECT r.name, r.cpu_op_name, r.cpu_op_uid, r.source, r.gpu_op_uid, r.other_uid, r.input_dims AS "Input Dims",
       r.input_types AS "Input type", r.input_strides AS "Input Strides", r.concrete_inputs AS "Concrete Inputs",
       round(r.dur / 1e3, 3) AS kernel_time, l.name AS lowest_common_ancestor_name,
       r.lca_uid AS lowest_common_ancestor_id, r.lca_other_uid AS lowest_common_ancestor_other_uid
FROM rows r LEFT JOIN main.event l ON l.uid = r.lca_uid
ORDER BY r.lca_uid IS NULL, r.lca_uid, r.source, r.ts, r.gpu_op_uid
LIMIT coalesce(@top, -1);
