-- per rank and kernel name (what `tlsql fleet` stores as fleet.db's fleet_kernel_time): GPU class, launches, total µs
-- Every GPU event (kernels, memcpys, memsets: the gpu view) by its name as the trace spells it;
-- gpu_class is gpu_class_of's tlsql rule (compute, communication, memcpy, memset).
-- fleet_kernels compares the ranks per name.
SELECT t.rank, g.name, gpu_class_of(g.kind, g.name) AS gpu_class, count(*) AS count,
       sum(g.dur) / 1e3 AS total_us
FROM gpu g JOIN trace t ON t.id = g.trace
GROUP BY g.trace, g.name
ORDER BY t.rank, g.trace, total_us DESC, g.name;
