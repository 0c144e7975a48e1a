-- Peak numbers per GPU model and dtype: vendor datasheet figures, dense (no sparsity), at boost
-- clock. matrix = tensor cores / matrix cores; vector = CUDA cores / SIMD. NVIDIA fp32 "matrix"
-- is the CUDA-core figure because PyTorch runs fp32 matmuls without TF32 by default (see the tf32
-- rows). AMD MI250/MI250X figures are per GCD (PyTorch sees each GCD as one device): half of the
-- per-OAM datasheet figure. UPDATE these rows with your own measured peaks; the functions follow.
CREATE TABLE IF NOT EXISTS @schema.gpu_spec(
  gpu TEXT NOT NULL,           -- model, e.g. 'H100 SXM'
  dtype TEXT NOT NULL,         -- fp64, fp32, tf32, fp16, bf16, fp8, int8
  matrix_tflops REAL,          -- TFLOP/s (TOPS for int8) on matrix / tensor cores
  vector_tflops REAL,          -- TFLOP/s on vector units (NULL where the datasheet gives none)
  hbm_tbps REAL,               -- memory bandwidth, TB/s (10^12 bytes/s)
  source TEXT,
  PRIMARY KEY(gpu, dtype)
);
-- Which gpu_spec model a device name (deviceProperties.name) is: first matching pattern by priority.
CREATE TABLE IF NOT EXISTS @schema.gpu_alias(
  pattern TEXT NOT NULL,       -- LIKE pattern on device.name
  sm_count INTEGER,            -- when set, device.sm_count must equal it (names like "AMD Radeon Graphics")
  gpu TEXT NOT NULL,
  priority INTEGER NOT NULL    -- lower wins
);
INSERT INTO @schema.gpu_spec SELECT * FROM (
  WITH v(gpu, dtype, matrix_tflops, vector_tflops, hbm_tbps, source) AS (VALUES
  ('H100 SXM', 'fp64', 67, 34, 3.35, 'NVIDIA H100 Tensor Core GPU datasheet (SXM5), dense'),
  ('H100 SXM', 'fp32', 67, 67, 3.35, 'NVIDIA H100 datasheet (SXM5): FP32 CUDA cores'),
  ('H100 SXM', 'tf32', 494.7, NULL, 3.35, 'NVIDIA H100 datasheet (SXM5): 989 with sparsity, halved'),
  ('H100 SXM', 'fp16', 989.4, 133.8, 3.35, 'NVIDIA H100 datasheet (SXM5), dense; vector: H100 architecture whitepaper'),
  ('H100 SXM', 'bf16', 989.4, 133.8, 3.35, 'NVIDIA H100 datasheet (SXM5), dense; vector: H100 architecture whitepaper'),
  ('H100 SXM', 'fp8', 1978.9, NULL, 3.35, 'NVIDIA H100 datasheet (SXM5), dense'),
  ('H100 SXM', 'int8', 1978.9, NULL, 3.35, 'NVIDIA H100 datasheet (SXM5), dense TOPS'),
  ('H100 PCIe', 'fp64', 51.2, 25.6, 2.0, 'NVIDIA H100 datasheet (PCIe), dense'),
  ('H100 PCIe', 'fp32', 51.2, 51.2, 2.0, 'NVIDIA H100 datasheet (PCIe): FP32 CUDA cores'),
  ('H100 PCIe', 'tf32', 378, NULL, 2.0, 'NVIDIA H100 datasheet (PCIe), dense'),
  ('H100 PCIe', 'fp16', 756, NULL, 2.0, 'NVIDIA H100 datasheet (PCIe), dense'),
  ('H100 PCIe', 'bf16', 756, NULL, 2.0, 'NVIDIA H100 datasheet (PCIe), dense'),
  ('H100 PCIe', 'fp8', 1513, NULL, 2.0, 'NVIDIA H100 datasheet (PCIe), dense'),
  ('H100 PCIe', 'int8', 1513, NULL, 2.0, 'NVIDIA H100 datasheet (PCIe), dense TOPS'),
  ('H200', 'fp64', 67, 34, 4.8, 'NVIDIA H200 datasheet (SXM), dense'),
  ('H200', 'fp32', 67, 67, 4.8, 'NVIDIA H200 datasheet (SXM): FP32 CUDA cores'),
  ('H200', 'tf32', 494.7, NULL, 4.8, 'NVIDIA H200 datasheet (SXM), dense'),
  ('H200', 'fp16', 989.4, 133.8, 4.8, 'NVIDIA H200 datasheet (SXM), dense; vector as H100'),
  ('H200', 'bf16', 989.4, 133.8, 4.8, 'NVIDIA H200 datasheet (SXM), dense; vector as H100'),
  ('H200', 'fp8', 1978.9, NULL, 4.8, 'NVIDIA H200 datasheet (SXM), dense'),
  ('H200', 'int8', 1978.9, NULL, 4.8, 'NVIDIA H200 datasheet (SXM), dense TOPS'),
  ('H20', 'fp64', 1, 1, 4.0, 'NVIDIA H20 product brief'),
  ('H20', 'fp32', 44, 44, 4.0, 'NVIDIA H20 product brief'),
  ('H20', 'tf32', 74, NULL, 4.0, 'NVIDIA H20 product brief, dense'),
  ('H20', 'fp16', 148, NULL, 4.0, 'NVIDIA H20 product brief, dense'),
  ('H20', 'bf16', 148, NULL, 4.0, 'NVIDIA H20 product brief, dense'),
  ('H20', 'fp8', 296, NULL, 4.0, 'NVIDIA H20 product brief, dense'),
  ('H20', 'int8', 296, NULL, 4.0, 'NVIDIA H20 product brief, dense TOPS'),
  ('B200', 'fp64', 37, 37, 8.0, 'NVIDIA HGX B200 datasheet: 8-GPU figure / 8'),
  ('B200', 'fp32', 75, 75, 8.0, 'NVIDIA HGX B200 datasheet: 8-GPU figure / 8'),
  ('B200', 'tf32', 1125, NULL, 8.0, 'NVIDIA HGX B200 datasheet: 8-GPU sparse figure / 8 / 2'),
  ('B200', 'fp16', 2250, NULL, 8.0, 'NVIDIA HGX B200 datasheet: 8-GPU sparse figure / 8 / 2'),
  ('B200', 'bf16', 2250, NULL, 8.0, 'NVIDIA HGX B200 datasheet: 8-GPU sparse figure / 8 / 2'),
  ('B200', 'fp8', 4500, NULL, 8.0, 'NVIDIA HGX B200 datasheet: 8-GPU sparse figure / 8 / 2'),
  ('B200', 'int8', 4500, NULL, 8.0, 'NVIDIA HGX B200 datasheet: 8-GPU sparse figure / 8 / 2'),
  ('A100 SXM 80GB', 'fp64', 19.5, 9.7, 2.039, 'NVIDIA A100 datasheet (SXM 80GB)'),
  ('A100 SXM 80GB', 'fp32', 19.5, 19.5, 2.039, 'NVIDIA A100 datasheet (SXM 80GB): FP32 CUDA cores'),
  ('A100 SXM 80GB', 'tf32', 156, NULL, 2.039, 'NVIDIA A100 datasheet, dense'),
  ('A100 SXM 80GB', 'fp16', 312, 78, 2.039, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 SXM 80GB', 'bf16', 312, 39, 2.039, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 SXM 80GB', 'int8', 624, NULL, 2.039, 'NVIDIA A100 datasheet, dense TOPS'),
  ('A100 SXM 40GB', 'fp64', 19.5, 9.7, 1.555, 'NVIDIA A100 datasheet (SXM 40GB)'),
  ('A100 SXM 40GB', 'fp32', 19.5, 19.5, 1.555, 'NVIDIA A100 datasheet (SXM 40GB): FP32 CUDA cores'),
  ('A100 SXM 40GB', 'tf32', 156, NULL, 1.555, 'NVIDIA A100 datasheet, dense'),
  ('A100 SXM 40GB', 'fp16', 312, 78, 1.555, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 SXM 40GB', 'bf16', 312, 39, 1.555, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 SXM 40GB', 'int8', 624, NULL, 1.555, 'NVIDIA A100 datasheet, dense TOPS'),
  ('A100 PCIe 80GB', 'fp64', 19.5, 9.7, 1.935, 'NVIDIA A100 datasheet (PCIe 80GB)'),
  ('A100 PCIe 80GB', 'fp32', 19.5, 19.5, 1.935, 'NVIDIA A100 datasheet (PCIe 80GB): FP32 CUDA cores'),
  ('A100 PCIe 80GB', 'tf32', 156, NULL, 1.935, 'NVIDIA A100 datasheet, dense'),
  ('A100 PCIe 80GB', 'fp16', 312, 78, 1.935, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 PCIe 80GB', 'bf16', 312, 39, 1.935, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 PCIe 80GB', 'int8', 624, NULL, 1.935, 'NVIDIA A100 datasheet, dense TOPS'),
  ('A100 PCIe 40GB', 'fp64', 19.5, 9.7, 1.555, 'NVIDIA A100 datasheet (PCIe 40GB)'),
  ('A100 PCIe 40GB', 'fp32', 19.5, 19.5, 1.555, 'NVIDIA A100 datasheet (PCIe 40GB): FP32 CUDA cores'),
  ('A100 PCIe 40GB', 'tf32', 156, NULL, 1.555, 'NVIDIA A100 datasheet, dense'),
  ('A100 PCIe 40GB', 'fp16', 312, 78, 1.555, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 PCIe 40GB', 'bf16', 312, 39, 1.555, 'NVIDIA A100 datasheet, dense; vector: A100 architecture whitepaper'),
  ('A100 PCIe 40GB', 'int8', 624, NULL, 1.555, 'NVIDIA A100 datasheet, dense TOPS'),
  ('A10', 'fp32', 31.2, 31.2, 0.6, 'NVIDIA A10 datasheet'),
  ('A10', 'tf32', 62.5, NULL, 0.6, 'NVIDIA A10 datasheet, dense'),
  ('A10', 'fp16', 125, NULL, 0.6, 'NVIDIA A10 datasheet, dense'),
  ('A10', 'bf16', 125, NULL, 0.6, 'NVIDIA A10 datasheet, dense'),
  ('A10', 'int8', 250, NULL, 0.6, 'NVIDIA A10 datasheet, dense TOPS'),
  ('L4', 'fp32', 30.3, 30.3, 0.3, 'NVIDIA L4 datasheet'),
  ('L4', 'tf32', 60, NULL, 0.3, 'NVIDIA L4 datasheet: 120 with sparsity, halved'),
  ('L4', 'fp16', 121, NULL, 0.3, 'NVIDIA L4 datasheet: 242 with sparsity, halved'),
  ('L4', 'bf16', 121, NULL, 0.3, 'NVIDIA L4 datasheet: 242 with sparsity, halved'),
  ('L4', 'fp8', 242.5, NULL, 0.3, 'NVIDIA L4 datasheet: 485 with sparsity, halved'),
  ('L4', 'int8', 242.5, NULL, 0.3, 'NVIDIA L4 datasheet: 485 with sparsity, halved'),
  ('L40S', 'fp32', 91.6, 91.6, 0.864, 'NVIDIA L40S datasheet'),
  ('L40S', 'tf32', 183, NULL, 0.864, 'NVIDIA L40S datasheet: 366 with sparsity, halved'),
  ('L40S', 'fp16', 362.05, NULL, 0.864, 'NVIDIA L40S datasheet: 733 with sparsity, halved'),
  ('L40S', 'bf16', 362.05, NULL, 0.864, 'NVIDIA L40S datasheet: 733 with sparsity, halved'),
  ('L40S', 'fp8', 733, NULL, 0.864, 'NVIDIA L40S datasheet: 1466 with sparsity, halved'),
  ('L40S', 'int8', 733, NULL, 0.864, 'NVIDIA L40S datasheet: 1466 with sparsity, halved'),
  ('V100 SXM2', 'fp64', 7.8, 7.8, 0.9, 'NVIDIA V100 datasheet (SXM2)'),
  ('V100 SXM2', 'fp32', 15.7, 15.7, 0.9, 'NVIDIA V100 datasheet (SXM2)'),
  ('V100 SXM2', 'fp16', 125, 31.4, 0.9, 'NVIDIA V100 datasheet (SXM2): tensor; vector: Volta whitepaper'),
  ('V100 PCIe', 'fp64', 7, 7, 0.9, 'NVIDIA V100 datasheet (PCIe)'),
  ('V100 PCIe', 'fp32', 14, 14, 0.9, 'NVIDIA V100 datasheet (PCIe)'),
  ('V100 PCIe', 'fp16', 112, 28, 0.9, 'NVIDIA V100 datasheet (PCIe): tensor; vector: Volta whitepaper'),
  ('T4', 'fp32', 8.1, 8.1, 0.32, 'NVIDIA T4 datasheet'),
  ('T4', 'fp16', 65, NULL, 0.32, 'NVIDIA T4 datasheet: mixed precision FP16/FP32'),
  ('T4', 'int8', 130, NULL, 0.32, 'NVIDIA T4 datasheet, TOPS'),
  ('MI210', 'fp64', 45.3, 22.6, 1.6, 'AMD Instinct MI210 datasheet'),
  ('MI210', 'fp32', 45.3, 22.6, 1.6, 'AMD Instinct MI210 datasheet'),
  ('MI210', 'fp16', 181, NULL, 1.6, 'AMD Instinct MI210 datasheet'),
  ('MI210', 'bf16', 181, NULL, 1.6, 'AMD Instinct MI210 datasheet'),
  ('MI210', 'int8', 181, NULL, 1.6, 'AMD Instinct MI210 datasheet, TOPS'),
  ('MI250X', 'fp64', 47.85, 23.95, 1.6, 'AMD Instinct MI250X datasheet, per GCD (half the OAM)'),
  ('MI250X', 'fp32', 47.85, 23.95, 1.6, 'AMD Instinct MI250X datasheet, per GCD (half the OAM)'),
  ('MI250X', 'fp16', 191.5, NULL, 1.6, 'AMD Instinct MI250X datasheet, per GCD (half the OAM)'),
  ('MI250X', 'bf16', 191.5, NULL, 1.6, 'AMD Instinct MI250X datasheet, per GCD (half the OAM)'),
  ('MI250X', 'int8', 191.5, NULL, 1.6, 'AMD Instinct MI250X datasheet, per GCD (half the OAM), TOPS'),
  ('MI250', 'fp64', 45.25, 22.65, 1.6, 'AMD Instinct MI250 datasheet, per GCD (half the OAM)'),
  ('MI250', 'fp32', 45.25, 22.65, 1.6, 'AMD Instinct MI250 datasheet, per GCD (half the OAM)'),
  ('MI250', 'fp16', 181.05, NULL, 1.6, 'AMD Instinct MI250 datasheet, per GCD (half the OAM)'),
  ('MI250', 'bf16', 181.05, NULL, 1.6, 'AMD Instinct MI250 datasheet, per GCD (half the OAM)'),
  ('MI250', 'int8', 181.05, NULL, 1.6, 'AMD Instinct MI250 datasheet, per GCD (half the OAM), TOPS'),
  ('MI300X', 'fp64', 163.4, 81.7, 5.3, 'AMD Instinct MI300X datasheet, dense'),
  ('MI300X', 'fp32', 163.4, 163.4, 5.3, 'AMD Instinct MI300X datasheet, dense'),
  ('MI300X', 'tf32', 653.7, NULL, 5.3, 'AMD Instinct MI300X datasheet, dense'),
  ('MI300X', 'fp16', 1307.4, NULL, 5.3, 'AMD Instinct MI300X datasheet, dense'),
  ('MI300X', 'bf16', 1307.4, NULL, 5.3, 'AMD Instinct MI300X datasheet, dense'),
  ('MI300X', 'fp8', 2614.9, NULL, 5.3, 'AMD Instinct MI300X datasheet, dense'),
  ('MI300X', 'int8', 2614.9, NULL, 5.3, 'AMD Instinct MI300X datasheet, dense TOPS'),
  ('MI325X', 'fp64', 163.4, 81.7, 6.0, 'AMD Instinct MI325X datasheet, dense'),
  ('MI325X', 'fp32', 163.4, 163.4, 6.0, 'AMD Instinct MI325X datasheet, dense'),
  ('MI325X', 'tf32', 653.7, NULL, 6.0, 'AMD Instinct MI325X datasheet, dense'),
  ('MI325X', 'fp16', 1307.4, NULL, 6.0, 'AMD Instinct MI325X datasheet, dense'),
  ('MI325X', 'bf16', 1307.4, NULL, 6.0, 'AMD Instinct MI325X datasheet, dense'),
  ('MI325X', 'fp8', 2614.9, NULL, 6.0, 'AMD Instinct MI325X datasheet, dense'),
  ('MI325X', 'int8', 2614.9, NULL, 6.0, 'AMD Instinct MI325X datasheet, dense TOPS'),
  -- MI350X / MI355X (CDNA 4, gfx950, 256 CUs; rocprofv3 names them 'AMD Instinct MI350X' /
  -- 'AMD Instinct MI355X'): AMD's product pages and datasheets,
  -- https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html and .../mi355x.html,
  -- dense figures (the sheets' sparsity figures are twice these). The two differ only in peak
  -- engine clock (2.2 vs 2.4 GHz): 256 CUs x 4096 fp16 matrix FLOP/clk x 2.2 GHz = 2306.9 TFLOP/s.
  -- CDNA 4 lists no TF32 matrix rate, so no tf32 row.
  ('MI350X', 'fp64', 72.1, 72.1, 8.0, 'AMD Instinct MI350X datasheet, dense'),
  ('MI350X', 'fp32', 144.2, 144.2, 8.0, 'AMD Instinct MI350X datasheet, dense'),
  ('MI350X', 'fp16', 2306.9, NULL, 8.0, 'AMD Instinct MI350X datasheet, dense'),
  ('MI350X', 'bf16', 2306.9, NULL, 8.0, 'AMD Instinct MI350X datasheet, dense'),
  ('MI350X', 'fp8', 4613.7, NULL, 8.0, 'AMD Instinct MI350X datasheet, dense'),
  ('MI350X', 'int8', 4613.7, NULL, 8.0, 'AMD Instinct MI350X datasheet, dense TOPS'),
  ('MI355X', 'fp64', 78.6, 78.6, 8.0, 'AMD Instinct MI355X datasheet, dense'),
  ('MI355X', 'fp32', 157.3, 157.3, 8.0, 'AMD Instinct MI355X datasheet, dense'),
  ('MI355X', 'fp16', 2516.6, NULL, 8.0, 'AMD Instinct MI355X datasheet, dense'),
  ('MI355X', 'bf16', 2516.6, NULL, 8.0, 'AMD Instinct MI355X datasheet, dense'),
  ('MI355X', 'fp8', 5033.2, NULL, 8.0, 'AMD Instinct MI355X datasheet, dense'),
  ('MI355X', 'int8', 5033.2, NULL, 8.0, 'AMD Instinct MI355X datasheet, dense TOPS'))
  SELECT * FROM v) WHERE NOT EXISTS (SELECT 1 FROM @schema.gpu_spec);
INSERT INTO @schema.gpu_alias SELECT * FROM (
  WITH v(pattern, sm_count, gpu, priority) AS (VALUES
  ('%H200%', NULL, 'H200', 1), ('%H100%PCIe%', NULL, 'H100 PCIe', 2), ('%H100%', NULL, 'H100 SXM', 3),
  ('%H20%', NULL, 'H20', 4), ('%B200%', NULL, 'B200', 5),
  ('%A100%80GB%PCIe%', NULL, 'A100 PCIe 80GB', 6), ('%A100-PCIE-40GB%', NULL, 'A100 PCIe 40GB', 7),
  ('%A100%PCIe%', NULL, 'A100 PCIe 40GB', 8), ('%A100%80GB%', NULL, 'A100 SXM 80GB', 9), ('%A100%', NULL, 'A100 SXM 40GB', 10),
  ('%A10', NULL, 'A10', 11), ('%A10 %', NULL, 'A10', 12), ('%L40S%', NULL, 'L40S', 13), ('%L4', NULL, 'L4', 14),
  ('%L4 %', NULL, 'L4', 15), ('%V100%PCIE%', NULL, 'V100 PCIe', 16), ('%V100%', NULL, 'V100 SXM2', 17),
  ('%T4', NULL, 'T4', 18), ('%T4 %', NULL, 'T4', 19),
  ('%MI355X%', NULL, 'MI355X', 20), ('%MI350X%', NULL, 'MI350X', 20),
  ('%MI325X%', NULL, 'MI325X', 21), ('%MI300X%', NULL, 'MI300X', 22),
  ('%MI250X%', NULL, 'MI250X', 23), ('%MI250%', NULL, 'MI250', 24), ('%MI210%', NULL, 'MI210', 25),
  -- ROCm traces that name only "AMD Radeon Graphics" (or nothing): tell by compute units.
  ('AMD Radeon Graphics', 104, 'MI210', 30), ('AMD Radeon Graphics', 110, 'MI250X', 31),
  ('AMD Radeon Graphics', 304, 'MI300X', 32), ('', 304, 'MI300X', 33), ('', 104, 'MI210', 34))
  SELECT * FROM v) WHERE NOT EXISTS (SELECT 1 FROM @schema.gpu_alias);
-- Each device's gpu_spec model.
CREATE VIEW IF NOT EXISTS @schema.device_gpu AS
  SELECT d.trace, d.id, d.name,
         (SELECT a.gpu FROM gpu_alias a WHERE coalesce(d.name, '') LIKE a.pattern
            AND (a.sm_count IS NULL OR a.sm_count = d.sm_count) ORDER BY a.priority LIMIT 1) AS gpu
  FROM device d;
