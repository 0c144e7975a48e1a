-- per rank and op name (what `tlsql fleet` stores as fleet.db's fleet_ops): category, instances that ran GPU work, GPU µs, GFLOP
-- The ops report's counting (op_summary; docs/reports.md "Column names") per rank: the counted ops
-- (counted_op: each GPU µs once, at the op that launched it) that ran GPU work; gpu_us: the union of
-- the GPU work at or below each, summed; gflop: their FLOPs where modeled.
SELECT t.rank, o.name, op_category(o.name) AS category, count(*) AS count, round(sum(p.gpu_ns) / 1e3, 3) AS gpu_us,
       round(sum(p.flops) / 1e9, 6) AS gflop
FROM perf_rows('main') p CROSS JOIN event o ON o.uid = p.uid JOIN trace t ON t.id = o.trace
WHERE p.counted = 1 AND p.gpu_ns > 0
GROUP BY o.trace, o.name
ORDER BY t.rank, o.trace, sum(p.gpu_ns) DESC, o.name;
