-- Why a canned report printed no rows: the shell prints this on stderr ("REPORT: no rows: WHY")
-- when every result set of report @report came back empty. The first reason that holds, checked
-- in the order a user would fix them; NULL when none does.
WITH gpu_work AS (SELECT EXISTS (SELECT 1 FROM event WHERE kind IN ('kernel', 'memcpy', 'memset')) AS yes),
shapes AS (SELECT EXISTS (SELECT 1 FROM op WHERE input_dims IS NOT NULL AND input_dims NOT IN ('[]', '')) AS yes),
family(cat) AS (SELECT CASE @report WHEN 'gemm' THEN 'GEMM' WHEN 'sdpa' THEN 'SDPA' WHEN 'conv' THEN 'CONV' END),
-- (Each op name classified once: a trace without the family's ops had every op classified. The
-- names from kind_names: a DISTINCT over a loaded trace's ops took 37 ms of a 200 MB trace.)
op_names(name) AS (SELECT name FROM kind_names('cpu_op'))
SELECT CASE
  WHEN NOT EXISTS (SELECT 1 FROM event) THEN 'the trace has no events'
  WHEN @report IN ('gemm', 'sdpa', 'conv') THEN
    CASE WHEN NOT EXISTS (SELECT 1 FROM op_names, family WHERE op_category(op_names.name) LIKE family.cat || '%')
           THEN 'no ' || (SELECT cat FROM family) || ' ops in this trace'
         WHEN NOT (SELECT yes FROM shapes) THEN 'no Input Dims: record with record_shapes=True'
         WHEN NOT (SELECT yes FROM gpu_work) THEN 'no GPU events (kernels, memcpys, memsets): the sheet lists GPU work'
         WHEN @report = 'conv' AND EXISTS (SELECT 1 FROM op WHERE op_category(name) LIKE 'CONV%'
                                                             AND model_gap(name, args) = 'Concrete Inputs missing')
           THEN 'no CONV op has a FLOPs model: Concrete Inputs missing (stride, padding, dilation: '
                || 'recorded from PyTorch 1.13 on)'
         ELSE 'no ' || (SELECT cat FROM family) || ' op has a FLOPs model for its recorded shapes (docs/perf_models.md)'
    END
  -- The other profilers' files say why they have no ops (docs/formats.md).
  WHEN @report IN ('ops', 'summary') AND NOT EXISTS (SELECT 1 FROM op)
       AND EXISTS (SELECT 1 FROM trace WHERE metadata ->> '$.profiler' = 'rocprofv3')
    THEN 'no ops: rocprofv3 records HIP calls and GPU work but no CPU ops (no call tree above the HIP calls)'
  WHEN @report IN ('ops', 'summary') AND NOT EXISTS (SELECT 1 FROM op)
       AND EXISTS (SELECT 1 FROM trace WHERE metadata ->> '$.profiler' = 'nsys')
    THEN 'no ops: the Nsight Systems export has no emit_nvtx ranges (aten::NAME, op_id = N): profile the run '
         || 'inside torch.autograd.profiler.emit_nvtx()'
  WHEN @report IN ('ops', 'summary') AND NOT EXISTS (SELECT 1 FROM op) THEN 'no ops (cpu_op events) in this trace'
  WHEN @report IN ('temporal', 'idle', 'timeline', 'timeline_ranks', 'collectives', 'launch', 'optimizable', 'kernels', 'ops')
       AND NOT (SELECT yes FROM gpu_work) THEN 'no GPU events (kernels, memcpys, memsets) in this trace'
  -- No launch call at all (rocprofv3 without --hip-trace, a Kineto trace without runtime events):
  -- choosing other steps would not help.
  WHEN @report = 'launch' AND NOT EXISTS (SELECT 1 FROM launch_link)
    THEN 'no GPU work linked to a launch call in this trace: no runtime call carries a GPU event''s correlation id'
  -- Links, but none through a call HTA's launch stats count (a trace whose launches are all graph
  -- launches): the steps are not the reason.
  WHEN @report = 'launch' AND coalesce(@launches, 'hta') <> 'all' AND NOT EXISTS (SELECT 1 FROM launch_stats WHERE hta_call)
    THEN 'no GPU work launched by a call HTA''s launch stats count (cudaLaunchKernel[ExC], cudaMemcpyAsync, '
         || 'cudaMemsetAsync and their HIP twins; here: '
         || (SELECT group_concat(launch_call, ', ') FROM (SELECT DISTINCT launch_call FROM launch_stats ORDER BY 1 LIMIT 3))
         || '): set @launches ''all'''
  WHEN @report IN ('temporal', 'idle', 'launch') AND coalesce(@steps, 'complete') <> 'all'
    THEN 'no GPU work in the chosen ProfilerSteps: set @steps ''all'''
  WHEN @report = 'kernels' AND coalesce(@steps, 'all') <> 'all'
    THEN 'no kernels in the chosen ProfilerSteps: set @steps ''all'''
  -- HTA's trace counters and TraceLens's short-kernel study (docs/reports.md, "Queue length, memory
  -- bandwidth, short kernels").
  WHEN @report IN ('queue_length', 'queue_blocked', 'memory_bw', 'short_kernels', 'short_kernels_histogram',
                   'kernel_details') AND NOT (SELECT yes FROM gpu_work)
    THEN 'no GPU events (kernels, memcpys, memsets) in this trace'
  WHEN @report IN ('queue_length', 'queue_blocked') AND NOT EXISTS (SELECT 1 FROM launch_stats WHERE queue_call)
    THEN 'no GPU work launched by a call HTA''s queue counts (cudaLaunchKernel[ExC], cuLaunchKernel[Ex], '
         || 'cudaMemcpyAsync, cudaMemsetAsync and their HIP twins)'
  WHEN @report IN ('queue_length', 'queue_blocked') THEN 'no launch before the last ProfilerStep: set @steps ''all'''
  WHEN @report = 'memory_bw' AND NOT EXISTS (SELECT 1 FROM event WHERE kind IN ('memcpy', 'memset'))
    THEN 'no memcpys or memsets in this trace'
  WHEN @report = 'memory_bw' AND coalesce(@steps, 'complete') <> 'all'
       AND EXISTS (SELECT 1 FROM memory_bw_points WHERE steps = 'all' AND gbps > 1e-9)
    THEN 'no memcpy or memset in the chosen ProfilerSteps: set @steps ''all'''
  WHEN @report = 'memory_bw'
    THEN 'every memcpy / memset runs at 0 GB/s (no "memory bandwidth (GB/s)" arg, and 0 bytes or 0 ns)'
  WHEN @report IN ('short_kernels', 'short_kernels_histogram')
    THEN 'no kernel shorter than @threshold_us (' || coalesce(@threshold_us, 10) || ' µs)'
  WHEN @report = 'kernel_details' AND coalesce(@steps, 'all') <> 'all'
    THEN 'no kernels in the chosen ProfilerSteps: set @steps ''all'''
  WHEN @report = 'kernel_details' THEN 'no kernels (only memcpys / memsets) in this trace'
  WHEN @report IN ('annotations', 'annotation_kernels') AND NOT EXISTS (SELECT 1 FROM event WHERE kind = 'gpu_annotation')
    THEN 'no GPU user annotations (gpu_user_annotation events: the GPU spans of record_function ranges) in this trace'
  WHEN @report IN ('annotations', 'annotation_kernels') THEN 'no annotations in the chosen steps: set @steps ''all'''
  WHEN @report = 'kernel_sequences' AND @op IS NULL
    THEN 'set @op to part of an op name first (.parameter set @op aten::linear)'
  WHEN @report = 'kernel_sequences'
    THEN 'no op named with @op launched @length (default 3) or more GPU events at the shallowest depth'
  WHEN @report = 'counters'
    THEN 'no CUPTI profiler ranges (cuda_profiler_range events): record with torch.profiler''s experimental_config '
         || '(profiler_metrics, profiler_measure_per_kernel=True)'
  WHEN @report = 'stragglers'
    THEN 'no communication kernel of 1% of the mean step time or more in a ProfilerStep after step 0'
  WHEN @report = 'collectives' THEN 'no communication kernels (NCCL / RCCL, custom all-reduce) in this trace'
  WHEN @report = 'fx' THEN 'no "## ... ##" markers (FX nodes, record_function ranges of compiled graphs) above any op'
  WHEN @report = 'optimizable'
    THEN 'no falling phase of the GPU queue (a peak of 4 or more queued kernels draining to 0): nothing to rank'
  WHEN @report = 'launch' THEN 'no GPU work linked to a launch call in this trace'
  WHEN @report = 'steps'
    THEN 'no serving-engine steps (step annotations, worker execute_model frames, a thread that launches CUDA / HIP '
         || 'graphs and waits for the GPU) and no ProfilerStep#N annotations: nothing to divide the trace by'
  WHEN @report = 'cpu_ops'
    THEN 'no host ops (cpu_op, annotation, runtime or driver events with a duration) in this trace'
  WHEN @report IN ('memory', 'memory_ops', 'memory_leaks') AND NOT EXISTS (SELECT 1 FROM memory_event)
    THEN 'no [memory] events: record with profile_memory=True'
  WHEN @report = 'memory_leaks' AND EXISTS (SELECT 1 FROM memory_event WHERE addr IS NULL)
    THEN 'the [memory] events have no Addr (2021-era traces): which free releases which allocation is unknown'
  WHEN @report = 'memory_leaks' THEN 'every allocation is freed later in the trace'
  WHEN @report LIKE 'diff_tree%' AND EXISTS (SELECT 1 FROM tree_diff WHERE source = 'trace1')
       AND EXISTS (SELECT 1 FROM tree_diff WHERE source = 'trace2')
       AND NOT EXISTS (SELECT 1 FROM tree_diff WHERE lca_uid IS NOT NULL)
    THEN 'the two call trees share no root, so no GPU work has an ancestor in both (see the note above)'
  WHEN @report LIKE 'diff_tree%' THEN 'no GPU work under the call tree of either trace'
  WHEN @report LIKE 'diff%' THEN 'no events on either side for the chosen @control_rank / @test_rank, steps and @device'
END;
