-- fleet.db: per rank, slowest first: steps, mean step wall and GPU busy ms and their ratio to the ranks' medians, collective instances it shared and arrived last at, the wait that cost the others; straggler 1 and why past @threshold (default 1.1)
-- A rank in a synchronous job that computes slower arrives last at each collective and the others
-- wait for it; their step wall times then grow as much as its own, so wall time alone does not
-- point at it. Two signals do:
--   busy_vs_median: its mean GPU busy ms per step (fleet_steps.gpu_busy_ms, the steps report's)
--     over the median of the ranks' means (mean of the two middle ones for an even count);
--   last_arrivals: of the collective instances it ran with at least one other rank whose kernels
--     overlap in time (the instances fleet_collectives gives a straggler for), those where it
--     started last; wait_caused_ms: the sum of those instances' skew (what the others waited).
-- straggler = 1 when busy_vs_median >= @threshold (default 1.1), or, with 3 ranks or more, it
-- arrived last at more than half of its compared instances (in a fleet of n ranks, a rank that is
-- not slower arrives last at about 1/n of them). why: which signal, with its figure.
WITH st AS (SELECT rank, count(*) AS steps, avg(wall_ms) AS wall, avg(gpu_busy_ms) AS busy FROM fleet_steps GROUP BY rank),
o1 AS (SELECT wall, row_number() OVER (ORDER BY wall) AS i, count(*) OVER () AS n FROM st),
o2 AS (SELECT busy, row_number() OVER (ORDER BY busy) AS i, count(*) OVER () AS n FROM st WHERE busy IS NOT NULL),
med AS (SELECT (SELECT avg(wall) FROM o1 WHERE i IN ((n + 1) / 2, (n + 2) / 2)) AS wall,
               (SELECT avg(busy) FROM o2 WHERE i IN ((n + 1) / 2, (n + 2) / 2)) AS busy),
late AS (SELECT rank, process_group, collective, seq, start_ns, dur_ns,
                row_number() OVER (PARTITION BY process_group, collective, seq ORDER BY start_ns DESC, rank) AS k
         FROM fleet_comm),
inst AS (SELECT process_group, collective, seq, count(*) AS ranks, max(start_ns) - min(start_ns) AS skew,
                max(start_ns) <= min(start_ns + dur_ns) AS overlap, max(CASE WHEN k = 1 THEN rank END) AS last_rank
         FROM late GROUP BY process_group, collective, seq),
per AS (SELECT l.rank, count(*) AS compared, sum(i.last_rank = l.rank) AS last_arrivals,
               sum(CASE WHEN i.last_rank = l.rank THEN i.skew ELSE 0 END) AS wait_ns
        FROM late l JOIN inst i USING (process_group, collective, seq)
        WHERE i.ranks > 1 AND i.overlap GROUP BY l.rank),
fleet AS (SELECT count(*) AS ranks FROM fleet_traces),
x AS (SELECT t.rank, st.steps, st.wall, st.busy, st.wall / med.wall AS wall_ratio, st.busy / med.busy AS busy_ratio,
             coalesce(p.compared, 0) AS compared, coalesce(p.last_arrivals, 0) AS last_arrivals,
             coalesce(p.wait_ns, 0) AS wait_ns
      FROM fleet_traces t LEFT JOIN st ON st.rank = t.rank LEFT JOIN per p ON p.rank = t.rank, med),
y AS (SELECT x.*, x.busy_ratio >= coalesce(@threshold, 1.1) AS slow_gpu,
             fleet.ranks >= 3 AND 2 * x.last_arrivals > x.compared AS mostly_last
      FROM x, fleet)
SELECT rank, steps, round(wall, 3) AS mean_step_ms, round(wall_ratio, 3) AS wall_vs_median,
       round(busy, 3) AS mean_busy_ms, round(busy_ratio, 3) AS busy_vs_median, compared AS collectives_compared,
       last_arrivals, round(wait_ns / 1e6, 3) AS wait_caused_ms, coalesce(slow_gpu OR mostly_last, 0) AS straggler,
       CASE WHEN slow_gpu AND mostly_last
            THEN printf('GPU busy per step %.2fx the median rank''s; last to start %d of %d collectives', busy_ratio,
                        last_arrivals, compared)
            WHEN slow_gpu THEN printf('GPU busy per step %.2fx the median rank''s', busy_ratio)
            WHEN mostly_last THEN printf('last to start %d of %d collectives', last_arrivals, compared) END AS why
FROM y
ORDER BY straggler DESC, busy_ratio DESC, last_arrivals DESC, rank;
