-- per rank and user annotation name: count, sum / max / min / mean µs and stddev of the annotation's own duration (HTA's GPU user annotation breakdown); @side 'gpu' (default) / 'cpu', @steps, @rank
-- HTA's get_gpu_user_annotation_breakdown: every event of category gpu_user_annotation (kind
-- gpu_annotation: the annotation's span on the GPU stream, Kineto writes one per record_function
-- range that ran GPU work), @side 'cpu' its CPU twins (user_annotation, HTA's use_gpu_annotation =
-- False). Each event counts with its own duration: nested annotations are counted each (an
-- Optimizer.step inside a ProfilerStep counts in both rows), and overlap is not removed.
-- stddev is the sample one (n - 1; 0 for one event, as HTA fills it). @steps: 'complete' (default:
-- HTA drops the events that start at or after the last ProfilerStep's start, its GPU annotation
-- counted too (view hta_step_cut), when the trace has two or more steps) or 'all'. HTA groups the
-- names past its 1,000th into "others"; every name is a row here.
WITH a AS (SELECT e.trace, e.name, e.dur
           FROM event e JOIN hta_step_cut c ON c.trace = e.trace
           WHERE e.kind = CASE coalesce(@side, 'gpu') WHEN 'cpu' THEN 'annotation' ELSE 'gpu_annotation' END
             AND e.dur IS NOT NULL
             AND (coalesce(@steps, 'complete') = 'all' OR c.last_step_start IS NULL OR e.ts < c.last_step_start)),
g AS (SELECT trace, name, count(*) AS count, sum(dur) AS ns, max(dur) AS max_ns, min(dur) AS min_ns,
             coalesce(stddev(dur), 0) / 1e3 AS stddev, avg(dur) / 1e3 AS mean_us
      FROM a GROUP BY trace, name)
SELECT t.rank, g.name, g.count, g.ns / 1e3 AS sum_us, g.max_ns / 1e3 AS max_us, g.min_ns / 1e3 AS min_us,
       g.stddev, g.mean_us
FROM g JOIN trace t ON t.id = g.trace
WHERE @rank IS NULL OR t.rank = @rank
ORDER BY t.rank, t.id, g.name;
