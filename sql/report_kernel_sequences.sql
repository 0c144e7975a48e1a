-- per op whose name contains @op: the sequences of GPU work its calls launched (the op name, then the kernels in GPU start order), how often each ran, their GPU and CPU µs: fusion candidates (HTA get_frequent_cuda_kernel_sequences); @op, @length (default 3), @top, @rank, @steps
-- HTA's rule: the candidate ops are the host events whose name contains @op (case-sensitive); of
-- those, only the shallowest are roots (the least depth on their own thread among the candidates of
-- the rank, so an op nested in another candidate is not counted twice; depth counts the events
-- above on the same thread, as HTA's per-thread call stacks do), and only those that launched at
-- least @length GPU events (kernels, memcpys, memsets) in their subtree. A root's pattern is its
-- name and the names of every GPU event its subtree launched, by GPU start, joined with '|'; the
-- whole sequence is the pattern (HTA does not slide a window over it). Per rank and pattern:
-- `count` (roots), `gpu_us` (their GPU events' durations summed), `cpu_us` (the roots' durations
-- summed), `kernels` (the sequence's length); most frequent first, then by pattern. @steps:
-- 'complete' (default: ops starting before the last ProfilerStep's start, HTA's, which counts its
-- GPU annotation too (view hta_step_cut), and the GPU events launched before it, as HTA reads a
-- trace with two or more steps) or 'all'. @top: at most that many rows (default all: HTA returns
-- every pattern; its top_k only picks what it draws).
WITH cand AS MATERIALIZED (
  SELECT e.uid, e.trace, e.name, e.dur, c.last_step_start,
         (SELECT count(*) FROM ancestors(e.uid, (SELECT name FROM tlsql_schema)) a JOIN event ae ON ae.uid = a.uid
          WHERE ae.pid IS e.pid AND ae.tid IS e.tid) AS tdepth
  FROM event e JOIN hta_step_cut c ON c.trace = e.trace
  WHERE e.kind IN ('cpu_op', 'annotation', 'python', 'runtime', 'driver') AND instr(e.name, @op) > 0
    AND (coalesce(@steps, 'complete') = 'all' OR c.last_step_start IS NULL OR e.ts < c.last_step_start)),
roots AS MATERIALIZED (
  SELECT c.* FROM cand c JOIN (SELECT trace, min(tdepth) AS d FROM cand GROUP BY trace) m
                           ON m.trace = c.trace AND c.tdepth = m.d),
launched AS MATERIALIZED (
  SELECT r.uid AS root, g.uid, g.name, g.ts, g.dur
  FROM roots r, descendants(r.uid, (SELECT name FROM tlsql_schema)) d
  JOIN launch_link l ON l.runtime = d.uid JOIN event g ON g.uid = l.gpu
  WHERE coalesce(@steps, 'complete') = 'all' OR r.last_step_start IS NULL
        OR (SELECT rt.ts FROM event rt WHERE rt.uid = l.runtime) < r.last_step_start),
seq AS (SELECT root, n, gpu_ns, names FROM (
          SELECT root, count(*) OVER w AS n, sum(dur) OVER w AS gpu_ns,
                 group_concat(name, '|') OVER w AS names,
                 row_number() OVER (PARTITION BY root ORDER BY ts, uid) AS i
          FROM launched
          WINDOW w AS (PARTITION BY root ORDER BY ts, uid ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING))
        WHERE i = 1),
pat AS (SELECT r.trace, r.name || '|' || s.names AS pattern, count(*) AS count, sum(s.gpu_ns) / 1e3 AS gpu_us,
               sum(r.dur) / 1e3 AS cpu_us, s.n AS kernels
        FROM roots r JOIN seq s ON s.root = r.uid
        WHERE s.n >= coalesce(@length, 3)
        GROUP BY r.trace, pattern)
SELECT t.rank, p.pattern, p.count, p.gpu_us, p.cpu_us, p.kernels
FROM pat p JOIN trace t ON t.id = p.trace
WHERE @rank IS NULL OR t.rank = @rank
ORDER BY t.rank, t.id, p.count DESC, p.pattern
LIMIT coalesce(@top, -1);
