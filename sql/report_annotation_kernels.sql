-- per GPU kernel / memcpy / memset: the innermost GPU user annotation it ran under (HTA's get_gpu_kernels_with_user_annotations), and the annotation's path; @rank, @steps, @top
-- HTA's rule: a GPU event is under every gpu_user_annotation (kind gpu_annotation) of its own
-- stream (same pid and tid) whose span [ts, end) overlaps its own [ts, end); of those it takes the
-- shortest (HTA assigns the annotations longest first, so the last, shortest, one stays: the leaf
-- of nested annotations). Equal durations: the one that starts last, then the larger uid (HTA's
-- sort leaves the order of such ties unsaid). `user_annotation` is NULL under none (HTA: -1);
-- `annotations` lists every overlapping one, longest first (' > '). @steps: 'complete' (default:
-- the GPU events launched before the last ProfilerStep's start (HTA's: its GPU annotation's too),
-- and the annotations starting before it, as HTA reads a trace with two or more steps; view
-- hta_step_cut) or 'all'. @top: at most that many rows (default all), by rank then GPU start.
-- Cost: each annotation is listed in every time bucket it spans (per stream, buckets of
-- max(1 ms, its longest annotation / 256), so at most 257 per annotation), and a GPU event looks
-- only in the buckets it spans, through an index on the bucket: a scan of every annotation of the
-- stream per GPU event (50,000 kernels under 2,000 annotations: 34 s) is left for the rare GPU
-- event longer than 64 buckets.
WITH RECURSIVE
ann AS MATERIALIZED (
  SELECT e.uid, e.trace, e.pid, e.tid, e.ts, e.end, e.dur, e.name
  FROM event e JOIN hta_step_cut c ON c.trace = e.trace
  WHERE e.kind = 'gpu_annotation' AND e.dur IS NOT NULL AND e.dur >= 0
    AND (coalesce(@steps, 'complete') = 'all' OR c.last_step_start IS NULL OR e.ts < c.last_step_start)),
width AS MATERIALIZED (SELECT trace, pid, tid, max(1000000, max(dur) / 256) AS bw FROM ann GROUP BY trace, pid, tid),
spans(uid, trace, pid, tid, ts, end, dur, name, b, last) AS (
  SELECT a.uid, a.trace, a.pid, a.tid, a.ts, a.end, a.dur, a.name, a.ts / w.bw, a.end / w.bw
  FROM ann a JOIN width w ON w.trace = a.trace AND w.pid IS a.pid AND w.tid IS a.tid
  UNION ALL
  SELECT uid, trace, pid, tid, ts, end, dur, name, b + 1, last FROM spans WHERE b < last),
bucket AS MATERIALIZED (SELECT * FROM spans),
nums(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM nums WHERE k < 64),
g AS MATERIALIZED (
  SELECT g.uid, g.trace, t.rank, g.pid, g.tid, g.stream, g.name, g.ts, g.dur, g.end, w.bw
  FROM gpu g JOIN trace t ON t.id = g.trace JOIN hta_step_cut c ON c.trace = g.trace
  LEFT JOIN width w ON w.trace = g.trace AND w.pid IS g.pid AND w.tid IS g.tid
  WHERE (@rank IS NULL OR t.rank = @rank)
    AND (coalesce(@steps, 'complete') = 'all' OR c.last_step_start IS NULL
         OR coalesce((SELECT r.ts FROM launch_link l JOIN event r ON r.uid = l.runtime WHERE l.gpu = g.uid)
                     < c.last_step_start, 0))),
-- The annotations each GPU event overlaps (an annotation spanning several of its buckets once).
hit AS MATERIALIZED (
  SELECT DISTINCT g.uid AS gpu, a.uid, a.name, a.dur, a.ts
  FROM g CROSS JOIN nums n CROSS JOIN bucket a  -- CROSS: per GPU event, its buckets, through the index
  WHERE g.bw IS NOT NULL AND g.end / g.bw - g.ts / g.bw <= 64 AND n.k <= g.end / g.bw - g.ts / g.bw
    AND a.trace = g.trace AND a.pid IS g.pid AND a.tid IS g.tid AND a.b = g.ts / g.bw + n.k
    AND a.ts < g.end AND g.ts < a.end
  UNION
  SELECT g.uid, a.uid, a.name, a.dur, a.ts
  FROM g CROSS JOIN ann a
  WHERE a.trace = g.trace AND a.pid IS g.pid AND a.tid IS g.tid AND g.bw IS NOT NULL AND g.end / g.bw - g.ts / g.bw > 64 AND a.ts < g.end AND g.ts < a.end),
pick AS (SELECT gpu, name, row_number() OVER (PARTITION BY gpu ORDER BY dur, ts DESC, uid DESC) AS i,
                group_concat(name, ' > ') OVER (PARTITION BY gpu ORDER BY dur DESC, ts, uid
                                                ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS path
         FROM hit)
SELECT g.rank, g.uid, g.name, g.stream, g.ts, g.dur, p.name AS user_annotation, p.path AS annotations
FROM g LEFT JOIN pick p ON p.gpu = g.uid AND p.i = 1
ORDER BY g.rank, g.trace, g.ts, g.uid
LIMIT coalesce(@top, -1);
