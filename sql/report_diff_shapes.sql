-- main vs other per (op name, input dims, input types): counts, GPU µs per side and the change; @name LIKE filter, @top rows
-- Rows: counted_op on each side (modeled and kernel-launching ops with no modeled or counted op above, so
-- each GPU nanosecond once). change: 'same shape' (on both sides), 'new shape' / 'shape gone'
-- (the op is on both sides, this shape on one), 'op added' / 'op removed' (the op is on one side).
-- (Both sides' perf tables, which counted_op reads, made at once first: perf_tables. CROSS JOIN
-- keeps `ready` the outer loop: counted_op's scan would make main's table itself, before it.)
WITH ready AS MATERIALIZED (SELECT perf_tables('main', 'other') AS n),
a AS (SELECT name, input_dims, input_types, count(*) AS n, sum(gpu_ns) AS ns
      FROM ready CROSS JOIN main.counted_op WHERE @name IS NULL OR name LIKE @name GROUP BY name, input_dims, input_types),
b AS (SELECT name, input_dims, input_types, count(*) AS n, sum(gpu_ns) AS ns
      FROM ready CROSS JOIN other.counted_op WHERE @name IS NULL OR name LIKE @name GROUP BY name, input_dims, input_types),
keys AS (SELECT name, input_dims, input_types FROM a UNION SELECT name, input_dims, input_types FROM b),
rows AS (SELECT k.name, k.input_dims, k.input_types, coalesce(a.n, 0) AS main_count,
                coalesce(a.ns, 0) / 1e3 AS main_us, coalesce(b.n, 0) AS other_count, coalesce(b.ns, 0) / 1e3 AS other_us,
                CASE WHEN a.n IS NOT NULL AND b.n IS NOT NULL THEN 'same shape'
                     WHEN a.n IS NULL AND k.name IN (SELECT name FROM a) THEN 'new shape'
                     WHEN a.n IS NULL THEN 'op added'
                     WHEN k.name IN (SELECT name FROM b) THEN 'shape gone'
                     ELSE 'op removed' END AS change
         FROM keys k LEFT JOIN a ON a.name = k.name AND a.input_dims IS k.input_dims AND a.input_types IS k.input_types
                     LEFT JOIN b ON b.name = k.name AND b.input_dims IS k.input_dims AND b.input_types IS k.input_types)
SELECT name, input_dims, input_types, main_count, round(main_us, 3) AS main_gpu_us, other_count,
       round(other_us, 3) AS other_gpu_us, other_count - main_count AS diff_count,
       round(other_us - main_us, 3) AS diff_gpu_us, change
FROM rows ORDER BY abs(other_us - main_us) DESC, name, input_dims, input_types LIMIT coalesce(@top, 50);
