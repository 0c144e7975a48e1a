-- per collective instance across ranks: size, per-rank µs, latency, algo / bus bandwidth, skew, straggler (TraceLens NcclAnalyser); @top
-- Collectives: communication kernels (gpu_class: NCCL / RCCL, vLLM's custom all-reduce, ...). Kind:
-- the kernel's "Collective name" arg, else the word after nccl(Dev)Kernel_ in its name (AllReduce,
-- AllGather, ReduceScatter, SendRecv, ...), else AllReduce for a custom all-reduce (a name with
-- "reduce"), else the kernel's short name. An instance is
-- the n-th collective of a kind in a process group ("Process Group Name" arg, else one group) on
-- each rank. size: "In msg nelems" x dtype bytes (max of in / out for all-gather), NULL when the
-- trace does not record it (then no bandwidth). latency: the shortest rank's duration (the others
-- waited for the last arrival); algbw = size / latency; busbw = algbw x 2(n-1)/n for all-reduce,
-- x (n-1)/n for reduce-scatter / all-gather / all-to-all, x 1 otherwise, n = "Group size" arg else
-- the ranks seen. skew: latest start - earliest start; straggler: the rank that started last.
WITH c AS (SELECT k.uid, k.trace, t.rank, k.ts, k.dur,
                  coalesce(k.args ->> '$."Collective name"',
                           CASE WHEN instr(k.name, 'Kernel_') > 0
                                THEN substr(k.name, instr(k.name, 'Kernel_') + 7,
                                            instr(substr(k.name, instr(k.name, 'Kernel_') + 7) || '_', '_') - 1)
                                WHEN k.name LIKE '%reduce%' THEN 'AllReduce' ELSE short_name(k.name) END) AS coll,
                  coalesce(k.args ->> '$."Process Group Name"', '') AS pg,
                  k.args ->> '$."Group size"' AS group_size, k.args ->> '$.dtype' AS dtype,
                  max(coalesce(k.args ->> '$."In msg nelems"', 0), coalesce(k.args ->> '$."Out msg nelems"', 0))
                    * nullif(dtype_bytes(k.args ->> '$.dtype'), 0) AS bytes
           FROM kernel k JOIN trace t ON t.id = k.trace
           WHERE gpu_class_of(k.kind, k.name) = 'communication'),
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
