-- per rank, process group and training phase (forward / backward / optimizer) of the collectives: kernels, bytes, summed ms, exposed ms (not overlapped by the rank's computation); @steps @rank
-- As the overlap report: gpu_class's communication and computation kernels, @steps 'complete'
-- (default, HTA's selection), 'all' or a step number. process_group: "Process Group Name" ('' when
-- not recorded); phase: collective_kernel's (the launching op's). exposed_comm_ms: the group's
-- communication time not covered by the rank's computation kernels.
WITH overlap_group_rows AS MATERIALIZED (
  SELECT g.trace, g.uid, g.ts, g.end, g.dur,
         CASE gpu_class(g.uid) WHEN 'communication' THEN 'comm' WHEN 'compute' THEN 'comp' END AS cls
  FROM gpu_steps g
  WHERE (@rank IS NULL OR g.rank = @rank)
    AND CASE coalesce(@steps, 'complete') WHEN 'all' THEN 1 WHEN 'complete' THEN g.complete ELSE g.step = @steps END),
overlap_group_comm AS MATERIALIZED (
  SELECT o.trace, o.ts, o.end, o.dur, c.pg, c.phase, c.bytes
  FROM overlap_group_rows o JOIN collective_kernel c ON c.uid = o.uid WHERE o.cls = 'comm'),
k AS (SELECT DISTINCT trace, pg, phase FROM overlap_group_comm),
comp AS (SELECT trace, union_ns(ts, end) AS ns FROM overlap_group_rows WHERE cls = 'comp' GROUP BY trace),
-- Per group, its communication with all the rank's computation, one union each: the computation
-- rows are read again per group, not copied per group and sorted by it (SQLite's GROUP BY over
-- them was most of the report's work); union_ns sorts its own.
u AS (SELECT k.trace, k.pg, k.phase,
             (SELECT union_ns(x.ts, x.end)
              FROM (SELECT c.ts, c.end FROM overlap_group_comm c WHERE c.trace = k.trace AND c.pg = k.pg AND c.phase = k.phase
                    UNION ALL SELECT r.ts, r.end FROM overlap_group_rows r WHERE r.trace = k.trace AND r.cls = 'comp') x)
               AS with_comp
      FROM k)
SELECT t.rank, o.pg AS process_group, o.phase, count(*) AS kernels, sum(o.bytes) AS bytes,
       round(sum(o.dur) / 1e6, 6) AS comm_ms, round((u.with_comp - coalesce(c.ns, 0)) / 1e6, 6) AS exposed_comm_ms,
       o.trace
FROM overlap_group_comm o JOIN trace t ON t.id = o.trace JOIN u ON u.trace = o.trace AND u.pg = o.pg AND u.phase = o.phase
LEFT JOIN comp c ON c.trace = o.trace
GROUP BY o.trace, o.pg, o.phase
ORDER BY t.rank, o.trace, o.pg, o.phase;
