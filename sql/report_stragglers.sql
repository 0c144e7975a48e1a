-- per rank: how many profiler steps its last long communication kernel started among the @candidates latest, and whether HTA would name it a potential straggler (HTA get_potential_stragglers); @candidates (default 2), @steps
-- HTA's get_potential_stragglers (find_stragglers_with_late_start_comm_kernels), over every loaded
-- rank: the events of the selected ProfilerSteps (@steps: 'all' by default, every complete step,
-- or one step number; GPU work takes its launch's step; the last step is left out when there are
-- two or more, view hta_step_cut, as HTA reads a trace) give t_min (their first start, all ranks) and
-- the mean step time ((last end - t_min) / steps). Long communication kernels: gpu_class
-- communication (HTA: names starting ncclKernel; tlsql's class also has ncclDevKernel_* and RCCL's),
-- stream > 0, step > 0 (HTA leaves step 0 out), dur >= 1% of the mean step time. Per rank, stream,
-- step and kernel name the last of them (latest start); per (stream, name) the mean over steps of
-- the sample stddev across ranks of its duration / mean step time; the (stream, name) with the
-- largest is the metric kernel (ties, and a single rank where no stddev exists: the larger total
-- duration, then the name). Its normalized start, (ts - t_min) / mean step time, per rank and step:
-- a rank is late in a step when its start is at least the @candidates-th latest of the step (all
-- ranks when fewer). `late_steps` counts those steps; `potential_straggler` marks the first
-- @candidates ranks by late_steps (ties: the lower rank, HTA's stable order). The collectives report's
-- per-instance straggler_rank is the rank that entered each collective last; this is HTA's step
-- level vote on one kernel.
WITH cut AS MATERIALIZED (SELECT t.id AS trace, t.rank, c.last_step_start FROM trace t JOIN hta_step_cut c ON c.trace = t.id),
ev AS MATERIALIZED (
  SELECT e.uid, e.trace, x.rank, e.kind, e.name, e.stream, e.ts, e.end, e.dur,
         CASE WHEN e.kind IN ('kernel', 'memcpy', 'memset') THEN r.step ELSE e.step END AS step,
         CASE WHEN e.kind IN ('kernel', 'memcpy', 'memset') THEN r.ts ELSE e.ts END AS host_ts
  FROM event e JOIN cut x ON x.trace = e.trace
  LEFT JOIN launch_link l ON l.gpu = e.uid AND e.kind IN ('kernel', 'memcpy', 'memset')
  LEFT JOIN event r ON r.uid = l.runtime
  WHERE e.kind NOT IN ('meta', 'flow', 'counter') AND e.ts IS NOT NULL),
sel AS MATERIALIZED (
  SELECT ev.* FROM ev JOIN cut x ON x.trace = ev.trace
  WHERE ev.step IS NOT NULL AND (x.last_step_start IS NULL OR ev.host_ts < x.last_step_start)
    AND (coalesce(@steps, 'all') = 'all' OR ev.step = @steps)),
span AS (SELECT min(ts) AS t_min, (max(end) - min(ts)) * 1.0 / count(DISTINCT step) AS mean_step FROM sel),
long AS (SELECT s.rank, s.stream, s.step, s.name, s.ts, s.dur, s.uid
         FROM sel s, span
         WHERE s.kind = 'kernel' AND gpu_class_of(s.kind, s.name) = 'communication'
           AND s.stream > 0 AND s.step > 0 AND s.dur >= 0.01 * span.mean_step),
last AS MATERIALIZED (
  SELECT l.rank, l.stream, l.step, l.name, l.ts, l.dur, l.uid,
         (l.ts - span.t_min) / span.mean_step AS normalized_start, l.dur / span.mean_step AS normalized_dur
  FROM (SELECT *, row_number() OVER (PARTITION BY rank, stream, step, name ORDER BY ts DESC, uid DESC) AS i
        FROM long) l, span
  WHERE l.i = 1),
spread AS (SELECT stream, name, avg(sd) AS mean_sd, sum(total) AS total
           FROM (SELECT stream, step, name, stddev(normalized_dur) AS sd, sum(dur) AS total
                 FROM last GROUP BY stream, step, name)
           GROUP BY stream, name),
metric AS (SELECT stream, name FROM spread ORDER BY mean_sd IS NULL, mean_sd DESC, total DESC, name LIMIT 1),
cand AS MATERIALIZED (
  SELECT l.* FROM last l JOIN metric m ON m.stream = l.stream AND m.name = l.name),
-- late: at least the k-th latest start (ties at the threshold are all late, as HTA's >=)
late AS (SELECT r.*, r.normalized_start >= coalesce(
                  (SELECT normalized_start FROM cand c WHERE c.step = r.step
                   ORDER BY normalized_start DESC LIMIT 1 OFFSET max(coalesce(@candidates, 2), 1) - 1),
                  (SELECT min(normalized_start) FROM cand c WHERE c.step = r.step)) AS is_late
         FROM cand r),
per_rank AS (SELECT rank, sum(is_late) AS late_steps, count(*) AS steps, avg(normalized_start) AS mean_normalized_start,
                    min(name) AS kernel, min(stream) AS stream
             FROM late GROUP BY rank)
SELECT rank, late_steps, steps, mean_normalized_start, stream, kernel,
       row_number() OVER (ORDER BY late_steps DESC, rank) <= max(coalesce(@candidates, 2), 1) AS potential_straggler
FROM per_rank ORDER BY rank;
