-- fleet.db: the fleet in one row: rank files given, loaded, failed, ranks missing, world size, events, steps, mean step wall ms per rank (min, median, max, spread, slowest rank), GPU busy and communication ms, loader repairs, MB, task seconds
-- files: the rank files asked for (fleet_rank); loaded / failed: status ok / error (fleet_health
-- has each error); missing: ranks below the largest world size the loaded traces report that no
-- loaded file is. events, gpu_busy_ms, comm_ms, repairs: fleet_traces' per-rank figures summed.
-- Step time: each rank's mean step wall ms (fleet_steps), then over the ranks their min, median
-- (an even count: the mean of the two middle ranks), max, spread_pct = (max - min) / median as %,
-- and the rank with the max (the lowest of equals). In a synchronous job every rank's steps take
-- about as long as the slowest rank's (the others wait at collectives): fleet_stragglers finds it
-- by compute time. task_s_max: the longest rank task (hash, load, reports), what bounds the wall.
WITH r AS (SELECT count(*) AS files, coalesce(sum(status = 'ok'), 0) AS loaded, coalesce(sum(status = 'error'), 0) AS failed,
                  sum(bytes) AS bytes, max(seconds) AS task_max FROM fleet_rank),
t AS (SELECT max(world_size) AS world_size, sum(events) AS events, sum(gpu_busy_ms) AS busy, sum(comm_ms) AS comm,
             sum(repairs) AS repairs FROM fleet_traces),
st AS (SELECT rank, avg(wall_ms) AS ms, count(*) AS steps FROM fleet_steps GROUP BY rank),
ord AS (SELECT rank, ms, row_number() OVER (ORDER BY ms, rank) AS i, count(*) OVER () AS n FROM st),
agg AS (SELECT min(ms) AS lo, max(ms) AS hi, (SELECT avg(ms) FROM ord WHERE i IN ((n + 1) / 2, (n + 2) / 2)) AS med,
               (SELECT rank FROM ord ORDER BY ms DESC, rank LIMIT 1) AS slowest,
               (SELECT max(steps) FROM st) AS steps FROM st)
SELECT r.files, r.loaded, r.failed,
       (SELECT count(DISTINCT rank) FROM fleet_rank WHERE status = 'ok' AND rank >= 0 AND rank < t.world_size) AS in_world,
       t.world_size - (SELECT count(DISTINCT rank) FROM fleet_rank WHERE status = 'ok' AND rank >= 0 AND rank < t.world_size)
         AS missing,
       t.world_size, t.events, agg.steps AS steps_per_rank, round(agg.lo, 3) AS step_ms_min, round(agg.med, 3) AS step_ms_median,
       round(agg.hi, 3) AS step_ms_max, round(100.0 * (agg.hi - agg.lo) / nullif(agg.med, 0), 2) AS step_spread_pct,
       agg.slowest AS slowest_rank, round(t.busy, 3) AS gpu_busy_ms, round(t.comm, 3) AS comm_ms, t.repairs,
       round(r.bytes / 1e6, 3) AS mb, round(r.task_max, 3) AS task_s_max
FROM r, t, agg;
