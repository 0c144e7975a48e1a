-- the launches HTA flags, longest launch delay first: short kernels (GPU time < launch call time), runtime outliers (call > @runtime_cutoff_us, default 50), delay outliers (delay > @delay_cutoff_us, default 100); @top @steps @launches
-- One row per flagged launch of the launch_stats view (definitions: .report launch).
WITH l AS (SELECT * FROM launch_stats
           WHERE (coalesce(@launches, 'hta') = 'all' OR hta_call) AND (coalesce(@steps, 'complete') = 'all' OR complete))
SELECT rank, gpu AS uid, correlation, name, cpu_duration, gpu_duration, launch_delay,
       gpu_duration < cpu_duration AS short, cpu_duration > coalesce(@runtime_cutoff_us, 50) AS runtime_outlier,
       launch_delay > coalesce(@delay_cutoff_us, 100) AS delay_outlier
FROM l WHERE gpu_duration < cpu_duration OR cpu_duration > coalesce(@runtime_cutoff_us, 50)
          OR launch_delay > coalesce(@delay_cutoff_us, 100)
ORDER BY launch_delay DESC, uid LIMIT coalesce(@top, 50);
