-- per kernel name: launches, total / mean / min / max µs, and the perf figures of its launches that have numbers: modeled_count, TFLOP/s, GB/s, achieved % (inductor's --analysis); @top rows, @steps, @iteration / @phase
-- tflops / gbps / achieved_pct: perf_sum (udf/perf/perf_sum.h), the FLOPs (bytes) of the launches that
-- have them over the GPU time of those same launches; modeled_count: how many launches that is
-- (kernels launched before the profiling window have no op and so no numbers). docs/reports.md,
-- "Column names". @steps: 'all' (default, every kernel: TraceLens's kernel summary), 'complete'
-- (every ProfilerStep but the last, as HTA's kernel breakdown reads a trace: the rule of
-- temporal / idle, view gpu_steps) or a step number. @iteration / @phase: only the kernels
-- launched inside those serving-engine steps (engine_step_gpu).
-- (Grouped in a subquery: so the event table hands the kernels over grouped by name, where an
-- ORDER BY sum(dur) on the grouping query would make SQLite sort them by name first. From event
-- rather than the kernel view, whose launch-link join SQLite keeps though nothing here reads it.)
SELECT name, count, total_us, mean_us, min_us, max_us, p ->> 'modeled' AS modeled_count,
       round((p ->> 'tflops'), 3) AS tflops, round((p ->> 'tbps') * 1e3, 3) AS gbps,
       round((p ->> 'achieved_pct'), 2) AS achieved_pct
FROM (SELECT name, count(*) AS count, sum(dur) AS ns,
             round(sum(dur) / 1e3, 3) AS total_us, round(avg(dur) / 1e3, 3) AS mean_us,
             round(min(dur) / 1e3, 3) AS min_us, round(max(dur) / 1e3, 3) AS max_us, perf_sum(uid) AS p
      FROM event
      WHERE kind = 'kernel'
        AND CASE coalesce(@steps, 'all')
              WHEN 'all' THEN 1
              WHEN 'complete' THEN uid IN (SELECT uid FROM gpu_steps WHERE complete)
              ELSE step = @steps END
        AND ((@iteration IS NULL AND @phase IS NULL)
             OR uid IN (SELECT gpu FROM engine_step_gpu
                        WHERE (@iteration IS NULL OR iteration = @iteration) AND (@phase IS NULL OR phase = @phase)))
      GROUP BY name)
ORDER BY ns DESC LIMIT coalesce(@top, 50);
