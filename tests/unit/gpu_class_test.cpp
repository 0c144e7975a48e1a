// The GPU-work classifier (udf/gpu_class.h) on kernel names from real traces, under each rule.
#include "udf/gpu_class.h"

#include <doctest/doctest.h>

using tlsql::classify_gpu;
using tlsql::GpuClass;
using tlsql::GpuRule;
using tlsql::Kind;

TEST_CASE("communication kernels by library name") {
  for (const char* name : {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                           "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
                           "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(vllm::RankData*)",
                           "void sglang::cross_device_reduce_2stage<__half, 8>(sglang::RankData*)",
                           "void quickreduce::allreduce_prototype_twoshot<quickreduce::CodecFP, false>(...)",
                           "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 8>(...)",
                           "void c10d::symmetric_memory::multimem_all_reduce_kernel<8>(...)",
                           "void deep_ep::intranode::dispatch<8, 768, 8192>(...)", "mscclKernel_Sum_half_LL128"}) {
    CAPTURE(name);
    CHECK(classify_gpu(Kind::kernel, name, GpuRule::tlsql) == GpuClass::communication);
    CHECK(classify_gpu(Kind::kernel, name, GpuRule::tracelens) == GpuClass::communication);
  }
  // Not communication: inductor's fused all() reductions, cuBLAS's split-K reduction, aten reductions
  for (const char* name : {"triton_poi_fused_add_all_reduce_bitwise_and_bitwise_or_embedding_ge_lt_masked_fill_0",
                           "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float>(...)",
                           "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(...)"}) {
    CAPTURE(name);
    CHECK(classify_gpu(Kind::kernel, name, GpuRule::tlsql) == GpuClass::compute);
  }
}

TEST_CASE("the rules differ on memsets and custom all-reduce") {
  // memsets: their own class, but computation in TraceLens's gpu_timeline
  CHECK(classify_gpu(Kind::memset, "Memset (Device)", GpuRule::tlsql) == GpuClass::memset);
  CHECK(classify_gpu(Kind::memset, "Memset (Device)", GpuRule::tracelens) == GpuClass::compute);
  CHECK(classify_gpu(Kind::memset, "Memset (Device)", GpuRule::hta) == GpuClass::memset);
  CHECK(classify_gpu(Kind::memcpy, "Memcpy HtoD (Pageable -> Device)", GpuRule::tracelens) == GpuClass::memcpy);
  // HTA's temporal breakdown knows NCCL only
  CHECK(classify_gpu(Kind::kernel, "void vllm::cross_device_reduce_1stage<float, 2>(...)", GpuRule::hta) ==
        GpuClass::compute);
  CHECK(classify_gpu(Kind::kernel, "ncclDevKernel_SendRecv(ncclDevComm*)", GpuRule::hta) == GpuClass::communication);
  // not GPU work
  CHECK(classify_gpu(Kind::cpu_op, "ncclDevKernel_SendRecv", GpuRule::tlsql) == GpuClass::none);
  CHECK(tlsql::gpu_rule("tracelens") == GpuRule::tracelens);
  CHECK(!tlsql::gpu_rule("TraceLens "));
}

TEST_CASE("op names: op_category's comm") {
  using tlsql::communication_op;
  CHECK(communication_op("c10d::allreduce_"));
  CHECK(communication_op("record_param_comms"));
  CHECK(communication_op("nccl:all_reduce"));
  CHECK(communication_op("_C_custom_ar::all_reduce"));
  CHECK(!communication_op("aten::mm"));
  // inductor's fused op / kernel names, which gpu_class calls computation too
  CHECK(!communication_op(
      "triton_poi_fused_add_all_reduce_bitwise_and_bitwise_or_embedding_ge_lt_masked_fill_mul_sub_0"));
}
