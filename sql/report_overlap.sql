-- per rank: % of communication time overlapped by computation (HTA get_comm_comp_overlap), communication kernels, bytes, ms, exposed ms, intra- / inter-node ms; @steps @rank @gpus_per_node (overlap_groups: per process group and phase)
-- GPU work by the one classifier (gpu_class: the kernel_rule table, NCCL / RCCL, vLLM's custom
-- all-reduce, ..., then what launched a kernel no rule names; memcpys and memsets are neither side). comm_ms: the union of the communication
-- kernels; overlapped_ms: the part of it during which computation kernels run (HTA's numerator);
-- comp_comm_overlap_pct = 100 x overlapped / comm (HTA's name and meaning; NULL without
-- communication); exposed_comm_ms = comm - overlapped. intra_node_ms / inter_node_ms: the summed
-- durations of collectives whose "Process Group Ranks" fall on one node / several, with
-- @gpus_per_node ranks per node (NULL when either is unknown). @steps: 'complete' (default, HTA's
-- selection: the last ProfilerStep dropped), 'all', or a step number.
WITH overlap_rows AS MATERIALIZED (
  SELECT * FROM (
    SELECT g.trace, g.rank, g.uid, g.ts, g.end, g.dur,
           CASE gpu_class(g.uid) WHEN 'communication' THEN 'comm' WHEN 'compute' THEN 'comp' END AS cls
    FROM gpu_steps g
    WHERE (@rank IS NULL OR g.rank = @rank)
      AND CASE coalesce(@steps, 'complete') WHEN 'all' THEN 1 WHEN 'complete' THEN g.complete ELSE g.step = @steps END)
  WHERE cls IS NOT NULL),
overlap_comm AS MATERIALIZED (
  SELECT o.trace, o.uid, o.dur, c.bytes,
         CASE WHEN @gpus_per_node IS NULL OR c.group_ranks IS NULL OR json_valid(c.group_ranks) = 0 THEN NULL
              WHEN (SELECT count(DISTINCT CAST(value AS INTEGER) / @gpus_per_node) FROM json_each(c.group_ranks)) > 1
              THEN 'inter' ELSE 'intra' END AS reach
  FROM overlap_rows o JOIN collective_kernel c ON c.uid = o.uid
  WHERE o.cls = 'comm'),
m AS (SELECT trace, min(rank) AS rank, union_ns(ts, end) FILTER (WHERE cls = 'comm') AS comm,
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
