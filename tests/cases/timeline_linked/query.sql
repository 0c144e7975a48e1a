-- tests/data/timeline_unlinked.json: relu_kernel [100, 110) µs is linked to its launch (correlation
-- 1); kernel_launched_before_the_window [200, 230) has no launch call in the trace.
-- Default (all GPU events): busy 10 + 30 = 40 µs = 0.04 ms of total 230 - 100 = 130 µs = 0.13 ms
-- (40 / 130 = 30.769 %), idle 90 µs (69.231 %).
-- @linked 1 (TraceLens's gpu_timeline: linked events only): relu_kernel alone, busy = total =
-- 10 µs = 0.01 ms, 100 %, idle 0.
.report timeline
.parameter set @linked 1
.report timeline
