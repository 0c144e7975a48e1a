-- per GPU kernel / memcpy / memset: the innermost GPU user annotation it ran under (HTA's get_gpu_kernels_with_user_annotations), and the annotation's path; @rank, @steps, @top
-- HTA's rule: a GPU event is under every gpu_user_annotation (kind gpu_annotation) of its own
-- stream (same pid and tid) whose span [ts, end) overlaps its own [ts, end); of those it takes the
-- shortest (HTA assigns the annotations longest first, so the last, shortest, one stays: the leaf
-- of nested annotations). Equal durations: the one that starts last, then the larger uid (HTA's
-- sort leaves the order of such ties unsaid). `user_annotation` is NULL under none (HTA: -1);
-- `annotations` lists every overlapping one, longest first (' > '). @steps: 'complete' (default:
-- the GPU events launched before the last ProfilerStep's start (HTA's: its GPU annotation's too), and the annotations starting
-- before it, as HTA reads a trace with two or more steps; view hta_step_cut) or 'all'. @top: at most
-- that many rows (default all), by rank then GPU start.
WITH ann AS MATERIALIZED (
  SELECT e.uid, e.trace, e.pid, e.tid, e.ts, e.end, e.dur, e.name
  FROM event e JOIN hta_step_cut c ON c.trace = e.trace
  WHERE e.kind = 'gpu_annotation' AND e.dur IS NOT NULL
    AND (coalesce(@steps, 'complete') = 'all' OR c.last_step_start IS NULL OR e.ts < c.last_step_start)),
g AS (SELECT g.uid, g.trace, t.rank, g.pid, g.tid, g.stream, g.name, g.ts, g.dur, g.end
      FROM gpu g JOIN trace t ON t.id = g.trace JOIN hta_step_cut c ON c.trace = g.trace
      WHERE (@rank IS NULL OR t.rank = @rank)
        AND (coalesce(@steps, 'complete') = 'all' OR c.last_step_start IS NULL
             OR coalesce((SELECT r.ts FROM launch_link l JOIN event r ON r.uid = l.runtime WHERE l.gpu = g.uid)
                         < c.last_step_start, 0)))
SELECT g.rank, g.uid, g.name, g.stream, g.ts, g.dur,
       (SELECT a.name FROM ann a
        WHERE a.trace = g.trace AND a.pid IS g.pid AND a.tid IS g.tid AND a.ts < g.end AND g.ts < a.end
        ORDER BY a.dur, a.ts DESC, a.uid DESC LIMIT 1) AS user_annotation,
       (SELECT group_concat(name, ' > ') FROM (
          SELECT a.name FROM ann a
          WHERE a.trace = g.trace AND a.pid IS g.pid AND a.tid IS g.tid AND a.ts < g.end AND g.ts < a.end
          ORDER BY a.dur DESC, a.ts, a.uid)) AS annotations
FROM g ORDER BY g.rank, g.trace, g.ts, g.uid
LIMIT coalesce(@top, -1);
