-- per CUPTI profiler range (a kernel's counters, torch.profiler's profiler_metrics): the kernel, its launching ops (top and bottom level, HTA get_cupti_counter_data_with_operators), FLOPs from the SASS counters beside the perf model's, and every counter as JSON; @rank, @top
-- Ranges and ops: view cupti_range (HTA's pairing of the i-th range with the i-th cudaLaunchKernel
-- call; ops on the launch's thread); counters: view cupti_counter (one row per counter). sass_flops:
-- HTA's formula (CUDA_SASS_INSTRUCTION_COUNTER_FLOPS), the sum over the nine counters
-- smsp__sass_thread_inst_executed_op_{ffma,fmul,fadd,hfma,hmul,hadd,dfma,dmul,dadd}_pred_on.sum of
-- value x 2 for the fma ones, x 1 for the others. A range that lacks some of them sums those it
-- has (HTA's pandas sum gives NaN there); sass_counters says how many of the nine it had, and
-- sass_flops is NULL when it had none. model_gflop: the perf model's FLOPs of the bottom-level op
-- (flops(uid): docs/perf_models.md), NULL without a model. counters: every numeric counter of the
-- range as a JSON object (a column per counter would make the report's columns depend on the
-- trace: read one with counters ->> '$."dram__bytes_read.sum"', or the view cupti_counter).
WITH sass(counter, w) AS (VALUES
  ('smsp__sass_thread_inst_executed_op_ffma_pred_on.sum', 2), ('smsp__sass_thread_inst_executed_op_fmul_pred_on.sum', 1),
  ('smsp__sass_thread_inst_executed_op_fadd_pred_on.sum', 1), ('smsp__sass_thread_inst_executed_op_hfma_pred_on.sum', 2),
  ('smsp__sass_thread_inst_executed_op_hmul_pred_on.sum', 1), ('smsp__sass_thread_inst_executed_op_hadd_pred_on.sum', 1),
  ('smsp__sass_thread_inst_executed_op_dfma_pred_on.sum', 2), ('smsp__sass_thread_inst_executed_op_dmul_pred_on.sum', 1),
  ('smsp__sass_thread_inst_executed_op_dadd_pred_on.sum', 1)),
r AS MATERIALIZED (SELECT * FROM cupti_range WHERE @rank IS NULL OR rank = @rank),
f AS (SELECT c.uid, sum(c.value * s.w) AS flops, count(*) AS n
      FROM cupti_counter c JOIN sass s ON s.counter = c.counter WHERE c.uid IN (SELECT uid FROM r) GROUP BY c.uid)
SELECT r.rank, r.uid, r.name, r.dur / 1e3 AS dur_us, r.launch, top.name AS top_level_op, bottom.name AS bottom_level_op,
       r.op_stack, f.flops AS sass_flops, coalesce(f.n, 0) AS sass_counters,
       flops(r.bottom_level_op, (SELECT name FROM tlsql_schema)) / 1e9 AS model_gflop,
       (SELECT json_group_object(j.key, j.value) FROM event e, json_each(e.args) j
        WHERE e.uid = r.uid AND json_type(e.args) = 'object' AND j.type IN ('integer', 'real')) AS counters
FROM r LEFT JOIN f ON f.uid = r.uid LEFT JOIN event top ON top.uid = r.top_level_op
LEFT JOIN event bottom ON bottom.uid = r.bottom_level_op
ORDER BY r.rank, r.trace, r.ts, r.uid
LIMIT coalesce(@top, -1);
