-- per "## name ##" marker (FX node / file / record_function markers of compiled graphs) and op: count and GPU µs of the ops it encloses; @top
-- An op's markers are the events named "## ... ##" above it in the call tree (enclosing it on its
-- thread, or the thread's root annotation for backward threads); marker = the innermost,
-- marker_path = outermost > ... > innermost. Ops: counted_op (each GPU nanosecond once) that ran
-- GPU work, so count is what gpu_us sums over (docs/reports.md "Column names"): counted_op's rows,
-- read from perf_rows with its hidden marker_uid, so that only the ops under a marker call the
-- per-uid marker functions (on a trace without markers they took 0.08 s of a 200 MB trace's
-- 53K counted ops, to find none).
WITH m AS (SELECT o.uid, o.name, p.gpu_ns, marker_path(o.uid) AS marker_path, marker(o.uid) AS marker
           FROM perf_rows('main') p CROSS JOIN event o ON o.uid = p.uid
           WHERE p.counted = 1 AND p.gpu_ns > 0 AND p.marker_uid IS NOT NULL)
SELECT marker, marker_path, name AS op, count(*) AS count, round(sum(gpu_ns) / 1e3, 3) AS gpu_us
FROM m WHERE marker IS NOT NULL
GROUP BY marker_path, name ORDER BY sum(gpu_ns) DESC, marker_path, name LIMIT coalesce(@top, 50);
