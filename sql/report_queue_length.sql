-- per rank and stream: the CUDA launch-queue length at every launch and GPU start, summarized as HTA's get_queue_length_summary (count, mean, std, quartiles); @steps @rank
-- The series is the view queue_length_points (+1 per launch call HTA's queue counts, launch_stats.queue_call;
-- -1 when the work it launched starts; per trace, device and stream). Its points summarized as
-- pandas' describe() does: count, mean, std (sample, n - 1; NULL for one point), min, the 25th /
-- 50th / 75th percentiles interpolated linearly, max. @steps: 'complete' (default: launches before
-- the last ProfilerStep, HTA's scope) or 'all'. Streams of several devices in one trace are apart
-- (HTA groups by stream number alone).
SELECT rank, device, stream, count(*) AS count, avg(length) AS mean, stddev(length) AS std, min(length) AS min,
       percentile(length, 25) AS p25, percentile(length, 50) AS p50, percentile(length, 75) AS p75,
       max(length) AS max
FROM queue_length_points
WHERE steps = coalesce(@steps, 'complete') AND (@rank IS NULL OR rank = @rank)
GROUP BY trace, device, stream ORDER BY rank, trace, device, stream;
