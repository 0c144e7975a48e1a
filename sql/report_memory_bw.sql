-- per rank and memory kind (Memcpy HtoD, Memcpy DtoH, Memcpy DtoD, Memset, ...): the GB/s of the copies / fills running, summarized as HTA's get_memory_bw_summary (count, mean, std, quartiles); @steps @rank
-- Over the view memory_bw_points (per trace and kind, the summed bandwidth after each copy's start and
-- end, HTA's get_memory_bw_time_series): its points above 0 GB/s (HTA drops the points where no
-- copy runs), summarized as pandas' describe(): count, mean, std (sample, n - 1), min, 25th / 50th /
-- 75th percentiles interpolated linearly, max. A copy's GB/s is Kineto's "memory bandwidth (GB/s)"
-- arg, else bytes / ns, else 0 (0 bytes or 0 ns: no division; view memory_bw_points). Points are those
-- above 1e-9 GB/s: a running sum of doubles can leave a residue of the order of 1e-13 where every
-- copy has ended. @steps: 'complete' (default, HTA's scope) or 'all'.
SELECT rank, name, count(*) AS count, avg(gbps) AS mean, stddev(gbps) AS std, min(gbps) AS min,
       percentile(gbps, 25) AS p25, percentile(gbps, 50) AS p50, percentile(gbps, 75) AS p75, max(gbps) AS max
FROM memory_bw_points
WHERE steps = coalesce(@steps, 'complete') AND (@rank IS NULL OR rank = @rank) AND gbps > 1e-9
GROUP BY trace, name ORDER BY rank, trace, name;
