-- tests/data/launch_through_annotation.json: record_param_comms [10, 30) > nccl:all_reduce
-- (annotation) [11, 26) > cudaLaunchKernel (corr 7) -> the NCCL kernel: annotations are passed
-- over like python frames, so the launcher is record_param_comms (TraceLens's). The launch at 40
-- sits directly under ProfilerStep#1 (an annotation with no op above it): its own launcher.
SELECT k.name AS kernel, l.name AS launcher, l.kind AS launcher_kind FROM kernel k JOIN event l ON l.uid = k.launcher
ORDER BY k.ts;
