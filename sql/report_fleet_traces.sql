-- per rank, one row a trace (what `tlsql fleet` stores as fleet.db's fleet_traces): rank, world size, GPUs, span, ProfilerSteps, events, GPU busy and communication ms, loader repairs
-- The fleet's map step (docs/fleet.md): each worker runs this on one rank file, and the reduce
-- keeps its rows; on a folder it gives every rank's row in one process, which is how the fleet's
-- table is checked. span_ms, steps, events: trace_stats (as the summary report); gpu_busy_ms: the
-- union of the trace's kernels, memcpys and memsets (as summary); comm_ms: the union of its
-- communication kernels (collective_kernel, the collectives report's view); repairs: the loader's
-- health counts summed (their detail: fleet_repairs).
WITH st AS (SELECT id AS trace, trace_stats(id) AS j FROM trace),
busy AS (SELECT trace, union_ns(ts, end) AS ns FROM gpu GROUP BY trace),
comm AS (SELECT trace, union_ns(ts, ts + dur) AS ns, count(*) AS kernels FROM collective_kernel GROUP BY trace),
fix AS (SELECT trace, sum(count) AS n FROM health GROUP BY trace),
devs AS (SELECT trace, group_concat(DISTINCT name) AS devices FROM device GROUP BY trace)
SELECT t.rank, t.world_size, d.devices,
       round(((s.j ->> 'span_end') - (s.j ->> 'span_start')) / 1e6, 3) AS span_ms,
       s.j ->> 'steps' AS steps, (SELECT sum(value) FROM json_each(s.j -> 'events')) AS events,
       round(coalesce(b.ns, 0) / 1e6, 3) AS gpu_busy_ms, round(coalesce(c.ns, 0) / 1e6, 3) AS comm_ms,
       coalesce(c.kernels, 0) AS comm_kernels, coalesce(f.n, 0) AS repairs
FROM trace t LEFT JOIN st s ON s.trace = t.id LEFT JOIN busy b ON b.trace = t.id
LEFT JOIN comm c ON c.trace = t.id LEFT JOIN fix f ON f.trace = t.id LEFT JOIN devs d ON d.trace = t.id
ORDER BY t.rank, t.id;
