-- One rank (tests/data/coll_clock_rank0.json alone): latency and bandwidth as in collectives_clocks
-- (the only rank's durations, 100, 50 and 5 µs; 4000 B / 50000 ns = 0.08 GB/s, 40 B / 5000 ns =
-- 0.008), but skew and straggler compare ranks: NULL, and the note says so.
.report collectives
