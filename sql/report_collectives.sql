-- per collective instance across ranks: size, per-rank µs, latency, algo / bus bandwidth, skew, straggler, and why skew is left out (TraceLens NcclAnalyser); @top
-- Collectives: the view collective_kernel (its kind, one spelling: collective_name; process group
-- and size). An instance is the n-th collective of a kind in a process group on each rank. size:
-- NULL when the trace does not record it (then no bandwidth). latency: the shortest rank's
-- duration (the others waited for the last arrival); algbw = size / latency; busbw = algbw x
-- 2(n-1)/n for AllReduce, x (n-1)/n for ReduceScatter / AllGather / AllToAll(v), x 1 otherwise,
-- n = "Group size" arg else the ranks seen. skew: latest start - earliest start; straggler: the
-- rank that started last. Both compare timestamps of different traces, so they are given only
-- where those can be compared: with two ranks or more, and when the ranks' kernels of the instance
-- overlap in time (a collective runs on every rank at once: kernels that do not overlap mean the
-- traces' clocks differ, or the n-th instances are not the same collective). note: why not (one
-- rank loaded; only one rank ran this instance; the kernels do not overlap).
WITH n AS MATERIALIZED (
  SELECT uid, trace, coalesce(rank, trace) AS who, ts, dur, coll, pg, group_size, dtype, bytes,
         row_number() OVER (PARTITION BY trace, pg, coll ORDER BY ts, uid) AS seq
  FROM collective_kernel),
r AS (SELECT *, row_number() OVER (PARTITION BY pg, coll, seq ORDER BY ts DESC, trace) AS late FROM n),
i AS (SELECT pg, coll, seq, count(*) AS ranks, max(bytes) AS bytes, max(dtype) AS dtype,
             coalesce(max(group_size), count(*)) AS group_n, min(ts) AS first_start, max(ts) - min(ts) AS skew,
             max(ts) <= min(ts + dur) AS overlap, max(CASE WHEN late = 1 THEN who END) AS last_rank,
             min(dur) AS latency, json_group_object(who, dur / 1e3) AS durations_us
      FROM (SELECT * FROM r ORDER BY pg, coll, seq, who) GROUP BY pg, coll, seq)  -- (durations in rank order)
SELECT i.coll AS collective, i.pg AS process_group, i.seq, i.ranks, i.dtype, i.bytes AS size_bytes, i.durations_us,
       round(i.latency / 1e3, 3) AS latency_us,
       round(1.0 * i.bytes / i.latency, 3) AS algbw_gbps,  -- bytes per ns = GB/s
       round(1.0 * i.bytes / i.latency * CASE WHEN i.coll = 'AllReduce' THEN 2.0 * (i.group_n - 1) / i.group_n
                                              WHEN i.coll IN ('ReduceScatter', 'AllGather', 'AllToAll', 'AllToAllv')
                                              THEN 1.0 * (i.group_n - 1) / i.group_n ELSE 1 END, 3) AS busbw_gbps,
       CASE WHEN i.ranks > 1 AND i.overlap THEN round(i.skew / 1e3, 3) END AS skew_us,
       CASE WHEN i.ranks > 1 AND i.overlap THEN i.last_rank END AS straggler_rank,
       CASE WHEN i.ranks = 1 AND (SELECT count(DISTINCT who) FROM n) = 1
            THEN 'one rank: skew and straggler need the traces of the other ranks'
            WHEN i.ranks = 1 THEN 'only one of the loaded ranks ran this instance: nothing to compare'
            WHEN NOT i.overlap
            THEN printf('the ranks'' kernels do not overlap in time (starts %.3f ms apart): their clocks differ, '
                        || 'or the instances do not match; no skew, no straggler', i.skew / 1e6) END AS note
FROM i ORDER BY i.first_start, i.coll LIMIT coalesce(@top, 50);
