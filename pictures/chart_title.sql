-- A chart's title: the trace ?1 (else the first) and its first GPU.
SELECT t.path, (SELECT coalesce(d.name, '') || coalesce(' (' || d.gpu || ')', '') FROM @schema.device_gpu d
                WHERE d.trace = t.id ORDER BY d.id LIMIT 1)
FROM @schema.trace t ORDER BY t.id = ?1 DESC, t.id LIMIT 1;
