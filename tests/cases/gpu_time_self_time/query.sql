-- Hand-made trace (tests/data/gpu_time.json), times in µs:
--   0 outer_op [0,100) launches k1 (1 -> 5: [110,130) stream 7)
--   2 inner_op [18,38) launches k2 (3 -> 6: [120,140) stream 8) and k3 + a memcpy through one
--     launch (4 -> 7: [150,160), 8: [155,157))
-- gpu_time = busy time = union of intervals:
--   outer_op: [110,140) + [150,160) = 30 + 10 = 40 µs (the sum of durations would be 52)
--   inner_op: [120,140) + [150,160) = 20 + 10 = 30 µs
--   launch 4: [150,160) = 10 µs; kernel 6 alone: 20 µs; a launch with nothing: 0 (none here)
-- self_time = dur - host children: outer_op 100 - (5 + 20) = 75 µs; inner_op 20 - (5 + 5) = 10;
--   a launch call's kernels are not its children on the host: launch 1 = 5 µs.
SELECT uid, name, gpu_time(uid) AS gpu_ns, self_time(uid) AS self_ns FROM event WHERE uid IN (0, 1, 2, 4, 6) ORDER BY uid;
SELECT count(*) AS launched_by_outer FROM launched(0);
