-- main vs other per kernel name: count, TFLOP/s, GB/s, mean µs, achieved FLOP/s % and bandwidth % (inductor profile_analysis --diff); @name LIKE filter, @top rows
-- inductor's per-kernel averages: TFLOP/s and its % of peak over the kernels that have FLOPs,
-- GB/s and its % of HBM bandwidth over those that have bytes, mean duration over all. A side
-- without the kernel shows NULL. FLOPs and bytes: the kernel's own (inductor's kernel_flop /
-- kernel_num_gb) or its launching op's model (see perf). speedup = main mean / other mean.
-- (Each side grouped by itself: its event table hands the kernels over grouped by name.)
WITH ms AS (SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) / 1e3 AS mean_us,
                   avg(CASE WHEN f > 0 THEN tf END) AS tflops, avg(CASE WHEN b > 0 THEN tb * 1e3 END) AS gbps,
                   avg(CASE WHEN f > 0 THEN 100 * tf / ptf END) AS flops_pct,
                   avg(CASE WHEN b > 0 THEN 100 * tb / ptb END) AS bw_pct
            FROM (SELECT name, dur, flops(uid) AS f, bytes(uid) AS b, tflops(uid) AS tf, tbps(uid) AS tb,
                         peak_tflops(uid) AS ptf, peak_tbps(uid) AS ptb
                  FROM main.kernel WHERE @name IS NULL OR name LIKE @name)
            GROUP BY name),
os AS (SELECT name, count(*) AS n, sum(dur) AS total, avg(dur) / 1e3 AS mean_us,
              avg(CASE WHEN f > 0 THEN tf END) AS tflops, avg(CASE WHEN b > 0 THEN tb * 1e3 END) AS gbps,
              avg(CASE WHEN f > 0 THEN 100 * tf / ptf END) AS flops_pct,
              avg(CASE WHEN b > 0 THEN 100 * tb / ptb END) AS bw_pct
       FROM (SELECT name, dur, flops(uid, 'other') AS f, bytes(uid, 'other') AS b, tflops(uid, 'other') AS tf,
                    tbps(uid, 'other') AS tb, peak_tflops(uid, 'other') AS ptf, peak_tbps(uid, 'other') AS ptb
             FROM other.kernel WHERE @name IS NULL OR name LIKE @name)
       GROUP BY name),
names AS (SELECT name FROM ms UNION SELECT name FROM os)
SELECT k.name,
       a.n AS main_count, round(a.tflops, 3) AS main_tflops, round(a.gbps, 1) AS main_gbps,
       round(a.mean_us, 3) AS main_mean_us, round(a.flops_pct, 2) AS main_flops_pct,
       round(a.bw_pct, 2) AS main_bw_pct,
       b.n AS other_count, round(b.tflops, 3) AS other_tflops, round(b.gbps, 1) AS other_gbps,
       round(b.mean_us, 3) AS other_mean_us, round(b.flops_pct, 2) AS other_flops_pct,
       round(b.bw_pct, 2) AS other_bw_pct,
       round(a.mean_us / b.mean_us, 3) AS speedup
FROM names k LEFT JOIN ms a ON a.name = k.name LEFT JOIN os b ON b.name = k.name
ORDER BY coalesce(a.total, 0) + coalesce(b.total, 0) DESC, k.name LIMIT coalesce(@top, 50);
