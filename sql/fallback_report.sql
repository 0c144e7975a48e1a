-- A report that has nothing to show on the loaded traces, and the report that stands in for it:
-- the shell runs that one instead and says why on stderr ("ops: WHY"); the HTML page shows it in
-- the report's section under that line. One row: report (NULL: run the report asked for), why.
-- ops: its columns are GPU time; a trace without GPU events (a CPU-only profile) gets per-op CPU
-- time, torch.profiler's key_averages table (cpu_ops).
SELECT CASE WHEN @report = 'ops' AND NOT EXISTS (SELECT 1 FROM event WHERE kind IN ('kernel', 'memcpy', 'memset'))
            THEN 'cpu_ops' END AS report,
       'no GPU events (kernels, memcpys, memsets) in this trace: per-op CPU time instead (.report cpu_ops)' AS why;
