-- One row per element of traceEvents, uid = position: counts per (ph, cat) from Python's json.
SELECT ph, cat, count(*) FROM event GROUP BY ph, cat ORDER BY ph, cat;
SELECT 'TOTAL' AS ph, 'max uid + 1' AS cat, max(uid) + 1 AS "count(*)" FROM event HAVING count(*) = max(uid) + 1;
