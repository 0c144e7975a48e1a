-- main vs other per name: counts, total µs, differences, change category (HTA compare_traces + ops_diff), GPU first, largest |diff_duration| first, then a totals row per device side; params @top @sort @normalize @device @control_rank @test_rank @control_step @test_step @short @agg @totals
-- Parameters (.parameter set): @top rows (default 30; 'all'); @sort 'name' orders by name (HTA's
-- order) instead of GPU work first, then the largest |diff_duration|; @normalize 0 keys by the
-- raw name (default 1: normalize_name takes out addresses "0x7cc1..." and python line numbers,
-- which differ between runs of the same program; raw_name then shows one of the names behind a
-- row when it differs); @device 'CPU' | 'GPU' | 'ALL' (default); @control_rank /
-- @test_rank a rank or 'all' (default: the first rank of each side); @control_step / @test_step
-- a ProfilerStep number or 'all' (default: the first step of each side; a side without
-- ProfilerSteps compares all its events); @short 1 keys by
-- short_name(name); @agg 'avg' averages over the chosen ranks (default 'sum', as HTA).
-- @totals 0 drops the totals rows: after the rows, one per device side (GPU, then CPU), name
-- '(total)', summing every name of that side, also those past @top. Counts are integers (HTA
-- writes pandas' floats, 386.0), but averages (@agg 'avg') may have fractions.
-- HTA's own table: @sort 'name', @top 'all', @normalize 0, @totals 0 (tests/cases/diff_hta_*).
-- CPU = ops, annotations, python frames and runtime / driver calls; GPU = kernels, memcpys,
-- memsets (HTA: events without / with a stream). A GPU event's step is its launch's. Events are
-- summed per raw name first, so the keys are computed once per name, not per event, from
-- name_totals (the events per trace, step, kind and name: a hash over a loaded trace's store where
-- a GROUP BY over event sorted every event's name).
WITH
c_traces AS (SELECT id FROM main.trace
             WHERE @control_rank = 'all' OR rank = @control_rank
                OR (@control_rank IS NULL AND id = (SELECT id FROM main.trace ORDER BY rank, id LIMIT 1))),
t_traces AS (SELECT id FROM other.trace
             WHERE @test_rank = 'all' OR rank = @test_rank
                OR (@test_rank IS NULL AND id = (SELECT id FROM other.trace ORDER BY rank, id LIMIT 1))),
-- Each side's totals once (the first step and the names both read them).
c_totals AS MATERIALIZED (SELECT * FROM name_totals('main')),
t_totals AS MATERIALIZED (SELECT * FROM name_totals('other')),
c_first AS (SELECT min(step) AS s FROM c_totals WHERE step IS NOT NULL AND trace IN c_traces),
t_first AS (SELECT min(step) AS s FROM t_totals WHERE step IS NOT NULL AND trace IN t_traces),
kinds(kind, side) AS (VALUES ('cpu_op', 'CPU'), ('annotation', 'CPU'), ('python', 'CPU'), ('runtime', 'CPU'),
                              ('driver', 'CPU'), ('kernel', 'GPU'), ('memcpy', 'GPU'), ('memset', 'GPU')),
c_names AS (SELECT e.name AS raw, k.side, sum(e.events) AS n, sum(e.dur) AS dur
         FROM c_totals e JOIN kinds k ON k.kind = e.kind
         WHERE e.trace IN c_traces AND coalesce(@device, 'ALL') IN ('ALL', k.side)
           AND (@control_step = 'all' AND e.step IS NOT NULL OR e.step = coalesce(@control_step, (SELECT s FROM c_first))
                OR (@control_step IS NULL OR @control_step = 'all') AND (SELECT s FROM c_first) IS NULL)
         GROUP BY e.name, k.side),
c_ev AS (SELECT CASE WHEN @short = 1 THEN short_name(iif(@normalize = 0, raw, normalize_name(raw)))
                     ELSE iif(@normalize = 0, raw, normalize_name(raw)) END AS key, raw, n, dur, side
         FROM c_names),
t_names AS (SELECT e.name AS raw, k.side, sum(e.events) AS n, sum(e.dur) AS dur
         FROM t_totals e JOIN kinds k ON k.kind = e.kind
         WHERE e.trace IN t_traces AND coalesce(@device, 'ALL') IN ('ALL', k.side)
           AND (@test_step = 'all' AND e.step IS NOT NULL OR e.step = coalesce(@test_step, (SELECT s FROM t_first))
                OR (@test_step IS NULL OR @test_step = 'all') AND (SELECT s FROM t_first) IS NULL)
         GROUP BY e.name, k.side),
t_ev AS (SELECT CASE WHEN @short = 1 THEN short_name(iif(@normalize = 0, raw, normalize_name(raw)))
                     ELSE iif(@normalize = 0, raw, normalize_name(raw)) END AS key, raw, n, dur, side
         FROM t_names),
c_div AS (SELECT CASE WHEN @agg = 'avg' THEN (SELECT count(*) FROM c_traces) ELSE 1 END AS n),
t_div AS (SELECT CASE WHEN @agg = 'avg' THEN (SELECT count(*) FROM t_traces) ELSE 1 END AS n),
c AS (SELECT key, iif(@agg = 'avg', sum(n) * 1.0 / (SELECT n FROM c_div), sum(n)) AS counts, sum(dur) / 1e3 / (SELECT n FROM c_div) AS us,
             min(raw) AS raw, max(side) AS side
      FROM c_ev GROUP BY key),
t AS (SELECT key, iif(@agg = 'avg', sum(n) * 1.0 / (SELECT n FROM t_div), sum(n)) AS counts, sum(dur) / 1e3 / (SELECT n FROM t_div) AS us,
             min(raw) AS raw, max(side) AS side
      FROM t_ev GROUP BY key),
keys AS (SELECT key FROM c UNION SELECT key FROM t),
rows AS (SELECT k.key, coalesce(c.counts, iif(@agg = 'avg', 0.0, 0)) AS cc, coalesce(c.us, 0.0) AS cd,
                coalesce(t.counts, iif(@agg = 'avg', 0.0, 0)) AS tc,
                coalesce(t.us, 0.0) AS td, max(coalesce(c.side, ''), coalesce(t.side, '')) AS side,
                coalesce(c.raw, t.raw) AS raw
         FROM keys k LEFT JOIN c ON c.key = k.key LEFT JOIN t ON t.key = k.key),
shown AS (SELECT 0 AS total, key, cc, cd, tc, td, side, raw FROM rows
          ORDER BY CASE WHEN @sort = 'name' THEN key END, side = 'GPU' DESC, abs(td - cd) DESC, key
          LIMIT CASE WHEN @top = 'all' THEN -1 ELSE coalesce(@top, 30) END),
totals AS (SELECT 1 AS total, '(total)' AS key, sum(cc) AS cc, sum(cd) AS cd, sum(tc) AS tc, sum(td) AS td, side,
                  NULL AS raw
           FROM rows WHERE coalesce(@totals, 1) <> 0 GROUP BY side),
out AS (SELECT * FROM shown UNION ALL SELECT * FROM totals)
SELECT key AS name, cc AS Control_counts, cd AS Control_total_duration, tc AS Test_counts, td AS Test_total_duration,
       tc - cc AS diff_counts, td - cd AS diff_duration,
       CASE WHEN tc > cc THEN '+' WHEN tc < cc THEN '-' ELSE '=' END AS counts_change_categories,
       CASE WHEN cc = 0 AND tc > 0 THEN 'added' WHEN cc > 0 AND tc = 0 THEN 'deleted'
            WHEN tc > cc THEN 'increased' WHEN tc < cc THEN 'decreased' ELSE 'unchanged' END AS ops_diff,
       side AS device, CASE WHEN raw <> key AND @short IS NOT 1 THEN raw END AS raw_name
FROM out
ORDER BY total, CASE WHEN total = 0 AND @sort = 'name' THEN key END, side = 'GPU' DESC,
         CASE WHEN total = 0 THEN abs(td - cd) END DESC, key;
