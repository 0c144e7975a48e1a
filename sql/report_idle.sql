-- per rank and stream: GPU idle time as host wait / kernel wait / other, in µs and as a ratio (HTA idle time breakdown); @threshold_us @steps @rank
-- HTA's get_idle_time_breakdown: on each stream, the gap before each GPU event (kernel, memcpy,
-- memset) is host wait when the event's launch call started after the previous event on the stream
-- ended (the CPU was late), else kernel wait when shorter than @threshold_us (default 30, HTA's),
-- else other. @steps: 'complete' (default: every ProfilerStep but the last, as HTA), 'all', or a
-- step number. Streams are listed by number (HTA lists them in order of appearance).
WITH sel AS (SELECT g.uid, g.trace, g.stream AS strm, g.ts AS g_ts, g.end AS g_end, r.ts AS launch_ts
             FROM gpu_steps g
             LEFT JOIN launch_link l ON l.gpu = g.uid LEFT JOIN event r ON r.uid = l.runtime
             WHERE (@rank IS NULL OR g.rank = @rank)
               AND CASE coalesce(@steps, 'complete')
                     WHEN 'all' THEN 1
                     WHEN 'complete' THEN g.complete
                     ELSE g.step = @steps END),
gaps AS (SELECT trace, strm, g_ts - prev_end AS gap,
                CASE WHEN launch_ts > prev_end THEN 'host_wait'
                     WHEN g_ts - prev_end < coalesce(@threshold_us, 30) * 1000 THEN 'kernel_wait' ELSE 'other' END AS category
         FROM (SELECT *, lag(g_end) OVER (PARTITION BY trace, strm ORDER BY g_ts, uid) AS prev_end FROM sel)
         WHERE prev_end IS NOT NULL),
categories(i, category) AS (VALUES (1, 'host_wait'), (2, 'kernel_wait'), (3, 'other')),
streams AS (SELECT DISTINCT trace, strm FROM sel),
sums AS (SELECT trace, strm, category, sum(gap) AS ns FROM gaps GROUP BY trace, strm, category),
totals AS (SELECT s.trace, s.strm, c.i, c.category, coalesce(x.ns, 0) AS ns
           FROM streams s CROSS JOIN categories c
           LEFT JOIN sums x ON x.trace = s.trace AND x.strm = s.strm AND x.category = c.category)
SELECT t.rank, strm AS stream, category AS idle_category, ns / 1e3 AS idle_time,
       round(1.0 * ns / nullif(sum(ns) OVER (PARTITION BY x.trace, strm), 0), 2) AS idle_time_ratio
FROM totals x JOIN trace t ON t.id = x.trace ORDER BY t.rank, t.id, strm, i;
