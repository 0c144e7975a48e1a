-- fleet.db: per collective instance across the fleet's ranks: the collectives report's columns (size, per-rank µs, latency, algbw, busbw, skew, straggler, note) from fleet_comm; @top
-- The collectives report's rules (sql/report_collectives.sql, docs/reports.md) over fleet_comm, the
-- per-rank rows the fleet's workers kept (report fleet_comm): an instance is the seq-th kernel of
-- a collective in a process group on each rank; latency: the shortest rank's duration;
-- algbw = size / latency; busbw = algbw x 2(n-1)/n for AllReduce, x (n-1)/n for ReduceScatter /
-- AllGather / AllToAll(v), n = "Group size" else the ranks seen; skew: latest start - earliest
-- start and straggler: the rank that started last, given only with two ranks or more whose
-- kernels overlap in time (else the note says why). On the same rank files, its rows are the
-- collectives report's on the folder loaded in one process (tests/fleet/fleet_test.py). Ranks
-- that failed to load are not in fleet_comm: `ranks` counts those that are (fleet_health lists
-- the others).
WITH n AS MATERIALIZED (SELECT rank AS who, start_ns AS ts, dur_ns AS dur, collective AS coll, process_group AS pg,
                               seq, group_size, dtype, bytes FROM fleet_comm),
r AS (SELECT *, row_number() OVER (PARTITION BY pg, coll, seq ORDER BY ts DESC, who) AS late FROM n),
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
