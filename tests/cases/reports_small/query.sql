-- tests/data/launch_small.json: five launches on one stream (µs): launch call [start, dur] -> kernel [start, dur],
-- delay = kernel start - call end, at least 0 (HTA)
--   k_a [100, 10] -> [105, 5]   delay max(0, -5) = 0, short (5 < 10)
--   k_b [200, 60] -> [400, 100] delay 140, runtime outlier (60 > 50), delay outlier (140 > 100)
--   k_c [300, 8]  -> [500, 20]  delay 192, delay outlier
--   k_d [510, 5]  -> [600, 10]  delay 85
--   k_e [515, 5]  -> [620, 10]  delay 100 (not > 100)
-- launch summary: 5 launches, 1 short, 1 runtime outlier, 2 delay outliers; mean cpu (10+60+8+5+5)/5 = 17.6,
--   mean gpu (5+100+20+10+10)/5 = 29.0, mean delay (0+140+192+85+100)/5 = 103.4, max 192.0
-- idle (gap before each kernel; host wait when its launch started after the previous kernel ended):
--   k_b: 400-110 = 290, launch 200 > 110 -> host_wait; k_c: 500-500 = 0, launch 300 < 500 -> kernel_wait (0 < 30);
--   k_d: 600-520 = 80 >= 30 -> other; k_e: 620-610 = 10 -> kernel_wait. Total 380: ratios 290/380 = 0.76,
--   10/380 = 0.03, 80/380 = 0.21
-- timeline / temporal: busy 5+100+20+10+10 = 145 µs of 630-105 = 525 (27.6190476190476 %), idle 380 (72.3809523809524 %)
.report launch
.report launch_outliers
.report idle
.report timeline
.report temporal
