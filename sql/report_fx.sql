-- per "## name ##" marker (FX node / file / record_function markers of compiled graphs) and op: count and GPU µs of the ops it encloses; @top
-- An op's markers are the events named "## ... ##" above it in the call tree (enclosing it on its
-- thread, or the thread's root annotation for backward threads); marker = the innermost,
-- marker_path = outermost > ... > innermost. Ops: counted_op (each GPU nanosecond once) that ran
-- GPU work, so count is what gpu_us sums over (docs/reports.md "Column names").
WITH m AS (SELECT o.uid, o.name, o.gpu_ns, marker_path(o.uid) AS marker_path, marker(o.uid) AS marker
           FROM counted_op o WHERE o.gpu_ns > 0)
SELECT marker, marker_path, name AS op, count(*) AS count, round(sum(gpu_ns) / 1e3, 3) AS gpu_us
FROM m WHERE marker IS NOT NULL
GROUP BY marker_path, name ORDER BY sum(gpu_ns) DESC, marker_path, name LIMIT coalesce(@top, 50);
