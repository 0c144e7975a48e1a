-- main vs other through the call tree (TraceLens's TraceDiff diff_stats): one row per GPU kernel / copy / fill of either side, with its op, shapes, time and the lowest common ancestor of the two trees; @top rows
-- The trees are aligned from the roots down, each node's children against its counterpart's by
-- name (tree_diff, docs/reports.md), so an op matches its counterpart whatever kernels it runs.
-- source: trace1 (main) or trace2 (other); cpu_op_*: the op that launched the kernel on its side;
-- kernel_time: the kernel's duration, µs; lowest_common_ancestor_*: the nearest op (or frame)
-- above the kernel that both trees have, named by its uid in main (the same id for both sides'
-- rows); other_uid: the same kernel in the other trace, when both ran it. Rows by ancestor, main's
-- first, then by start (tree_diff hands them over in that order: pos).
SELECT d.name, d.cpu_op_name, d.cpu_op_uid, d.source, d.uid AS gpu_op_uid, d.other_uid,
       coalesce(om.input_dims, oo.input_dims) AS "Input Dims", coalesce(om.input_types, oo.input_types) AS "Input type",
       coalesce(om.input_strides, oo.input_strides) AS "Input Strides",
       coalesce(om.concrete_inputs, oo.concrete_inputs) AS "Concrete Inputs",
       round(d.dur / 1e3, 3) AS kernel_time, d.lca_name AS lowest_common_ancestor_name,
       d.lca_uid AS lowest_common_ancestor_id, d.lca_other_uid AS lowest_common_ancestor_other_uid
FROM tree_diff d
LEFT JOIN main.event om ON d.source = 'trace1' AND om.uid = d.cpu_op_uid
LEFT JOIN other.event oo ON d.source = 'trace2' AND oo.uid = d.cpu_op_uid
ORDER BY d.pos
LIMIT coalesce(@top, -1);
