-- .parameter binds named parameters; .read nests (errors name the inner file and line);
-- .attach loads another trace as a schema that SQL (and the tree functions) can use.
-- Expected by hand: uid 4 is aten::mm; gpu_time.json has 9 events, 3 kernels, outer op busy
-- 40 µs with 4 GPU events under it (see the gpu_time_self_time case); the events report on
-- backward_thread: 2 annotations 413.451 + 107.988 = 521.439 ms, 3 ops 145 + 102 + 58 µs.
.parameter set @k 4
SELECT uid, name FROM event WHERE uid = @k;
.read @CASE@/inner.sql
.attach @DATA@/gpu_time.json AS other
SELECT count(*) AS other_events, (SELECT count(*) FROM main.event) AS main_events FROM other.event;
SELECT gpu_time(0, 'other') AS other_gpu_ns, (SELECT count(*) FROM launched(0, 'other')) AS other_launched;
SELECT count(*) AS other_kernels FROM other.kernel;
.report events
