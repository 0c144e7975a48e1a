-- GPU work for the timeline: lane (trace, device, stream), interval, step, and color category
-- (memcpy / memset, comm for communication kernels (gpu_class: rules, then launcher), else the launching op's category,
-- else the kernel name's).
SELECT g.trace, coalesce(g.device, -1), coalesce(g.stream, -1), g.ts, g.end, g.step,
       CASE WHEN g.kind <> 'kernel' THEN g.kind
            WHEN gpu_class(g.uid, NULL, '@schema') = 'communication' THEN 'comm'
            ELSE coalesce(nullif(op_category(o.name), 'other'), op_category(g.name)) END
FROM @schema.gpu g LEFT JOIN @schema.launch_link l ON l.gpu = g.uid
LEFT JOIN @schema.event o ON o.uid = l.launcher AND o.kind = 'cpu_op'
WHERE g.ts IS NOT NULL AND g.end IS NOT NULL;
