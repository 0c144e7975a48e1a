-- A report that has nothing to show on the loaded traces, and the report that stands in for it:
-- the shell runs that one instead and says why on stderr ("ops: WHY"); the HTML page shows it in
-- the report's section under that line. One row: report (NULL: run the report asked for), why
-- (NULL: nothing to say). Decided by the loaded traces alone, never by parameters: a host's
-- report_NAME table takes its columns from the report that runs (session/report_table.cpp).
-- ops: its columns are GPU time; a trace without GPU events (a CPU-only profile) gets per-op CPU
-- time, torch.profiler's key_averages table (cpu_ops).
-- timeline: TraceLens's layout is for one trace; with several, the rows per rank (timeline_ranks).
SELECT CASE WHEN @report = 'ops' AND NOT EXISTS (SELECT 1 FROM event WHERE kind IN ('kernel', 'memcpy', 'memset'))
              THEN 'cpu_ops'
            WHEN @report = 'timeline' AND (SELECT count(*) FROM trace) > 1 THEN 'timeline_ranks' END AS report,
       CASE @report WHEN 'ops'
         THEN 'no GPU events (kernels, memcpys, memsets) in this trace: per-op CPU time instead (.report cpu_ops)'
       END AS why;
