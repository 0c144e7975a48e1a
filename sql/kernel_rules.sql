-- What a GPU kernel is, by its name: the rules every report, gpu_class() and the pictures read
-- (udf/gpu_class.h, docs/reports.md "Kernel classes"). A kernel takes the class of the first rule
-- whose pattern matches its name (GLOB over the lower-cased name), highest priority first, then in
-- insertion order. A kernel no rule matches is communication when an op or annotation above it
-- says so (c10d::..., record_param_comms, nccl:..., a name with the word dispatch / combine /
-- all_to_all / all_reduce), else computation. Memcpys and memsets are classed by their kind.
-- Add your own (they travel in a saved database; priority 100 beats every rule shipped here):
--   INSERT INTO kernel_rule(pattern, class, subclass) VALUES ('*my_a2a_kernel*', 'communication', 'all_to_all');
-- Only names that public libraries ship are listed.
CREATE TABLE IF NOT EXISTS @schema.kernel_rule(
  pattern TEXT NOT NULL,                -- GLOB over the kernel's lower-cased name
  class TEXT NOT NULL CHECK (class IN ('communication', 'compute')),
  subclass TEXT,                        -- the collective: all_to_all, all_reduce, p2p, ...; NULL: from the name
  source TEXT NOT NULL DEFAULT 'user',  -- the library (shipped rules) or 'user'
  priority INTEGER NOT NULL DEFAULT 100 -- higher first
);
INSERT INTO @schema.kernel_rule(pattern, class, subclass, source, priority) SELECT * FROM (
  WITH v(pattern, class, subclass, source, priority) AS (VALUES
  -- Communication libraries (priority 10: before the compute families below).
  ('*nccl*', 'communication', NULL, 'NCCL (ncclDevKernel_*, ncclKernel_*)', 10),
  ('*rccl*', 'communication', NULL, 'RCCL', 10),
  ('*msccl*', 'communication', NULL, 'MSCCL / MSCCL++ (mscclpp::...)', 10),
  ('*nvshmem*', 'communication', NULL, 'NVSHMEM', 10),
  ('*deep_ep::*', 'communication', 'all_to_all', 'DeepEP (deep_ep::intranode / internode dispatch, combine)', 10),
  ('*cross_device_reduce*', 'communication', 'all_reduce', 'vLLM custom all-reduce', 10),
  ('*quickreduce*', 'communication', 'all_reduce', 'vLLM quick all-reduce (ROCm)', 10),
  ('*one_shot_all_reduce*', 'communication', 'all_reduce', 'SGLang / torch symmetric-memory all-reduce', 10),
  ('*two_shot_all_reduce*', 'communication', 'all_reduce', 'SGLang / torch symmetric-memory all-reduce', 10),
  ('*multimem_*', 'communication', NULL, 'torch symmetric memory (multimem_all_reduce, ...)', 10),
  ('*userbuffers*', 'communication', NULL, 'Transformer Engine / Megatron userbuffers', 10),
  -- Computation: never communication, whatever launched them (priority 0). Which family a kernel
  -- belongs to (GEMM, SDPA, CONV) is kernel_family(name)'s one list (udf/names/event_names.cpp).
  ('triton_*', 'compute', NULL, 'inductor (triton_poi_fused_..._all_reduce_... computes an all())', 0),
  ('*at::native::*', 'compute', NULL, 'ATen''s own kernels', 0),
  ('*gemm*', 'compute', NULL, 'cuBLAS / CUTLASS / hipBLASLt GEMMs', 0),
  ('*cutlass*', 'compute', NULL, 'CUTLASS', 0),
  ('*cublas*', 'compute', NULL, 'cuBLAS', 0),
  ('*xmma*', 'compute', NULL, 'cuBLAS / cuDNN xmma kernels', 0),
  ('nvjet*', 'compute', NULL, 'cuBLAS nvjet kernels (Hopper / Blackwell)', 0),
  ('cijk_*', 'compute', NULL, 'rocBLAS / Tensile', 0),
  ('*flash*', 'compute', NULL, 'FlashAttention', 0),
  ('*fmha*', 'compute', NULL, 'fused multi-head attention (cuDNN, xformers, CK)', 0),
  ('*attention*', 'compute', NULL, 'attention kernels (paged_attention, ...)', 0),
  ('*conv*', 'compute', NULL, 'cuDNN / MIOpen convolutions', 0),
  ('*memcpy*', 'compute', NULL, 'copy kernels', 0),
  ('*memset*', 'compute', NULL, 'fill kernels', 0))
  SELECT * FROM v) WHERE NOT EXISTS (SELECT 1 FROM @schema.kernel_rule);
