-- per op name: calls, self and total CPU ms, CPU % of all self time, average ms (torch.profiler's key_averages().table()); what `ops` shows for a trace without GPU events; @top rows
-- Host ops: events of kind cpu_op, annotation (record_function ranges, ProfilerStep#N), runtime
-- and driver (cudaLaunchKernel, ...): torch.profiler's CPU FunctionEvents. Python frames are not
-- (torch shows them as an op's stack, not as rows) and are passed over: an op's children are the
-- nearest host ops below it, through any python frames between, on its own thread (torch nests
-- events per thread; tlsql hangs a secondary thread's roots, such as the backward thread's, under
-- the main thread's open annotation, as HTA does: they are not that annotation's children here).
-- self: the op's duration less its
-- children's (at least 0; GPU work launched is not subtracted); total: its duration, summed over
-- its calls (an op inside one of the same name counts in both, as torch's CPU total does).
-- self_cpu_pct and cpu_total_pct are of the sum of every host op's self time, torch's "Self CPU
-- time total" (so cpu_total_pct of a ProfilerStep is near 100). cpu_avg_ms: total / calls.
-- Largest self time first.
WITH h AS MATERIALIZED (
  SELECT uid, name, dur, parent, pid, tid FROM event
  WHERE kind IN ('cpu_op', 'annotation', 'runtime', 'driver') AND dur IS NOT NULL),
up AS (
  SELECT h.dur, h.pid, h.tid, q.uid AS host_parent, q.pid AS parent_pid, q.tid AS parent_tid
  FROM h LEFT JOIN event p ON p.uid = h.parent
  LEFT JOIN event q ON q.uid = CASE WHEN p.kind IN ('cpu_op', 'annotation', 'runtime', 'driver') THEN h.parent
                                    WHEN h.parent IS NOT NULL
                                    THEN (SELECT a.uid FROM ancestors(h.uid, (SELECT name FROM tlsql_schema)) a
                                          WHERE a.kind IN ('cpu_op', 'annotation', 'runtime', 'driver') LIMIT 1) END),
-- (each op's own duration, less each same-thread child's, summed per op: no join of every op
-- with its children, which SQLite ran as a nested scan)
per AS (
  SELECT max(name) AS name, max(0, sum(d)) AS self, sum(t) AS total
  FROM (SELECT uid, name, dur AS d, dur AS t FROM h
        UNION ALL
        SELECT host_parent, NULL, -dur, 0 FROM up
        WHERE host_parent IS NOT NULL AND parent_pid IS pid AND parent_tid IS tid)
  GROUP BY uid)
SELECT name, count(*) AS count, round(sum(self) / 1e6, 3) AS self_cpu_ms,
       round(100.0 * sum(self) / sum(sum(self)) OVER (), 2) AS self_cpu_pct, round(sum(total) / 1e6, 3) AS cpu_total_ms,
       round(100.0 * sum(total) / sum(sum(self)) OVER (), 2) AS cpu_total_pct,
       round(sum(total) / count(*) / 1e6, 3) AS cpu_avg_ms
FROM per GROUP BY name
ORDER BY sum(self) DESC, name LIMIT coalesce(@top, 50);
