-- per collective instance across ranks: size, per-rank µs, latency, algo / bus bandwidth, skew, straggler (TraceLens NcclAnalyser); @top
-- Collectives: the view collective_kernel (its kind, process group and size). An instance is
-- the n-th collective of a kind in a process group on each rank. size: NULL when the trace does
-- not record it (then no bandwidth). latency: the shortest rank's duration (the others
-- waited for the last arrival); algbw = size / latency; busbw = algbw x 2(n-1)/n for all-reduce,
-- x (n-1)/n for reduce-scatter / all-gather / all-to-all, x 1 otherwise, n = "Group size" arg else
-- the ranks seen. skew: latest start - earliest start; straggler: the rank that started last.
WITH c AS (SELECT uid, trace, rank, ts, dur, coll, pg, group_size, dtype, bytes FROM collective_kernel),
n AS (SELECT *, row_number() OVER (PARTITION BY trace, pg, coll ORDER BY ts, uid) AS seq FROM c),
i AS (SELECT pg, coll, seq, count(*) AS ranks, max(bytes) AS bytes, max(dtype) AS dtype,
             coalesce(max(group_size), count(*)) AS group_n, min(ts) AS first_start, max(ts) - min(ts) AS skew,
             min(dur) AS latency, json_group_object(coalesce(rank, trace), dur / 1e3) AS durations_us
      FROM n GROUP BY pg, coll, seq)
SELECT i.coll AS collective, i.pg AS process_group, i.seq, i.ranks, i.dtype, i.bytes AS size_bytes, i.durations_us,
       round(i.latency / 1e3, 3) AS latency_us,
       round(1.0 * i.bytes / i.latency, 3) AS algbw_gbps,  -- bytes per ns = GB/s
       round(1.0 * i.bytes / i.latency * CASE WHEN lower(i.coll) LIKE 'allreduce%' OR lower(i.coll) = 'all_reduce'
                                        THEN 2.0 * (i.group_n - 1) / i.group_n
                                        WHEN lower(replace(i.coll, '_', '')) IN ('reducescatter', 'allgather', 'alltoall',
                                                                                 'alltoallv', 'allgatherbase',
                                                                                 'reducescatterbase')
                                        THEN 1.0 * (i.group_n - 1) / i.group_n ELSE 1 END, 3) AS busbw_gbps,
       round(i.skew / 1e3, 3) AS skew_us,
       (SELECT coalesce(rank, trace) FROM n WHERE n.pg = i.pg AND n.coll = i.coll AND n.seq = i.seq
        ORDER BY ts DESC, trace LIMIT 1) AS straggler_rank
FROM i ORDER BY i.first_start, i.coll LIMIT coalesce(@top, 50);
