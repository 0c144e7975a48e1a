-- per op and category: instances that ran GPU work, GPU time and share, GFLOP, TFLOP/s, TB/s, FLOPs/byte, achieved %, bound, modeled_gpu_pct, note (TraceLens ops summary); @top rows, @iteration / @phase
-- The counted ops (counted_op: each GPU ns once) that ran GPU work: count is how many, so gpu_us /
-- count is a mean (an op that ran on the host adds no GPU time; counted_op still holds it). The
-- figures are perf_sum's (udf/perf/perf_sum.h; docs/reports.md "Column names"): gflop the FLOPs
-- summed, tflops / tbps those of the instances that have them over their GPU time;
-- modeled_gpu_pct: the share of the row's GPU time in instances with a FLOPs model; note: why the
-- first instance without one has none, where the trace says (model_gap: 'no model: Concrete
-- Inputs missing').
-- @iteration / @phase: only the ops inside those serving-engine steps (engine_step_member; phase 'prefill',
-- 'decode' or 'mixed'). Unfiltered this is op_summary's rollup (the view, for queries): keep the
-- two alike; tests/shell/engine_steps.py checks they give the same rows.
-- name: work_name(uid), the op's name, or for work no op encloses (a launch call straight under a
-- record_function annotation or a python frame) "annotation > call": a runtime call is never an
-- op name (issue 46).
-- (One grouping pass over the scan: the total for gpu_pct is a window over the groups, where a
-- materialized CTE read twice cost a copy of every counted row and twice the time. Grouped by the
-- name alone: the category is the name's, so the groups are the same, and op_category runs once
-- a group instead of once a row as a GROUP BY key (20 ms of the 200 MB control's 53K counted ops).
-- perf_rows' uids are the events': no event row is read.)
SELECT name, category, count, gpu_us, gpu_pct, round((s ->> 'flops') / 1e9, 6) AS gflop,
       round(s ->> 'tflops', 3) AS tflops, round(s ->> 'tbps', 4) AS tbps,
       round(s ->> 'intensity', 3) AS flops_per_byte, round(s ->> 'achieved_pct', 2) AS achieved_pct,
       s ->> 'bound' AS bound, round(100.0 * (s ->> 'modeled_ns') / (s ->> 'gpu_ns'), 2) AS modeled_gpu_pct,
       (SELECT 'no model: ' || model_gap(e.name, e.args) FROM event e WHERE e.uid = gap_uid) AS note
FROM (SELECT w.name, op_category(w.name) AS category, count(*) AS count, round(sum(w.gpu_ns) / 1e3, 3) AS gpu_us,
             round(100.0 * sum(w.gpu_ns) / sum(sum(w.gpu_ns)) OVER (), 2) AS gpu_pct, perf_sum(w.uid, 'main') AS s,
             min(CASE WHEN w.flops IS NULL THEN w.uid END) AS gap_uid
      FROM (SELECT p.uid, work_name(p.uid, 'main') AS name, p.gpu_ns, p.flops
            FROM perf_rows('main') p
            WHERE p.counted = 1 AND p.gpu_ns > 0
              AND ((@iteration IS NULL AND @phase IS NULL)
                   OR p.uid IN (SELECT uid FROM engine_step_member
                                WHERE (@iteration IS NULL OR iteration = @iteration) AND (@phase IS NULL OR phase = @phase)))) w
      GROUP BY w.name)
ORDER BY gpu_us DESC LIMIT coalesce(@top, 50);
