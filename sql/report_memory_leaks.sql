-- the largest allocations never freed in the trace (no later free of their address), with their op and the user's frame; @top rows
SELECT m.device, m.uid, m.ts, m.bytes, (SELECT name FROM event WHERE uid = m.op) AS op, source(m.uid) AS source,
       m.trace
FROM memory_alloc m WHERE m.never_freed
ORDER BY m.bytes DESC, m.uid LIMIT coalesce(@top, 50);
