-- main vs other per kernel name: count, TFLOP/s, GB/s, mean µs, achieved FLOP/s % and bandwidth % (inductor profile_analysis --diff); @name LIKE filter, @top rows
-- Per side and kernel name, the figures every report gives (perf_sum, udf/perf/perf_sum.h;
-- docs/reports.md "Column names"): TFLOP/s the FLOPs of the launches that have them over those
-- launches' GPU time, GB/s the same with bytes, flops_pct / bw_pct those rates as % of the
-- launches' peak FLOP/s and HBM bandwidth; mean duration over all launches. A side without the
-- kernel shows NULL. FLOPs and bytes: the kernel's own (inductor's kernel_flop / kernel_num_gb) or
-- its launching op's model (see perf). speedup = main mean / other mean.
-- (Each side grouped by itself: its event table hands the kernels over grouped by name. Both
-- sides' perf tables made at once first, `ready`: one after the other, each when perf_sum first
-- read it, they were most of the report's time. `ready` is a WHERE term: SQLite evaluates it once,
-- on a side's first kernel row, before that row's perf_sum; the kernel scan itself reads no perf
-- table (counted_op's does: report_diff_shapes.sql keeps `ready` its outer loop). As the outer
-- loop of a CROSS JOIN here it kept the scan from handing the kernels over in name order, and
-- each side sorted its kernels' names again, 39 ms a side of a 200 MB trace.)
WITH ready AS MATERIALIZED (SELECT perf_tables('main', 'other') AS n),
ms AS (SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) / 1e3 AS mean_us, perf_sum(uid) AS p
       FROM main.kernel WHERE (SELECT n FROM ready) IS NOT NULL AND (@name IS NULL OR name LIKE @name) GROUP BY name),
os AS (SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) / 1e3 AS mean_us, perf_sum(uid, 'other') AS p
       FROM other.kernel WHERE (SELECT n FROM ready) IS NOT NULL AND (@name IS NULL OR name LIKE @name)
       GROUP BY name),
names AS (SELECT name FROM ms UNION SELECT name FROM os)
SELECT k.name,
       a.n AS main_count, round(a.p ->> 'tflops', 3) AS main_tflops, round((a.p ->> 'tbps') * 1e3, 1) AS main_gbps,
       round(a.mean_us, 3) AS main_mean_us,
       round(100 * (a.p ->> 'tflops') / (a.p ->> 'peak_tflops'), 2) AS main_flops_pct,
       round(100 * (a.p ->> 'tbps') / (a.p ->> 'peak_tbps'), 2) AS main_bw_pct,
       b.n AS other_count, round(b.p ->> 'tflops', 3) AS other_tflops, round((b.p ->> 'tbps') * 1e3, 1) AS other_gbps,
       round(b.mean_us, 3) AS other_mean_us,
       round(100 * (b.p ->> 'tflops') / (b.p ->> 'peak_tflops'), 2) AS other_flops_pct,
       round(100 * (b.p ->> 'tbps') / (b.p ->> 'peak_tbps'), 2) AS other_bw_pct,
       round(a.mean_us / b.mean_us, 3) AS speedup
FROM names k LEFT JOIN ms a ON a.name = k.name LEFT JOIN os b ON b.name = k.name
ORDER BY coalesce(a.total, 0) + coalesce(b.total, 0) DESC, k.name LIMIT coalesce(@top, 50);
