-- ROCm trace naming only "AMD Radeon Graphics": 104 compute units per device (an MI250 GCD or
-- an MI210, whose per-device datasheet peaks are the same: 181 TFLOP/s fp16, 1.6 TB/s).
SELECT DISTINCT name, gpu FROM device_gpu;
SELECT DISTINCT s.gpu, s.dtype, s.matrix_tflops, s.hbm_tbps FROM device_gpu g JOIN gpu_spec s ON s.gpu = g.gpu
WHERE s.dtype = 'fp16';
