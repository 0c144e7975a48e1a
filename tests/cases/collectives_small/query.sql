-- tests/data/coll_rank{0,1}.json: two ranks of a 4-rank process group "0" (Group size 4), two collectives.
-- allreduce (AllReduce): 1,048,576 Float = 4,194,304 bytes; rank 0 [1000, 100 µs], rank 1 [1030, 150 µs]
--   latency = min(100, 150) = 100 µs; algbw = 4194304 B / 100000 ns = 41.94304 GB/s -> 41.943;
--   busbw = 41.94304 x 2(4-1)/4 = 62.91456 -> 62.915; skew = 1030 - 1000 = 30; straggler = rank 1
-- _allgather_base (named AllGather, as every spelling of it): out 4000 BFloat16 = 8000 bytes;
--   rank 0 [2000, 10], rank 1 [2005, 12]
--   latency 10 µs; algbw = 8000 / 10000 = 0.8; busbw = 0.8 x (4-1)/4 = 0.6; skew 5; straggler rank 1
.report collectives
