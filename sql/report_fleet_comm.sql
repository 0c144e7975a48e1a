-- per rank and communication kernel (what `tlsql fleet` stores as fleet.db's fleet_comm): process group, collective, its instance number, start, end and duration ns, bytes
-- The collectives report's rows before they meet across ranks: collective_kernel (one spelling of
-- the collective, its process group and size), and seq, the n-th kernel of that collective in that
-- process group on this rank (the collectives report's instance number). start_ns is the trace's
-- own timestamp, so fleet_collectives can compare ranks as collectives does (same clock assumed).
SELECT rank, pg AS process_group, coll AS collective,
       row_number() OVER (PARTITION BY trace, pg, coll ORDER BY ts, uid) AS seq, ts AS start_ns, ts + dur AS end_ns, dur AS dur_ns,
       bytes, group_size, dtype
FROM collective_kernel
ORDER BY rank, trace, ts, uid;
