-- per rank: kernel launches, short kernels, runtime and launch-delay outliers, means (HTA launch stats; the launches themselves: .report launch_outliers); @runtime_cutoff_us @delay_cutoff_us @steps @launches
-- HTA's get_cuda_kernel_launch_stats over the launch_stats view: one row per launched GPU event,
-- cpu_duration = its launch call's duration, gpu_duration = its own, launch_delay = GPU start -
-- launch call end, at least 0 (µs). short: gpu_duration < cpu_duration (the launch costs more than
-- the work); runtime outlier: cpu_duration > @runtime_cutoff_us (default 50); delay outlier:
-- launch_delay > @delay_cutoff_us (default 100). @launches: 'hta' (default: the calls HTA counts,
-- cudaLaunchKernel[ExC] and cudaMemcpyAsync / cudaMemsetAsync, and their HIP twins) or 'all' (every
-- launch tlsql links: cuLaunchKernel, cudaGraphLaunch, synchronous copies, ...). @steps: 'complete'
-- (default: not the last ProfilerStep, as HTA) or 'all'.
WITH l AS (SELECT * FROM launch_stats
           WHERE (coalesce(@launches, 'hta') = 'all' OR hta_call) AND (coalesce(@steps, 'complete') = 'all' OR complete))
SELECT rank, count(*) AS launches, sum(gpu_duration < cpu_duration) AS short_kernels,
       sum(cpu_duration > coalesce(@runtime_cutoff_us, 50)) AS runtime_outliers,
       sum(launch_delay > coalesce(@delay_cutoff_us, 100)) AS delay_outliers,
       round(avg(cpu_duration), 3) AS mean_cpu_us, round(avg(gpu_duration), 3) AS mean_gpu_us,
       round(avg(launch_delay), 3) AS mean_delay_us, round(max(launch_delay), 3) AS max_delay_us
FROM l GROUP BY trace ORDER BY rank, trace;
