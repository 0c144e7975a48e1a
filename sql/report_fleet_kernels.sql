-- fleet.db: per kernel name across ranks, most total time first: GPU class, ranks that ran it, launches, total ms, per-rank ms mean / min / max, the slowest rank and the spread; @top rows (default 50)
-- From fleet_kernel_time (report fleet_kernel_time: every GPU event by name, per rank). Per-rank
-- figures are over the ranks that ran the kernel (ranks; of_ranks: the ranks loaded).
-- spread_pct: (max - min) / mean of the per-rank ms, as %: 0 when every rank spent the same;
-- slowest_rank: the rank with the most time in it (the lowest rank of equals).
WITH k AS (SELECT name, gpu_class, rank, sum(count) AS launches, sum(total_us) AS us
           FROM fleet_kernel_time GROUP BY name, gpu_class, rank),
s AS (SELECT name, gpu_class, count(*) AS ranks, sum(launches) AS launches, sum(us) AS us, avg(us) AS mean_us,
             min(us) AS min_us, max(us) AS max_us
      FROM k GROUP BY name, gpu_class),
slow AS (SELECT name, gpu_class, rank, row_number() OVER (PARTITION BY name, gpu_class ORDER BY us DESC, rank) AS i
         FROM k)
SELECT s.name, s.gpu_class, s.ranks, (SELECT count(*) FROM fleet_traces) AS of_ranks, s.launches,
       round(s.us / 1e3, 3) AS total_ms, round(s.mean_us / 1e3, 3) AS mean_rank_ms, round(s.min_us / 1e3, 3) AS min_rank_ms,
       round(s.max_us / 1e3, 3) AS max_rank_ms, w.rank AS slowest_rank,
       round(100.0 * (s.max_us - s.min_us) / nullif(s.mean_us, 0), 2) AS spread_pct
FROM s JOIN slow w ON w.name = s.name AND w.gpu_class IS s.gpu_class AND w.i = 1
ORDER BY s.us DESC, s.name LIMIT coalesce(@top, 50);
