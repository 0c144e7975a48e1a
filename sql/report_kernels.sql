-- per kernel name: count, total / mean / min / max µs, TFLOP/s, GB/s, achieved % (inductor's --analysis); @top rows, @iteration / @phase
-- @iteration / @phase: only the kernels launched inside those serving-engine steps (engine_step_gpu).
-- (Grouped in a subquery: so the event table hands the kernels over grouped by name, where an
-- ORDER BY sum(dur) on the grouping query would make SQLite sort them by name first. From event
-- rather than the kernel view, whose launch-link join SQLite keeps though nothing here reads it.)
SELECT name, count, total_us, mean_us, min_us, max_us, tflops, gbps, achieved_pct
FROM (SELECT name, count(*) AS count, sum(dur) AS ns,
             round(sum(dur) / 1e3, 3) AS total_us, round(avg(dur) / 1e3, 3) AS mean_us,
             round(min(dur) / 1e3, 3) AS min_us, round(max(dur) / 1e3, 3) AS max_us,
             round(sum(f) / sum(dur) / 1e3, 3) AS tflops, round(sum(b) / sum(dur), 3) AS gbps,
             round(avg(pct), 2) AS achieved_pct
      FROM (SELECT name, dur, flops(uid) AS f, bytes(uid) AS b, achieved_pct(uid) AS pct FROM event
            WHERE kind = 'kernel'
              AND ((@iteration IS NULL AND @phase IS NULL)
                   OR uid IN (SELECT gpu FROM engine_step_gpu
                              WHERE (@iteration IS NULL OR iteration = @iteration) AND (@phase IS NULL OR phase = @phase))))
      GROUP BY name)
ORDER BY ns DESC LIMIT coalesce(@top, 50);
