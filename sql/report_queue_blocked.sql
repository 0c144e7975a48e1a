-- per rank and stream: time the launch queue was at or above @max_queue_length (default 1024, HTA's), absolute µs and relative to the trace's span (HTA's get_time_spent_blocked_on_full_queue); @max_queue_length @steps @rank
-- Over the view queue_length_points: each point whose length is >= @max_queue_length holds until the next
-- point on its stream (the last point holds no time). relative: that time / the trace's span as
-- HTA measures it (get_trace_duration: the last event start - the first, over the events HTA's
-- parser keeps: those with a dur and a cat, but not the profiler's own span, cat 'Trace'; with
-- @steps 'complete' the host events before the last ProfilerStep and the GPU events gpu_steps
-- keeps). Every stream with launches is listed, 0 where the queue never filled (HTA lists one
-- stream per rank, the last that filled, and none that did not).
WITH q AS (SELECT rank, trace, device, stream,
                  sum(CASE WHEN length >= coalesce(@max_queue_length, 1024) THEN coalesce(until - ts, 0) ELSE 0 END) AS ns,
                  max(length) AS max_length
           FROM queue_length_points
           WHERE steps = coalesce(@steps, 'complete') AND (@rank IS NULL OR rank = @rank)
           GROUP BY trace, device, stream),
     span AS (SELECT e.trace, max(e.ts) - min(e.ts) AS ns
              FROM event e JOIN step_cut c ON c.trace = e.trace
              WHERE e.dur IS NOT NULL AND e.cat IS NOT NULL AND e.cat <> 'Trace' AND e.trace IN (SELECT trace FROM q)
                AND (coalesce(@steps, 'complete') = 'all' OR c.last_step_start IS NULL
                     OR CASE WHEN e.kind IN ('kernel', 'memcpy', 'memset')
                             THEN coalesce((SELECT r.ts FROM launch_link l JOIN event r ON r.uid = l.runtime WHERE l.gpu = e.uid)
                                           < c.last_step_start, 0)
                             ELSE e.ts < c.last_step_start END)
              GROUP BY e.trace)
SELECT q.rank, q.device, q.stream, coalesce(@max_queue_length, 1024) AS max_queue_length, q.max_length,
       q.ns / 1e3 AS duration_us, CASE WHEN s.ns > 0 THEN q.ns * 1.0 / s.ns END AS relative
FROM q LEFT JOIN span s ON s.trace = q.trace
ORDER BY q.rank, q.trace, q.device, q.stream;
