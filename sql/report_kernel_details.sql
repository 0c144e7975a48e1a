-- per kernel name, grid and block (rocprof's kernel stats, TraceLens's kernel details with launcher detail): count, total / mean / min / max µs, % of all kernel time; @top @steps
-- grid / block: the kernel's "grid" / "block" args (Kineto's on CUDA and ROCm; the rocprofv3 and
-- Nsight readers store them under the same names: rocprof's grid_size / workgroup_size), else its
-- launch call's (TraceLens reads them from the launch call; Kineto writes them on both). JSON
-- arrays, NULL where neither records them. One kernel launched with two shapes is two rows.
-- @steps: 'all' (default) or 'complete' (as the kernels report). Largest total first (@top, default 50).
WITH k AS (SELECT k.trace, k.name, k.dur, coalesce(k.grid, r.args -> '$.grid') AS grid,
                  coalesce(k.block, r.args -> '$.block') AS block
           FROM kernel k LEFT JOIN event r ON r.uid = k.runtime
           WHERE coalesce(@steps, 'all') = 'all' OR k.uid IN (SELECT uid FROM gpu_steps WHERE complete)),
     tot AS (SELECT sum(dur) AS ns FROM k)
SELECT name, grid, block, count(*) AS count, round(sum(dur) / 1e3, 3) AS total_us, round(avg(dur) / 1e3, 3) AS mean_us,
       round(min(dur) / 1e3, 3) AS min_us, round(max(dur) / 1e3, 3) AS max_us,
       round(100.0 * sum(dur) / (SELECT ns FROM tot), 3) AS pct
FROM k GROUP BY name, grid, block ORDER BY sum(dur) DESC, name LIMIT coalesce(@top, 50);
