-- fleet.db: per step and rank, slowest first: compute ms against that step's median rank, by how much (ms, ratio), and what the step's GPU time went to (compute, communication, exposed communication, wall); straggler 1 at @threshold (default 1.1) x the median or more; @top rows (default 50)
-- Steps are matched across ranks by their number (fleet_steps.iteration: ProfilerStep#N's N, or
-- the serving-engine step's). Why compute and not wall or GPU busy time: in a synchronous job the
-- ranks wait for the slowest at each collective, so every rank's step takes as long as its, and
-- the fast ranks' communication kernels run longer (they spin while they wait); what differs is
-- the time a rank computes. compute_ms: the union of the step's computation kernels and memsets
-- (fleet_steps, the timeline report's rule); median_compute_ms: the median of the step's ranks
-- (an even count: the mean of the two middle ones); compute_vs_median and over_median_ms: the
-- rank's against it. A step on one rank only has nothing to compare: no row. wall_vs_median: the
-- same for the step's wall time. exposed_comm_ms is the rank's communication no computation hid:
-- high on the ranks that wait, low on the one they wait for.
WITH s AS (SELECT *, count(*) OVER (PARTITION BY iteration) AS n,
                  row_number() OVER (PARTITION BY iteration ORDER BY compute_ms) AS ci,
                  row_number() OVER (PARTITION BY iteration ORDER BY wall_ms) AS wi
           FROM fleet_steps),
m AS (SELECT iteration, avg(CASE WHEN ci IN ((n + 1) / 2, (n + 2) / 2) THEN compute_ms END) AS compute_med,
             avg(CASE WHEN wi IN ((n + 1) / 2, (n + 2) / 2) THEN wall_ms END) AS wall_med, max(n) AS ranks
      FROM s GROUP BY iteration)
SELECT s.iteration, s.rank, m.ranks, s.compute_ms, round(m.compute_med, 3) AS median_compute_ms,
       round(s.compute_ms / nullif(m.compute_med, 0), 3) AS compute_vs_median,
       round(s.compute_ms - m.compute_med, 3) AS over_median_ms, s.comm_ms, s.exposed_comm_ms, s.gpu_busy_ms,
       s.wall_ms, round(s.wall_ms / nullif(m.wall_med, 0), 3) AS wall_vs_median, s.kernels,
       coalesce(s.compute_ms >= coalesce(@threshold, 1.1) * m.compute_med AND m.compute_med > 0, 0) AS straggler
FROM s JOIN m USING (iteration)
WHERE m.ranks > 1
ORDER BY s.compute_ms / nullif(m.compute_med, 0) DESC, s.compute_ms - m.compute_med DESC, s.iteration, s.rank
LIMIT coalesce(@top, 50);
