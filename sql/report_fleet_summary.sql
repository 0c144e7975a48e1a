-- fleet.db: per rank file: rank, status, MB, load seconds and peak MB of its tlsql, world size, GPUs, span, steps, events, mean step ms and its ratio to the ranks' median, GPU busy and communication ms, repairs, error
-- One row per file `tlsql fleet` was given (fleet_rank), the failed ones too (status 'error', the
-- error; their figures NULL). The trace's figures are fleet_traces' (report fleet_traces: the
-- summary report's definitions); mean_step_ms: the mean wall_ms of the rank's steps (fleet_steps);
-- step_vs_median: that over the median of the ranks' means (the mean of the two middle ranks when
-- there is an even number of them): 1.25 is a rank whose steps take 25% longer than the typical
-- rank's. load_s and peak_mb: the rank task's wall time (hashing the file and tlsql's load and
-- reports) and tlsql's peak resident memory (ru_maxrss).
WITH st AS (SELECT rank, avg(wall_ms) AS step_ms FROM fleet_steps GROUP BY rank),
ord AS (SELECT step_ms, row_number() OVER (ORDER BY step_ms) AS i, count(*) OVER () AS n FROM st),
med AS (SELECT avg(step_ms) AS m FROM ord WHERE i IN ((n + 1) / 2, (n + 2) / 2))
SELECT r.rank, r.status, r.file, round(r.bytes / 1e6, 3) AS mb, round(r.seconds, 3) AS load_s,
       r.peak_rss_mb AS peak_mb, t.world_size, t.devices, t.span_ms, t.steps, t.events,
       round(s.step_ms, 3) AS mean_step_ms, round(s.step_ms / med.m, 3) AS step_vs_median, t.gpu_busy_ms,
       t.comm_ms, t.repairs, r.error
FROM fleet_rank r LEFT JOIN fleet_traces t ON r.status = 'ok' AND t.rank = r.rank
LEFT JOIN st s ON r.status = 'ok' AND s.rank = r.rank LEFT JOIN med
ORDER BY r.rank IS NULL, r.rank, r.file;
