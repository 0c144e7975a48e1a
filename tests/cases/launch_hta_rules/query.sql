-- HTA's launch statistics rules (get_cuda_kernel_launch_stats after TraceAnalysis's default load),
-- tests/data/launch_hta_rules.json, µs: launch call [start, dur] -> GPU work [start, dur], delay =
-- max(0, GPU start - call end)
--   before the steps  cudaLaunchKernel [10, 10]   -> k_pre [50, 5]        delay 50 - 20 = 30    kept (HTA keeps work before the first step)
--   ProfilerStep#1    cudaLaunchKernel [200, 20]  -> k_early [210, 30]    delay max(0, 210 - 220) = 0
--                     cuLaunchKernel [300, 8]     -> k_driver [400, 10]   not a call HTA counts
--                     hipLaunchKernel [500, 6]    -> k_hip [706, 4]       delay 200 (HIP twin of cudaLaunchKernel)
--   ProfilerStep#2    cudaMemcpyAsync [1100, 12]  -> memcpy [1150, 40]    delay 38
--                     cudaGraphLaunch [1300, 15]  -> k_graph [1400, 20]   not a call HTA counts
--   ProfilerStep#3    cudaLaunchKernel [2100, 10] -> k_last_step [2200, 10]  the last step: dropped
-- default: 4 launches (k_pre, k_early, k_hip, memcpy); short (gpu < cpu): k_pre 5 < 10 and k_hip 4 < 6 -> 2;
--   runtime outliers (cpu > 50): 0; delay outliers (> 100): k_hip -> 1
--   mean cpu (10 + 20 + 6 + 12) / 4 = 12.0, mean gpu (5 + 30 + 4 + 40) / 4 = 19.75, mean delay (30 + 0 + 200 + 38) / 4 = 67.0, max 200
-- @launches 'all': + k_driver [cpu 8, gpu 10, delay 92] and k_graph [15, 20, 85] = 6: means cpu 71 / 6 = 11.833,
--   gpu 109 / 6 = 18.167, delay 445 / 6 = 74.167
-- @steps 'all': + k_last_step [10, 10, delay 90] = 5: cpu 58 / 5 = 11.6, gpu 89 / 5 = 17.8, delay 358 / 5 = 71.6
-- both: 7: cpu 81 / 7 = 11.571, gpu 119 / 7 = 17.0, delay 535 / 7 = 76.429
.report launch
.report launch_outliers
.parameter set @launches 'all'
.report launch
.report launch_outliers
.parameter clear
.parameter set @steps 'all'
.report launch
.report launch_outliers
.parameter set @launches 'all'
.report launch
.report launch_outliers
-- gpu_steps.complete follows the same cut: every GPU event launched before ProfilerStep#3's start.
SELECT name, complete FROM gpu_steps ORDER BY ts;
