-- Views over event. Created after loading; they follow the schema they live in: tables by their
-- plain names, and the functions by the schema's name, (SELECT name FROM tlsql_schema), since a
-- function called without a schema reads main (an attached trace's view would walk main's tree
-- with its own uids).
CREATE VIEW IF NOT EXISTS @schema.op AS SELECT * FROM event WHERE kind = 'cpu_op';
CREATE VIEW IF NOT EXISTS @schema.python AS SELECT * FROM event WHERE kind = 'python';
CREATE VIEW IF NOT EXISTS @schema.annotation AS SELECT * FROM event WHERE kind IN ('annotation', 'gpu_annotation');
CREATE VIEW IF NOT EXISTS @schema.runtime AS SELECT * FROM event WHERE kind IN ('runtime', 'driver');
CREATE VIEW IF NOT EXISTS @schema.gpu AS SELECT * FROM event WHERE kind IN ('kernel', 'memcpy', 'memset');
CREATE VIEW IF NOT EXISTS @schema.kernel AS
  SELECT e.*,
         l.runtime AS runtime,
         l.launcher AS launcher,
         e.args -> '$.grid' AS grid,
         e.args -> '$.block' AS block,
         e.args ->> '$."registers per thread"' AS registers,
         e.args ->> '$."shared memory"' AS shared_memory,
         e.args ->> '$."blocks per SM"' AS blocks_per_sm,
         e.args ->> '$."warps per SM"' AS warps_per_sm,
         e.args ->> '$."est. achieved occupancy %"' AS occupancy_pct,
         e.args ->> '$.queued' AS queued,
         e.args ->> '$.context' AS context
  FROM event e LEFT JOIN launch_link l ON l.gpu = e.uid
  WHERE e.kind = 'kernel';
CREATE VIEW IF NOT EXISTS @schema.launch AS
  SELECT l.runtime AS runtime,
         l.gpu AS gpu,
         CASE WHEN l.launcher <> l.runtime THEN l.launcher END AS op,
         g.correlation AS correlation,
         g.ts - r.ts AS delay          -- ns from the launch call's start to the GPU work's start
  FROM launch_link l JOIN event g ON g.uid = l.gpu JOIN event r ON r.uid = l.runtime;
CREATE VIEW IF NOT EXISTS @schema.thread AS
  SELECT trace, pid, tid, args ->> '$.name' AS name FROM event WHERE kind = 'meta' AND name = 'thread_name';
CREATE VIEW IF NOT EXISTS @schema.process AS
  SELECT trace, pid, args ->> '$.name' AS name FROM event WHERE kind = 'meta' AND name = 'process_name';

-- GPU work replayed by a CUDA / HIP graph launch (is_graph_launch; docs/inference.md): the GPU
-- event, the graph launch call that replayed it, its place in that replay (0-based, by GPU start),
-- and the captured graph its replay was attributed to (captured_graph.id) or the eager run of the
-- same kernels (eager_start: its first GPU event); both NULL when not attributed. rule: how
-- (replay_graph.rule: 'exact', 'near', 'eager'); paired: whether the event itself pairs with a
-- node of that graph (a near-exact replay may run an event no node launched): then its launcher is
-- the capture-time op and its parent the capture-time launch call, else the graph launch.
CREATE VIEW IF NOT EXISTS @schema.graph_replay AS
  SELECT l.gpu AS uid, l.runtime AS graph_launch,
         row_number() OVER (PARTITION BY l.runtime ORDER BY g.ts, g.uid) - 1 AS position, rg.graph AS graph,
         rg.eager_start AS eager_start, rg.rule AS rule, rg.launch IS NOT NULL AND g.parent <> l.runtime AS paired
  FROM launch_link l CROSS JOIN event r ON r.uid = l.runtime CROSS JOIN event g ON g.uid = l.gpu
       LEFT JOIN replay_graph rg ON rg.launch = l.runtime
  WHERE is_graph_launch(r.name);

-- Communication kernels (gpu_class: the kernel_rule table, NCCL / RCCL, vLLM's custom all-reduce,
-- ..., then what launched a kernel no rule names) with what the collectives and overlap reports
-- read of them. coll: collective_name (udf/gpu_class.h: one spelling, AllReduce, AllGather, ...)
-- of the kernel's "Collective name" arg, else of its name (ncclDevKernel_AllGather_...,
-- cross_device_reduce_...), else of its kernel rule's subclass (all_to_all), else of the nearest
-- op above it that names one (RCCL's ncclDevKernel_Generic runs every collective: nccl:broadcast
-- above it says which), else the kernel's short name. pg:
-- "Process Group Name" ('' if not recorded); group_ranks: "Process Group Ranks" (JSON array);
-- bytes: "In msg nelems" x dtype bytes (max of in / out, for all-gather), NULL when not recorded.
-- phase: the training phase of the op that launched it: optimizer under an Optimizer.* range
-- (torch's Optimizer.step#...), backward when that op or one above it is a backward op (linked
-- to its forward op) or autograd's evaluate_function, else forward; NULL when it has no launch.
CREATE VIEW IF NOT EXISTS @schema.collective_kernel AS
SELECT k.uid, k.trace, t.rank, k.ts, k.dur,
       CASE WHEN k.launcher IS NULL THEN NULL
            WHEN lo.name LIKE 'Optimizer.%'
                 OR EXISTS (SELECT 1 FROM ancestors(k.launcher, (SELECT name FROM tlsql_schema)) a
                            WHERE a.name LIKE 'Optimizer.%') THEN 'optimizer'
            WHEN lo.fwd IS NOT NULL OR lo.name LIKE 'autograd::engine::evaluate_function%'
                 OR EXISTS (SELECT 1 FROM ancestors(k.launcher, (SELECT name FROM tlsql_schema)) a
                            JOIN event ae ON ae.uid = a.uid
                            WHERE ae.fwd IS NOT NULL OR ae.name LIKE 'autograd::engine::evaluate_function%')
            THEN 'backward' ELSE 'forward' END AS phase,
       coalesce(collective_name(k.args ->> '$."Collective name"'), collective_name(k.name),
                collective_name(kernel_subclass(k.name, (SELECT name FROM tlsql_schema))),
                (SELECT collective_name(ae.name) FROM ancestors(k.uid, (SELECT name FROM tlsql_schema)) a
                 JOIN event ae ON ae.uid = a.uid
                 WHERE ae.kind IN ('cpu_op', 'annotation') AND op_category(ae.name) = 'comm'
                       AND collective_name(ae.name) IS NOT NULL LIMIT 1),
                short_name(k.name)) AS coll,
       coalesce(k.args ->> '$."Process Group Name"', '') AS pg, k.args ->> '$."Process Group Ranks"' AS group_ranks,
       k.args ->> '$."Group size"' AS group_size, k.args ->> '$.dtype' AS dtype,
       max(coalesce(k.args ->> '$."In msg nelems"', 0), coalesce(k.args ->> '$."Out msg nelems"', 0))
         * nullif(dtype_bytes(k.args ->> '$.dtype'), 0) AS bytes
FROM kernel k JOIN trace t ON t.id = k.trace LEFT JOIN event lo ON lo.uid = k.launcher
WHERE gpu_class(k.uid, NULL, (SELECT name FROM tlsql_schema)) = 'communication';

-- The caching allocator's [memory] events (torch.profiler with profile_memory=True): one row per
-- allocation (bytes > 0) or free (bytes < 0) with the device's totals after it. device: 'cpu',
-- 'cuda:N' (ROCm's HIP devices report as CUDA), 'xpu:N', 'mps:N', else 'device_type_T:N'
-- (c10::DeviceType numbers). allocated: the event's "Total Allocated" where every event of the
-- (trace, device) records it (allocated_from 'Total Allocated'); else (2021-era traces record
-- Bytes only) the running sum of Bytes over the device's events in time order, from 0 before
-- the first (allocated_from 'sum of Bytes'): bytes allocated since the trace began, not counting
-- what was allocated before, which the trace does not say. reserved: "Total Reserved", NULL
-- where not recorded. The running sum is total() cast back: exact below 2^53 bytes, and past
-- int64 (a corrupt or edited trace's Bytes) it saturates at the limit instead of failing every
-- memory report with "integer overflow" (a CAST of a REAL out of range gives the nearest int64).
CREATE VIEW IF NOT EXISTS @schema.memory_event AS
SELECT uid, trace, ts, parent, device, bytes,
       CASE WHEN recorded = n THEN total
            ELSE CAST(total(bytes) OVER (PARTITION BY trace, device ORDER BY ts, uid ROWS UNBOUNDED PRECEDING)
                      AS INTEGER) END
         AS allocated,
       reserved, addr, CASE WHEN recorded = n THEN 'Total Allocated' ELSE 'sum of Bytes' END AS allocated_from
FROM (SELECT *, count(total) OVER (PARTITION BY trace, device) AS recorded,
             count(*) OVER (PARTITION BY trace, device) AS n
      FROM (SELECT uid, trace, ts, parent,
                   CASE t WHEN 0 THEN 'cpu' WHEN 1 THEN 'cuda:' || i WHEN 6 THEN 'hip:' || i WHEN 12 THEN 'xpu:' || i
                          WHEN 13 THEN 'mps:' || i ELSE 'device_type_' || t || ':' || i END AS device,
                   bytes, total, reserved, addr
            FROM (SELECT uid, trace, ts, parent, CAST(args ->> '$."Device Type"' AS INTEGER) AS t,
                         CAST(args ->> '$."Device Id"' AS INTEGER) AS i, CAST(args ->> '$.Bytes' AS INTEGER) AS bytes,
                         CAST(args ->> '$."Total Allocated"' AS INTEGER) AS total,
                         CAST(args ->> '$."Total Reserved"' AS INTEGER) AS reserved, args ->> '$.Addr' AS addr
                  FROM event WHERE kind = 'instant' AND name = '[memory]')));

-- memory_event with, for each event, the nearest op above it (op, a uid) and, for an allocation,
-- whether no later event of the trace frees its address (never_freed; NULL where the event has
-- no Addr, as in 2021-era traces: nothing tells which free is its). What the memory reports
-- group by.
CREATE VIEW IF NOT EXISTS @schema.memory_alloc AS
SELECT m.*, (SELECT a.uid FROM ancestors(m.uid, (SELECT name FROM tlsql_schema)) a
             WHERE a.kind = 'cpu_op' LIMIT 1) AS op,
       CASE WHEN m.addr IS NOT NULL
            THEN m.bytes > 0
                 AND lead(m.bytes) OVER (PARTITION BY m.trace, m.device, m.addr ORDER BY m.ts, m.uid) IS NULL
       END AS never_freed
FROM memory_event m;

-- CUPTI profiler ranges (torch.profiler with experimental_config profiler_metrics, HTA's
-- cupti_counter_analysis): an event of category cuda_profiler_range per kernel, its counter values
-- in args, and no correlation to its launch. HTA's pairing: the i-th range of a trace by start
-- with the i-th cudaLaunchKernel* call by start; where the counts differ nothing is paired (HTA
-- refuses the rank) and launch is NULL. Ops: the cpu_ops above the launch on its own thread (HTA's
-- per-thread call stack), outermost (top_level_op) to innermost (bottom_level_op).
CREATE VIEW IF NOT EXISTS @schema.cupti_range AS
WITH r AS (SELECT uid, trace, name, ts, dur, row_number() OVER (PARTITION BY trace ORDER BY ts, uid) AS i,
                  count(*) OVER (PARTITION BY trace) AS n
           FROM event WHERE kind = 'other' AND cat = 'cuda_profiler_range'),
l AS (SELECT uid, trace, pid, tid, row_number() OVER (PARTITION BY trace ORDER BY ts, uid) AS i,
             count(*) OVER (PARTITION BY trace) AS n
      FROM event WHERE kind = 'runtime' AND name GLOB 'cudaLaunchKernel*' AND trace IN (SELECT trace FROM r)),
p AS MATERIALIZED (SELECT r.uid, r.trace, r.name, r.ts, r.dur, l.uid AS launch, l.pid, l.tid
                   FROM r LEFT JOIN l ON l.trace = r.trace AND l.i = r.i AND l.n = r.n)
SELECT p.uid, p.trace, t.rank, p.name, p.ts, p.dur, p.launch,
       (SELECT a.uid FROM ancestors(p.launch, (SELECT name FROM tlsql_schema)) a JOIN event ae ON ae.uid = a.uid
        WHERE ae.kind = 'cpu_op' AND ae.pid IS p.pid AND ae.tid IS p.tid ORDER BY a.depth LIMIT 1) AS top_level_op,
       (SELECT a.uid FROM ancestors(p.launch, (SELECT name FROM tlsql_schema)) a JOIN event ae ON ae.uid = a.uid
        WHERE ae.kind = 'cpu_op' AND ae.pid IS p.pid AND ae.tid IS p.tid ORDER BY a.depth DESC LIMIT 1) AS bottom_level_op,
       (SELECT group_concat(name, ' > ') FROM (
          SELECT ae.name FROM ancestors(p.launch, (SELECT name FROM tlsql_schema)) a JOIN event ae ON ae.uid = a.uid
          WHERE ae.kind = 'cpu_op' AND ae.pid IS p.pid AND ae.tid IS p.tid ORDER BY a.depth)) AS op_stack
FROM p JOIN trace t ON t.id = p.trace;

-- The counter values of each CUPTI profiler range, one row per (range, counter): a long table,
-- since SQL cannot make a column per counter (the counters report pivots the FLOPs counters).
CREATE VIEW IF NOT EXISTS @schema.cupti_counter AS
SELECT e.uid, e.trace, j.key AS counter, j.value
FROM event e, json_each(e.args) j
WHERE e.kind = 'other' AND e.cat = 'cuda_profiler_range' AND json_type(e.args) = 'object'
  AND j.type IN ('integer', 'real');

-- torch.profiler's memory timeline (export_memory_timeline, read by src/readers/memory_timeline):
-- one row per memory event (the raw layout) or per category change (the plot layout), with the
-- bytes its category and all categories hold after it (running sums in time order; at the last
-- row of a time, what torch's and HTA's plots draw at that time).
CREATE VIEW IF NOT EXISTS @schema.memory_timeline AS
SELECT uid, trace, ts, args ->> '$.action' AS action, args ->> '$.bytes' AS bytes, name AS category,
       args ->> '$.category_index' AS category_index,
       sum(args ->> '$.bytes') OVER (PARTITION BY trace, name ORDER BY ts, uid) AS category_bytes,
       sum(args ->> '$.bytes') OVER (PARTITION BY trace ORDER BY ts, uid) AS total_bytes
FROM event WHERE kind = 'instant' AND cat = 'memory_timeline';

-- The host loop of each thread that launches CUDA / HIP graphs (engine_step's steps of source
-- 'loop'; docs/inference.md): its host events with a start, numbered by the GPU waits (wait: 1 for
-- a stream / device / event synchronize) that ended at or before their start (k); step: the wait
-- that ends their turn (the first such wait by uid), NULL after the thread's last wait. Computed
-- in one pass (engine_loop_events, udf/analysis/engine_steps.h), as are the views below.
CREATE VIEW IF NOT EXISTS @schema.engine_loop_event AS
SELECT l.uid, e.trace, e.pid, e.tid, e.ts, e.end, l.wait, l.k, l.step
FROM engine_loop_events((SELECT name FROM tlsql_schema)) l CROSS JOIN event e ON e.uid = l.uid;

-- Iterations of a serving engine's loop (docs/inference.md), numbered per trace by start from 0:
-- the engine's step annotations (vLLM, SGLang, ATOM: serving_step) where the trace has them, else
-- the worker's per-step frames, else the host loop of the threads that launch graphs
-- (engine_loop_event: uid is the wait that ends the step). tokens, prefill / decode requests and
-- phase (prefill, decode, mixed) where the annotation says them (frames and loops say nothing:
-- NULL). A step inside another (vLLM V0's spec-decode worker calling the scorer's worker_base
-- execute_model) is part of that step, not one of its own. The rows of engine_steps (one pass,
-- udf/analysis/engine_steps.h) less its ProfilerStep fallback, which only the steps report shows.
CREATE VIEW IF NOT EXISTS @schema.engine_step AS
SELECT iteration, uid, trace, ts, end, dur, source, tokens, prefill_requests, decode_requests, phase
FROM engine_steps((SELECT name FROM tlsql_schema)) WHERE source <> 'profiler_step';

-- The host events of each engine step: an annotation's or frame's subtree (itself included); a
-- host-loop step's events of its thread (engine_loop_event). What the step / phase filter of the
-- ops report selects.
CREATE VIEW IF NOT EXISTS @schema.engine_step_member AS
SELECT trace, iteration, phase, uid FROM engine_step_members((SELECT name FROM tlsql_schema));

-- The GPU work launched inside each engine step (graph replays included: their kernels hang under
-- the step's graph launches; a loop step's: the GPU work its launch calls launched): what the
-- step / phase filters of the kernels and timeline reports select.
CREATE VIEW IF NOT EXISTS @schema.engine_step_gpu AS
SELECT trace, iteration, phase, gpu FROM engine_step_launched((SELECT name FROM tlsql_schema));

-- HTA's TraceAnalysis drops the trace's last ProfilerStep (it may be cut short): CPU events from its
-- start on, and the GPU work they launched, when the trace has two or more steps
-- (include_last_profiler_step=False); otherwise nothing. last_step_start: that start, else NULL.
-- Steps are ProfilerStep#N annotations (cpu_op in 2021-era traces), as the loader's step column,
-- at any depth: with with_stack=True they open under the script's python frames (HTA, whose rows
-- have no tree, reads them wherever they are).
CREATE VIEW IF NOT EXISTS @schema.step_cut AS
  SELECT t.id AS trace, s.last_step_start
  FROM trace t LEFT JOIN (SELECT trace, CASE WHEN count(DISTINCT name) > 1 THEN max(ts) END AS last_step_start
                          FROM event WHERE kind IN ('annotation', 'cpu_op') AND step IS NOT NULL
                                       AND name GLOB 'ProfilerStep#[0-9]*'
                          GROUP BY trace) s ON s.trace = t.id;

-- The step cut as HTA's TraceAnalysis applies it (Trace._filter_irrelevant_gpu_kernels): the
-- latest start of an event named ProfilerStep#N of any category but GPU work, so the GPU-side
-- gpu_user_annotation ProfilerStep#N counts too (HTA takes it for a host event: it has no stream),
-- and it starts later than its host twin; NULL with fewer than two step names. HTA then keeps the
-- host events starting before it and the GPU work they launched. What the reports that follow HTA's
-- annotation, kernel sequence and straggler analyses cut at (step_cut, the host step only, is the
-- cut of temporal, idle and launch, the same on traces without GPU annotations).
CREATE VIEW IF NOT EXISTS @schema.hta_step_cut AS
  SELECT t.id AS trace, s.last_step_start
  FROM trace t LEFT JOIN (SELECT trace, CASE WHEN count(DISTINCT name) > 1 THEN max(ts) END AS last_step_start
                          FROM event WHERE kind IN ('annotation', 'cpu_op', 'gpu_annotation')
                                       AND name GLOB 'ProfilerStep#[0-9]*'
                          GROUP BY trace) s ON s.trace = t.id;

-- GPU events with their trace's rank and `complete`: what HTA keeps (step_cut): launched before the
-- last ProfilerStep's start, or the trace has fewer than two steps. (A subquery, so that a query
-- not reading `complete` does not pay for it; a CASE, not an OR, so that a trace with fewer than
-- two steps does not look up every launch: SQLite computes both sides of an OR in a result.)
CREATE VIEW IF NOT EXISTS @schema.gpu_steps AS
  SELECT g.*, t.rank,
         (SELECT CASE WHEN c.last_step_start IS NULL THEN 1
                      ELSE coalesce((SELECT r.ts FROM launch_link l JOIN event r ON r.uid = l.runtime WHERE l.gpu = g.uid)
                                    < c.last_step_start, 0) END
          FROM step_cut c WHERE c.trace = g.trace) AS complete
  FROM gpu g JOIN trace t ON t.id = g.trace;

-- Launch statistics as HTA's get_cuda_kernel_launch_stats measures them, one row per launched GPU
-- event (µs): cpu_duration = the launch call's duration, gpu_duration = its own, launch_delay =
-- GPU start - launch call end, 0 when the work started before the call returned. hta_call: the call
-- is one HTA counts (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync, cudaMemsetAsync), or
-- its HIP twin (HTA knows no HIP names, so it finds no launch in an AMD trace). queue_call: the call
-- is one HTA's queue length counts (its symbol table's runtime launch mask, a wider list than its
-- launch stats': hta_call's and cuLaunchKernel[Ex], hipExtModuleLaunchKernel, hipMemcpyWithStream,
-- MTIA's job submit; hta_call's hipExtLaunchKernel too, which HTA's queue leaves out:
-- docs/reports.md). complete: as gpu_steps. launch_uid / launch_ts, gpu_ts, device, stream: the
-- queue_length_points view's points.
CREATE VIEW IF NOT EXISTS @schema.launch_stats AS
  SELECT t.rank, g.trace, g.uid AS gpu, g.correlation, g.name, r.name AS launch_call, r.dur / 1e3 AS cpu_duration,
         g.dur / 1e3 AS gpu_duration, max(0, g.ts - r.end) / 1e3 AS launch_delay,
         r.name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync',
                    'hipLaunchKernel', 'hipExtLaunchKernel', 'hipMemcpyAsync', 'hipMemsetAsync') AS hta_call,
         c.last_step_start IS NULL OR r.ts < c.last_step_start AS complete,
         r.name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync',
                    'hipLaunchKernel', 'hipExtLaunchKernel', 'hipMemcpyAsync', 'hipMemsetAsync',
                    'cuLaunchKernel', 'cuLaunchKernelEx', 'hipExtModuleLaunchKernel', 'hipMemcpyWithStream',
                    'runFunction - job_prep_and_submit_for_execution') AS queue_call,
         r.uid AS launch_uid, r.ts AS launch_ts, g.ts AS gpu_ts, g.device, g.stream
  FROM launch_link l CROSS JOIN event g ON g.uid = l.gpu CROSS JOIN event r ON r.uid = l.runtime
  JOIN trace t ON t.id = g.trace JOIN step_cut c ON c.trace = g.trace;  -- CROSS: the links drive (not a scan of event)

-- HTA's CUDA launch-queue length (get_queue_length_time_series): per trace, device and stream, +1 at
-- each launch call queue_call counts, -1 when the GPU work it launched starts; one row per such
-- point, `length` the queue after it and `until` the next point's ts on the stream (NULL for the
-- last: the series is a step function). At one ts a launch comes before a start, then trace order
-- (what a stable sort of HTA's rows gives; HTA's sort is not stable). steps: 'complete' (HTA's
-- scope: launches before the last ProfilerStep, launch_stats.complete, the queue counted over them
-- alone) or 'all' (every launch); every point is in both scopes' series where it belongs, and a
-- query picks one with `WHERE steps = ...`. ts / until: ns. The reports read this view; a user
-- reads one stream's series through the table function queue_length(rank, stream [, steps])
-- (udf/analysis/trace_counters.cpp), which reads it.
CREATE VIEW IF NOT EXISTS @schema.queue_length_points AS
  SELECT rank, trace, device, stream, steps, ts, length, lead(ts) OVER w AS until, kind, uid
  FROM (SELECT *, sum(delta) OVER w AS length
        FROM (SELECT s.steps, q.rank, q.trace, q.device, q.stream, q.ts, q.delta, q.kind, q.uid, q.ord
              FROM (SELECT rank, trace, device, stream, launch_ts AS ts, 1 AS delta, 'launch' AS kind, launch_uid AS uid,
                           0 AS ord, complete
                    FROM launch_stats WHERE queue_call
                    UNION ALL
                    SELECT rank, trace, device, stream, gpu_ts, -1, 'start', gpu, 1, complete
                    FROM launch_stats WHERE queue_call) q
              JOIN (SELECT 'all' AS steps UNION ALL SELECT 'complete') s ON s.steps = 'all' OR q.complete)
        WINDOW w AS (PARTITION BY steps, trace, device, stream ORDER BY ts, ord, uid ROWS UNBOUNDED PRECEDING))
  WINDOW w AS (PARTITION BY steps, trace, device, stream ORDER BY ts, ord, uid);

-- HTA's memory bandwidth series (get_memory_bw_time_series): per trace and memory kind (HTA's
-- names: `Memset`, else the first 11 characters of a copy's name, `Memcpy HtoD`: 'Memcpy ' and the
-- copy's direction, so that Nsight's "Memcpy Host-to-Device" and rocprofv3's
-- "MEMORY_COPY_HOST_TO_DEVICE" are the same kind, copy_direction; `Memcpy Unknown` for a copy not
-- named so), the GB/s of the copies / fills running, summed: +bw at each
-- one's start, -bw at its end (a duration of 0 counts as 1 µs, HTA's rule; a negative one, which
-- the loader keeps, as 0), one row per point,
-- `gbps` after it, `until` the next point's ts. bw: Kineto's "memory bandwidth (GB/s)" arg (HTA's);
-- where a trace lacks it, bytes / ns (the same formula Kineto uses) when both are above 0; else 0:
-- a copy of 0 bytes or 0 ns adds no bandwidth and is never a divisor. At one ts an end comes before
-- a start (back-to-back copies do not overlap), then trace order. steps: as queue_length (the GPU
-- events gpu_steps.complete keeps). edge: 'end' or 'start' (so ORDER BY ts, edge, uid is the
-- series' order). The reports read this view; the table function memory_bw(rank [, name [,
-- steps]]) (udf/analysis/trace_counters.cpp) reads it for a user.
CREATE VIEW IF NOT EXISTS @schema.memory_bw_points AS
  SELECT rank, trace, name, steps, ts, gbps, lead(ts) OVER w AS until, uid, edge
  FROM (SELECT *, sum(delta) OVER w AS gbps
        FROM (SELECT s.steps, c.rank, c.trace, c.uid, c.name, CASE e.ord WHEN 1 THEN c.ts ELSE c.stop END AS ts,
                     CASE e.ord WHEN 1 THEN c.bw ELSE -c.bw END AS delta, e.ord,
                     CASE e.ord WHEN 1 THEN 'start' ELSE 'end' END AS edge
              FROM (SELECT g.rank, g.trace, g.uid, g.complete,
                           CASE WHEN g.name GLOB 'Memset*' THEN 'Memset'
                                ELSE coalesce('Memcpy ' || copy_direction(g.name),
                                              CASE WHEN g.name GLOB 'Memcpy*' THEN substr(g.name, 1, 11)
                                                   ELSE 'Memcpy Unknown' END) END AS name,
                           coalesce(g.args ->> '$."memory bandwidth (GB/s)"',
                                    CASE WHEN g.args ->> '$.bytes' > 0 AND g.dur > 0 THEN (g.args ->> '$.bytes') * 1.0 / g.dur END,
                                    0.0) AS bw,
                           g.ts, CASE WHEN g.dur > 0 THEN g.end ELSE g.ts + 1000 END AS stop
                    FROM gpu_steps g WHERE g.kind IN ('memcpy', 'memset')) c
              CROSS JOIN (SELECT 0 AS ord UNION ALL SELECT 1) e  -- 0: the end (first at one ts), 1: the start
              JOIN (SELECT 'all' AS steps UNION ALL SELECT 'complete') s ON s.steps = 'all' OR c.complete)
        WINDOW w AS (PARTITION BY steps, trace, name ORDER BY ts, ord, uid ROWS UNBOUNDED PRECEDING))
  WINDOW w AS (PARTITION BY steps, trace, name ORDER BY ts, ord, uid);

-- The ops whose GPU time the summaries count, each GPU nanosecond once: ops with a perf model and
-- kernel-launching ops, each only when no modeled or counted op is above it (a convolution's bias add_ is
-- part of the convolution), and runtime calls that launch with no op above them (their own launcher,
-- TraceLens's rule: its `event` row, not `op`): the perf table's counted flag, from its one pass (udf/perf/perf_table.h),
-- read with one scan of perf_rows (not a function call per op).
-- self: this database's token, so that perf_rows reads this schema's events whatever name it
-- is attached under. CROSS JOIN: perf_rows drives, each row finds its op by uid.
-- (No WITH clause: a plain view is flattened into the query, so columns it does not use, such as
-- input_dims, are never computed.)
CREATE VIEW IF NOT EXISTS @schema.counted_op AS
SELECT o.uid, o.name, op_category(o.name) AS category, o.input_dims, o.input_types, p.gpu_ns
FROM perf_rows((SELECT name FROM tlsql_schema)) p CROSS JOIN event o ON o.uid = p.uid
WHERE p.counted = 1;

-- TraceLens's GEMM, SDPA and CONV sheets in one: the ops of those families that carry a model of
-- their own (perf_source 'model' / 'inductor') and ran GPU work, per unique shapes (name, dims,
-- types, strides, concrete inputs). gpu_us / mean_us: their GPU time (gpu_time: the union of their
-- kernels, TraceLens's Kernel Time); gflop_per_call: one call's FLOPs; tflops / tbps /
-- achieved_pct / bound: perf_sum's (udf/perf/perf_sum.h), the group's FLOPs over its GPU time, where
-- TraceLens averages each call's rate (docs/reports.md "Column names"). The gemm, sdpa and conv
-- reports are this view's rows of one family.
-- Then the work whose op says nothing (issue 46): kernels of those families by name
-- (kernel_family: cuBLAS / CUTLASS / hipBLASLt GEMMs, flash / fmha attention, cuDNN / MIOpen
-- convolutions) whose launcher (the kernel view's: the nearest op above the launch, else the
-- launch call) is a custom op without a model (a custom autograd Function: category 'other', or
-- not an aten op, as FlashAttnFunc, whose name op_category reads as SDPA) or no op at all (a launch
-- under a record_function annotation). An aten op of the family recorded without shapes stays
-- out: it is the family's op, and the empty note asks for record_shapes=True. One row per launching work (work_name: its op, or
-- "annotation > call") and kernel name: `kernel` the kernel, count its launches, gpu_us / mean_us
-- their durations, FLOPs NULL (no shapes to model) and `note` why. Without them a custom-op model
-- got "no GEMM ops" from gemm while its GEMM kernels took a third of the GPU time. Kernel names
-- are classified once per distinct name (a GB trace has millions of launches of a few hundred).
CREATE VIEW IF NOT EXISTS @schema.op_sheet AS
SELECT family, name, input_dims, input_types, count, gflop_per_call, gpu_us, mean_us,
       round(s ->> 'tflops', 3) AS tflops, round(s ->> 'tbps', 4) AS tbps,
       round(s ->> 'achieved_pct', 2) AS achieved_pct, s ->> 'bound' AS bound, ex_uid, NULL AS kernel, NULL AS note,
       ns AS gpu_ns
FROM (SELECT family, name, input_dims, input_types, count(*) AS count, round(max(f) / 1e9, 6) AS gflop_per_call,
             sum(ns) AS ns, round(sum(ns) / 1e3, 3) AS gpu_us, round(avg(ns) / 1e3, 3) AS mean_us,
             perf_sum(uid, (SELECT name FROM tlsql_schema)) AS s, min(uid) AS ex_uid
      FROM op_sheet_ops
      GROUP BY family, name, input_dims, input_types, input_strides, concrete_inputs)
UNION ALL
SELECT family, work_name(launcher, (SELECT name FROM tlsql_schema)) AS name, NULL, NULL, count(*), NULL,
       round(sum(ns) / 1e3, 3), round(avg(ns) / 1e3, 3), NULL, NULL, NULL, NULL, min(launcher), kernel, min(note),
       sum(ns)
FROM op_sheet_kernels
GROUP BY family, work_name(launcher, (SELECT name FROM tlsql_schema)), kernel;

-- What op_sheet groups, one row per op or kernel: part 'op', a modeled op of the three families
-- that ran GPU work (uid the op, f its FLOPs, ns its GPU time); part 'kernel', a kernel of a
-- family under a custom op or no op (uid the kernel, launcher its launcher, ns its duration, note
-- why it has no FLOPs). Ungrouped, so that asking whether a sheet has rows (about_report.sql)
-- stops at the first instead of grouping them all. Its two parts are views of their own, which
-- op_sheet groups: read through this one, op_sheet's op arm also materialized the kernel part's
-- CTE (the kernels' names), though a constant `part` left it no kernel rows.
CREATE VIEW IF NOT EXISTS @schema.op_sheet_work AS
SELECT 'op' AS part, family, uid, name, input_dims, input_types, input_strides, concrete_inputs, f, ns, NULL AS kernel,
       NULL AS launcher, NULL AS note
FROM op_sheet_ops
UNION ALL
SELECT 'kernel', family, uid, NULL, NULL, NULL, NULL, NULL, NULL, ns, kernel, launcher, note
FROM op_sheet_kernels;

-- op_sheet_work's part 'op'. (perf_rows drives: one scan of the perf table picks the modeled ops
-- that ran GPU work, a few percent of the ops, and only those are read and classified by name.)
CREATE VIEW IF NOT EXISTS @schema.op_sheet_ops AS
SELECT CASE WHEN c LIKE 'GEMM%' THEN 'GEMM' WHEN c LIKE 'SDPA%' THEN 'SDPA' ELSE 'CONV' END AS family,
       uid, name, input_dims, input_types, input_strides, concrete_inputs, f, ns
FROM (SELECT o.uid, o.name, o.input_dims, o.input_types, o.input_strides, o.concrete_inputs,
             op_category(o.name) AS c, p.flops AS f, p.gpu_ns AS ns
      FROM perf_rows((SELECT name FROM tlsql_schema)) p CROSS JOIN event o ON o.uid = p.uid
      WHERE p.source IN ('model', 'inductor') AND p.flops IS NOT NULL AND p.gpu_ns > 0 AND o.kind = 'cpu_op')
WHERE c LIKE 'GEMM%' OR c LIKE 'SDPA%' OR c LIKE 'CONV%';

-- op_sheet_work's part 'kernel': uid the kernel, kernel its name, ns its duration.
CREATE VIEW IF NOT EXISTS @schema.op_sheet_kernels AS
WITH family_of(name, family) AS MATERIALIZED (
  -- (Each distinct name classified, not each kernel, the names from kind_names: a loaded trace's
  -- kernels marked by interned name in C++, where a DISTINCT over them took 15 ms of a 200 MB
  -- trace. kernel_family runs once or twice a name, in the WHERE and the result.)
  SELECT name, family FROM (SELECT name, kernel_family(name) AS family
                            FROM kind_names('kernel', (SELECT name FROM tlsql_schema)))
  WHERE family IS NOT NULL)
SELECT f.family, k.uid, k.dur AS ns, k.name AS kernel, ll.launcher,
       CASE WHEN l.kind IN ('runtime', 'driver') THEN 'no model: no op encloses the launch (no Input Dims)'
            WHEN l.input_dims IS NULL OR l.input_dims IN ('[]', '') THEN 'no model: Input Dims missing'
            ELSE 'no model: ' || l.name || ' has no FLOPs formula' END AS note
-- (CROSS JOINs: kernels outside, then the family by name, then the launch link and the launcher.
-- A report's `WHERE family = ...` made SQLite loop over the family's names outside, each scanning
-- every kernel; with the launcher read before the family, the launcher tests ran on every kernel;
-- and through the kernel view, every kernel's launch link was looked up before its family, a
-- third of a 200 MB trace's sheet. A kernel without a link has no launcher: out, as before.)
FROM event k CROSS JOIN family_of f ON f.name = k.name CROSS JOIN launch_link ll ON ll.gpu = k.uid
     CROSS JOIN event l ON l.uid = ll.launcher
WHERE k.kind = 'kernel' AND k.dur > 0
  AND (l.kind IN ('runtime', 'driver')
       OR (l.kind = 'cpu_op' AND coalesce(perf_source(l.uid, (SELECT name FROM tlsql_schema)), '') NOT IN ('model', 'inductor')
           AND (op_category(l.name) = 'other' OR l.name NOT LIKE 'aten::%')));

-- Per op name and category over counted_op: the ops report (.report ops) as a view (its comments
-- say what each column is; keep the two alike).
CREATE VIEW IF NOT EXISTS @schema.op_summary AS
SELECT name, category, count, gpu_us, gpu_pct, round((s ->> 'flops') / 1e9, 6) AS gflop,
       round(s ->> 'tflops', 3) AS tflops, round(s ->> 'tbps', 4) AS tbps,
       round(s ->> 'intensity', 3) AS flops_per_byte, round(s ->> 'achieved_pct', 2) AS achieved_pct,
       s ->> 'bound' AS bound, round(100.0 * (s ->> 'modeled_ns') / (s ->> 'gpu_ns'), 2) AS modeled_gpu_pct,
       (SELECT 'no model: ' || model_gap(e.name, e.args) FROM event e WHERE e.uid = gap_uid) AS note
FROM (SELECT w.name, op_category(w.name) AS category, count(*) AS count, round(sum(w.gpu_ns) / 1e3, 3) AS gpu_us,
             round(100.0 * sum(w.gpu_ns) / sum(sum(w.gpu_ns)) OVER (), 2) AS gpu_pct,
             perf_sum(w.uid, (SELECT name FROM tlsql_schema)) AS s,
             min(CASE WHEN w.flops IS NULL THEN w.uid END) AS gap_uid
      FROM (SELECT p.uid, work_name(p.uid, (SELECT name FROM tlsql_schema)) AS name, p.gpu_ns, p.flops
            FROM perf_rows((SELECT name FROM tlsql_schema)) p
            WHERE p.counted = 1 AND p.gpu_ns > 0) w
      GROUP BY w.name);
