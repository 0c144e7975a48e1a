-- per rank: % of communication time overlapped by computation (HTA get_comm_comp_overlap), communication kernels, bytes, ms, exposed ms, intra- / inter-node ms; then per rank, process group and phase; @steps @rank @gpus_per_node
-- GPU work by the one classifier (gpu_class_of: NCCL / RCCL, vLLM's custom all-reduce, ... are
-- communication; memcpys and memsets are neither side). comm_ms: the union of the communication
-- kernels; overlapped_ms: the part of it during which computation kernels run (HTA's numerator);
-- comp_comm_overlap_pct = 100 x overlapped / comm (HTA's name and meaning; NULL without
-- communication); exposed_comm_ms = comm - overlapped. intra_node_ms / inter_node_ms: the summed
-- durations of collectives whose "Process Group Ranks" fall on one node / several, with
-- @gpus_per_node ranks per node (NULL when either is unknown). @steps: 'complete' (default, HTA's
-- selection: the last ProfilerStep dropped), 'all', or a step number. Second result set, per rank,
-- process group and training phase of the launching op (optimizer: under an Optimizer.* range;
-- backward: a backward op or under autograd's evaluate_function; else forward): kernels, bytes,
-- summed and exposed ms.
DROP TABLE IF EXISTS temp.overlap_rows;
CREATE TEMP TABLE overlap_rows AS
SELECT g.trace, g.rank, g.uid, g.ts, g.end, g.dur,
       CASE gpu_class_of(g.kind, g.name) WHEN 'communication' THEN 'comm' WHEN 'compute' THEN 'comp' END AS cls
FROM gpu_steps g
WHERE (@rank IS NULL OR g.rank = @rank)
  AND CASE coalesce(@steps, 'complete') WHEN 'all' THEN 1 WHEN 'complete' THEN g.complete ELSE g.step = @steps END;
DELETE FROM temp.overlap_rows WHERE cls IS NULL;
DROP TABLE IF EXISTS temp.overlap_comm;
CREATE TEMP TABLE overlap_comm AS
SELECT o.trace, o.uid, o.ts, o.end, o.dur, c.pg, c.bytes,
       CASE WHEN @gpus_per_node IS NULL OR c.group_ranks IS NULL OR json_valid(c.group_ranks) = 0 THEN NULL
            WHEN (SELECT count(DISTINCT CAST(value AS INTEGER) / @gpus_per_node) FROM json_each(c.group_ranks)) > 1
            THEN 'inter' ELSE 'intra' END AS reach,
       CASE WHEN EXISTS (SELECT 1 FROM ancestors(l.launcher) a WHERE a.name LIKE 'Optimizer.%')
                 OR lo.name LIKE 'Optimizer.%' THEN 'optimizer'
            WHEN lo.fwd IS NOT NULL OR lo.name LIKE 'autograd::engine::evaluate_function%'
                 OR EXISTS (SELECT 1 FROM ancestors(l.launcher) a JOIN event ae ON ae.uid = a.uid
                            WHERE ae.fwd IS NOT NULL OR ae.name LIKE 'autograd::engine::evaluate_function%')
            THEN 'backward' ELSE 'forward' END AS phase
FROM overlap_rows o JOIN collective_kernel c ON c.uid = o.uid
LEFT JOIN launch_link l ON l.gpu = o.uid LEFT JOIN event lo ON lo.uid = l.launcher
WHERE o.cls = 'comm';
WITH m AS (SELECT trace, min(rank) AS rank, union_ns(ts, end) FILTER (WHERE cls = 'comm') AS comm,
                  union_ns(ts, end) FILTER (WHERE cls = 'comp') AS comp, union_ns(ts, end) AS both_
           FROM overlap_rows GROUP BY trace),
c AS (SELECT trace, count(*) AS kernels, sum(bytes) AS bytes, sum(dur) FILTER (WHERE reach = 'intra') AS intra,
             sum(dur) FILTER (WHERE reach = 'inter') AS inter
      FROM overlap_comm GROUP BY trace)
SELECT m.rank, round(100.0 * (m.comm + coalesce(m.comp, 0) - m.both_) / m.comm, 2) AS comp_comm_overlap_pct,
       coalesce(c.kernels, 0) AS comm_kernels, c.bytes AS comm_bytes, round(coalesce(m.comm, 0) / 1e6, 6) AS comm_ms,
       round((m.comm + coalesce(m.comp, 0) - m.both_) / 1e6, 6) AS overlapped_ms,
       round((m.both_ - coalesce(m.comp, 0)) / 1e6, 6) AS exposed_comm_ms, round(coalesce(m.comp, 0) / 1e6, 6) AS comp_ms,
       round(c.intra / 1e6, 6) AS intra_node_ms, round(c.inter / 1e6, 6) AS inter_node_ms, m.trace
FROM m LEFT JOIN c ON c.trace = m.trace
ORDER BY m.rank, m.trace;
-- Exposed per group: the group's communication not covered by the rank's computation.
WITH k AS (SELECT DISTINCT trace, pg, phase FROM overlap_comm),
u AS (SELECT k.trace, k.pg, k.phase, union_ns(x.ts, x.end) AS with_comp,
             (SELECT union_ns(ts, end) FROM overlap_rows r WHERE r.trace = k.trace AND r.cls = 'comp') AS comp
      FROM k CROSS JOIN (SELECT trace, pg, phase, ts, end FROM overlap_comm
                         UNION ALL SELECT k2.trace, k2.pg, k2.phase, r.ts, r.end FROM k k2
                         JOIN overlap_rows r ON r.trace = k2.trace AND r.cls = 'comp') x
      WHERE x.trace = k.trace AND x.pg = k.pg AND x.phase = k.phase
      GROUP BY k.trace, k.pg, k.phase)
SELECT t.rank, o.pg AS process_group, o.phase, count(*) AS kernels, sum(o.bytes) AS bytes,
       round(sum(o.dur) / 1e6, 6) AS comm_ms, round((u.with_comp - coalesce(u.comp, 0)) / 1e6, 6) AS exposed_comm_ms,
       o.trace
FROM overlap_comm o JOIN trace t ON t.id = o.trace JOIN u ON u.trace = o.trace AND u.pg = o.pg AND u.phase = o.phase
GROUP BY o.trace, o.pg, o.phase
ORDER BY t.rank, o.trace, o.pg, o.phase;
