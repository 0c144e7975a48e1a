-- gpu_spec drives the peaks: the H100 ("NVIDIA H100 80GB HBM3") maps to 'H100 SXM' (datasheet:
-- 3.35 TB/s, bf16 dense 989.4 TFLOP/s). uid 477 is a memory-bound bf16 addmm (its intensity,
-- 110 FLOP/byte, is below the ridge 989.4 / 3.35 = 295); halving the bandwidth in gpu_spec must
-- halve peak_tbps and double achieved_pct exactly.
SELECT name, gpu FROM device_gpu;
SELECT peak_tflops(477) AS peak_tflops, peak_tbps(477) AS peak_tbps, bound(477) AS bound;
CREATE TEMP TABLE before AS SELECT achieved_pct(477) AS pct;
UPDATE gpu_spec SET hbm_tbps = hbm_tbps / 2 WHERE gpu = 'H100 SXM';
SELECT peak_tbps(477) AS peak_tbps_after, round(achieved_pct(477) / (SELECT pct FROM before), 9) AS ratio;
-- A compute-bound case by the same rule: with 0.1 TB/s the ridge falls to 9894 -> still memory;
-- with 1000 TB/s the ridge is 0.99 FLOP/byte and the addmm becomes compute-bound.
UPDATE gpu_spec SET hbm_tbps = 1000 WHERE gpu = 'H100 SXM';
SELECT bound(477) AS bound_fast_memory;
