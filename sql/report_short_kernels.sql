-- kernels shorter than @threshold_us (default 10, TraceLens's) grouped as TraceLens's short-kernel study groups them (launching op, its input dims / strides / concrete inputs, kernel name): µs, count, mean, % of total time and of all kernels; @threshold_us @top
-- TraceLens's get_dfs_short_kernels on any trace (Kineto, rocprof, Nsight): every GPU kernel (not
-- copies or fills) whose duration is < @threshold_us. parent_op: the kernel view's launcher when it
-- is a cpu_op (the nearest op above the launch call, TraceLens's rule), with that op's Input Dims,
-- Input Strides and Concrete Inputs; NULL for a kernel no op launched (TraceLens's pandas groupby
-- drops those rows; here they are a group of their own). pct_of_total_time: sum_us over the
-- `timeline` report's total_time of the kernel's rank (TraceLens's divisor, its gpu_timeline
-- total); pct_of_kernels: count over every kernel of the rank. Largest sum_us first (@top, default
-- all). The histogram of the same durations: report short_kernels_histogram.
WITH k AS (SELECT k.trace, k.name, k.dur, CASE WHEN o.kind = 'cpu_op' THEN o.uid END AS op
           FROM kernel k LEFT JOIN event o ON o.uid = k.launcher),
     total AS (SELECT r.rank, r."time ms" * 1e3 AS us FROM report_timeline_ranks('{}') r WHERE r.type = 'total_time'),
     all_k AS (SELECT trace, count(*) AS n FROM k GROUP BY trace),
     s AS (SELECT k.trace, o.name AS parent_op, o.input_dims, o.input_strides, o.concrete_inputs, k.name,
                  sum(k.dur) / 1e3 AS sum_us, count(*) AS count, avg(k.dur) / 1e3 AS mean_us
           FROM k LEFT JOIN event o ON o.uid = k.op
           WHERE k.dur < coalesce(@threshold_us, 10) * 1e3
           GROUP BY k.trace, o.name, o.input_dims, o.input_strides, o.concrete_inputs, k.name)
SELECT t.rank, s.parent_op, s.input_dims, s.input_strides, s.concrete_inputs, s.name AS kernel, round(s.sum_us, 3) AS sum_us,
       s.count, round(s.mean_us, 3) AS mean_us, round(100 * s.sum_us / tot.us, 3) AS pct_of_total_time,
       round(100.0 * s.count / a.n, 3) AS pct_of_kernels
FROM s JOIN trace t ON t.id = s.trace JOIN all_k a ON a.trace = s.trace LEFT JOIN total tot ON tot.rank IS t.rank
ORDER BY s.sum_us DESC, t.rank, s.name LIMIT coalesce(@top, -1);
