-- per rank and stream: GPU idle time as host wait / kernel wait / other, in µs and as a ratio (HTA idle time breakdown); @threshold_us @steps @rank
-- HTA's get_idle_time_breakdown: on each stream, the gap before each GPU event (kernel, memcpy,
-- memset) is host wait when the event's launch call started after the previous event on the stream
-- ended (the CPU was late), else kernel wait when shorter than @threshold_us (default 30, HTA's),
-- else other. @steps: 'complete' (default: every ProfilerStep but the last, as HTA), 'all', or a
-- step number. Streams are listed by number (HTA lists them in order of appearance).
-- (idle_breakdown, udf/analysis/idle_breakdown.cpp, holds the rule: the gaps per stream in time
-- order, each categorized, summed; the ratios and the ranks here.)
SELECT t.rank, b.stream, b.category AS idle_category, b.idle_ns / 1e3 AS idle_time,
       round(1.0 * b.idle_ns / nullif(sum(b.idle_ns) OVER (PARTITION BY b.trace, b.stream), 0), 2) AS idle_time_ratio
FROM idle_breakdown(@steps, @threshold_us) b JOIN trace t ON t.id = b.trace
WHERE @rank IS NULL OR t.rank = @rank
ORDER BY t.rank, t.id, b.stream, CASE b.category WHEN 'host_wait' THEN 1 WHEN 'kernel_wait' THEN 2 ELSE 3 END;
