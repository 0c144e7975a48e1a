-- step = N of the ProfilerStep#N holding a host event's ts; GPU work takes its launch's step (HTA).
SELECT CASE WHEN kind IN ('kernel', 'memcpy', 'memset') THEN 'gpu' ELSE 'host' END AS side, step, count(*)
FROM event WHERE step IS NOT NULL AND kind NOT IN ('sync', 'gpu_annotation', 'other')
GROUP BY side, step ORDER BY side, step;
