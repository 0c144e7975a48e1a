-- per device and op ([memory] events under it, the nearest op above each): allocations, gross bytes allocated, bytes freed, net; @top rows
SELECT m.device, coalesce(o.name, '(no op)') AS op, count(*) FILTER (WHERE m.bytes > 0) AS allocations,
       coalesce(sum(m.bytes) FILTER (WHERE m.bytes > 0), 0) AS gross_bytes,
       -coalesce(sum(m.bytes) FILTER (WHERE m.bytes < 0), 0) AS freed_bytes, coalesce(sum(m.bytes), 0) AS net_bytes,
       m.trace
FROM memory_alloc m LEFT JOIN event o ON o.uid = m.op
GROUP BY m.trace, m.device, o.name
ORDER BY gross_bytes DESC LIMIT coalesce(@top, 50);
