-- main vs other per matched op (the lowest common ancestors of tree_diff): both sides' kernels, GPU time, FLOPs and achieved %, speedup; @top rows (per op and shapes: diff_tree_summary)
-- One row per lowest common ancestor (TraceLens's per-LCA summary of diff_stats): name, what
-- launched its kernels (trace1's, else trace2's, ' | ' between several, most kernel time first: the
-- op above each kernel, else its launch call; a graph replay's: its graph launch, and the op it was
-- captured under when attributed, 'cudaGraphLaunch > aten::mm'; docs/reports.md); input_dims /
-- input_types: the ancestor's in main; per side the number of kernels, their summed time (µs) and
-- names in start order; speedup = trace1 / trace2 time; delta_us = trace2 - trace1;
-- flops_trace1/2: the FLOPs of the counted ops whose longest kernel is in the row (an op's FLOPs
-- go down to where its work ran, past a helper kernel matched elsewhere: docs/reports.md);
-- achieved_pct_trace1/2: the achieved % of the op giving the most of them. Column names are plain
-- identifiers (SQL, pandas). Sorted by trace1 time, as TraceLens (tree_diff_groups hands the
-- groups over in that order).
SELECT coalesce(g.ops_trace1, g.ops_trace2) AS name, l.name AS lowest_common_ancestor_name,
       g.lca_uid AS lowest_common_ancestor_id, g.lca_other_uid AS lowest_common_ancestor_other_uid,
       l.input_dims AS input_dims, l.input_types AS input_types,
       round(g.kernel_time_trace1 / 1e3, 3) AS kernel_time_trace1_us, round(g.kernel_time_trace2 / 1e3, 3) AS kernel_time_trace2_us,
       g.num_kernels_trace1, g.num_kernels_trace2, g.kernel_names_trace1, g.kernel_names_trace2,
       round(1.0 * g.kernel_time_trace1 / nullif(g.kernel_time_trace2, 0), 3) AS speedup,
       round((g.kernel_time_trace2 - g.kernel_time_trace1) / 1e3, 3) AS delta_us,
       g.flops_trace1, g.flops_trace2,
       round(achieved_pct(g.flops_uid_trace1), 2) AS achieved_pct_trace1,
       round(achieved_pct(g.flops_uid_trace2, 'other'), 2) AS achieved_pct_trace2
FROM tree_diff_groups g JOIN main.event l ON l.uid = g.lca_uid
LIMIT coalesce(@top, -1);
