-- per rank: the timeline report's rows with the rank first (what `timeline` prints when several traces are loaded); @steps @rank @linked @iteration @phase
-- GPU events: kernels, memcpys, memsets, by gpu_class(uid, 'tracelens'): memcpy = gpu_memcpy events;
-- communication = kernels the kernel_rule table names (NCCL / RCCL, vLLM's custom all-reduce, ...)
-- or that an op or annotation saying communication launched (TraceLens knows names only);
-- computation = the rest (memsets included, as TraceLens). Exposed communication: not
-- overlapped by computation; exposed memcpy: overlapped by neither. total = first GPU start to last
-- GPU end; idle = total - busy. @steps: 'all' (default, every GPU event), 'complete' (every
-- ProfilerStep but the last, as HTA), or a step number. @rank: one rank (default all). @linked 1:
-- only GPU events linked to a launch call (TraceLens's gpu_timeline, which leaves out kernels
-- launched before the profiling window; default 0: all, since they ran all the same). @iteration /
-- @phase: only the GPU work launched inside those serving-engine steps (engine_step_gpu; total
-- then spans that work). The timeline report is this table without the rank column: what it prints
-- for one trace (TraceLens's layout); with several traces loaded it prints this one instead
-- (sql/fallback_report.sql), so that each report's columns are the same whatever the parameters.
WITH sel AS (SELECT g.trace, g.ts, g.end AS e_end,
                    CASE gpu_class(g.uid, 'tracelens') WHEN 'memcpy' THEN 'memcpy'
                         WHEN 'communication' THEN 'comm' ELSE 'comp' END AS type
             FROM gpu_steps g
             WHERE (@rank IS NULL OR g.rank = @rank)
               AND (coalesce(@linked, 0) = 0 OR g.uid IN (SELECT gpu FROM launch_link))
               AND ((@iteration IS NULL AND @phase IS NULL)
                    OR g.uid IN (SELECT gpu FROM engine_step_gpu
                                 WHERE (@iteration IS NULL OR iteration = @iteration) AND (@phase IS NULL OR phase = @phase)))
               AND CASE coalesce(@steps, 'all')
                     WHEN 'all' THEN 1
                     WHEN 'complete' THEN g.complete
                     ELSE g.step = @steps END),
m AS (SELECT trace, max(e_end) - min(ts) AS total, union_ns(ts, e_end) AS busy,
             union_ns(ts, e_end) FILTER (WHERE type = 'comp') AS comp,
             union_ns(ts, e_end) FILTER (WHERE type IN ('comp', 'comm')) AS comp_comm,
             union_ns(ts, e_end) FILTER (WHERE type = 'comm') AS comm,
             union_ns(ts, e_end) FILTER (WHERE type = 'memcpy') AS mem
      FROM sel GROUP BY trace),
rows AS (SELECT trace, 1 AS i, 'computation_time' AS type, comp AS ns, total FROM m
         UNION ALL SELECT trace, 2, 'exposed_comm_time', comp_comm - comp, total FROM m
         UNION ALL SELECT trace, 3, 'exposed_memcpy_time', busy - comp_comm, total FROM m
         UNION ALL SELECT trace, 4, 'busy_time', busy, total FROM m
         UNION ALL SELECT trace, 5, 'idle_time', total - busy, total FROM m
         UNION ALL SELECT trace, 6, 'total_time', total, total FROM m
         UNION ALL SELECT trace, 7, 'total_comm_time', comm, total FROM m
         UNION ALL SELECT trace, 8, 'total_memcpy_time', mem, total FROM m)
SELECT t.rank, r.type, r.ns / 1e6 AS "time ms", 100.0 * r.ns / r.total AS percent
FROM rows r JOIN trace t ON t.id = r.trace
ORDER BY t.rank, t.id, r.i;
