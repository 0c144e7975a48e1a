-- per device and op ([memory] events under it, the nearest op above each): allocations, gross bytes allocated, bytes freed, net; @top rows
SELECT m.device, coalesce(o.name, '(no op)') AS op, count(*) FILTER (WHERE m.bytes > 0) AS allocations,
       CAST(total(m.bytes) FILTER (WHERE m.bytes > 0) AS INTEGER) AS gross_bytes,
       CAST(-total(m.bytes) FILTER (WHERE m.bytes < 0) AS INTEGER) AS freed_bytes,
       CAST(total(m.bytes) AS INTEGER) AS net_bytes,
       m.trace
FROM memory_alloc m LEFT JOIN event o ON o.uid = m.op
GROUP BY m.trace, m.device, o.name
ORDER BY gross_bytes DESC LIMIT coalesce(@top, 50);
