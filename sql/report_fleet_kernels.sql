-- fleet.db: per kernel name across ranks, most total time first: GPU class, ranks that ran it, launches, total ms, per-rank ms min / median / max, the spread, the outlier ranks (@threshold, default 1.1, x the median or more); @top rows (default 50)
-- From fleet_kernel_time (report fleet_kernel_time: every GPU event by name, per rank). Per-rank
-- figures are over the ranks that ran the kernel (ranks; of_ranks: the ranks loaded): min, median
-- (an even count: the mean of the two middle ones), max. spread_pct: (max - min) / median as %,
-- 0 when every rank spent the same. outliers: the ranks whose time is @threshold x the median or
-- more; outlier_ranks: up to 10 of them, the most time first ("rank:ms"). Communication kernels
-- differ by waiting, not by work: a rank that computes slower makes the others' collectives longer
-- (fleet_stragglers says which rank that is).
WITH k AS (SELECT name, gpu_class, rank, sum(count) AS launches, sum(total_us) AS us
           FROM fleet_kernel_time GROUP BY name, gpu_class, rank),
o AS (SELECT *, row_number() OVER (PARTITION BY name, gpu_class ORDER BY us, rank) AS i,
             count(*) OVER (PARTITION BY name, gpu_class) AS n FROM k),
s AS (SELECT name, gpu_class, count(*) AS ranks, sum(launches) AS launches, sum(us) AS us, min(us) AS min_us,
             max(us) AS max_us, avg(CASE WHEN i IN ((n + 1) / 2, (n + 2) / 2) THEN us END) AS med_us
      FROM o GROUP BY name, gpu_class),
top AS (SELECT * FROM s ORDER BY us DESC, name LIMIT coalesce(@top, 50)),
out AS (SELECT k.name, k.gpu_class, k.rank, k.us,
               row_number() OVER (PARTITION BY k.name, k.gpu_class ORDER BY k.us DESC, k.rank) AS j,
               count(*) OVER (PARTITION BY k.name, k.gpu_class) AS outliers
        FROM k JOIN top ON top.name = k.name AND top.gpu_class IS k.gpu_class
        WHERE k.us >= coalesce(@threshold, 1.1) * top.med_us AND top.med_us > 0),
lst AS (SELECT name, gpu_class, max(outliers) AS outliers,
               group_concat(rank || ':' || round(us / 1e3, 3), ' ') AS ranks
        FROM (SELECT * FROM out WHERE j <= 10 ORDER BY name, gpu_class, j) GROUP BY name, gpu_class)
SELECT t.name, t.gpu_class, t.ranks, (SELECT count(*) FROM fleet_traces) AS of_ranks, t.launches,
       round(t.us / 1e3, 3) AS total_ms, round(t.min_us / 1e3, 3) AS min_rank_ms, round(t.med_us / 1e3, 3) AS median_rank_ms,
       round(t.max_us / 1e3, 3) AS max_rank_ms, round(100.0 * (t.max_us - t.min_us) / nullif(t.med_us, 0), 2) AS spread_pct,
       coalesce(l.outliers, 0) AS outliers, l.ranks AS outlier_ranks
FROM top t LEFT JOIN lst l ON l.name = t.name AND l.gpu_class IS t.gpu_class
ORDER BY t.us DESC, t.name;
