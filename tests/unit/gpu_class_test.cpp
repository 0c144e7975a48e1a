// The GPU-work classifier (udf/gpu_class.h) on kernel names from real traces, under each rule.
#include "udf/gpu_class.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "src/ascii_case.h"

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

TEST_CASE("collective names: one spelling for args, kernel names and op names") {
  using tlsql::collective_name;
  // PyTorch's "Collective name" args (record_param_comms)
  CHECK(collective_name("allreduce") == "AllReduce");
  CHECK(collective_name("allreduce_coalesced") == "AllReduce");
  CHECK(collective_name("_allgather_base") == "AllGather");
  CHECK(collective_name("all_gather_into_tensor_coalesced") == "AllGather");
  CHECK(collective_name("_reduce_scatter_base") == "ReduceScatter");
  CHECK(collective_name("reduce_scatter_tensor_coalesced") == "ReduceScatter");
  CHECK(collective_name("all_to_all") == "AllToAll");
  CHECK(collective_name("all_to_allv") == "AllToAllv");
  CHECK(collective_name("broadcast") == "Broadcast");
  CHECK(collective_name("reduce") == "Reduce");
  CHECK(collective_name("send") == "Send");
  CHECK(collective_name("recv") == "Recv");
  CHECK(collective_name("gather") == "Gather");
  CHECK(collective_name("scatter") == "Scatter");
  CHECK(collective_name("barrier") == "Barrier");
  // NCCL / RCCL kernels (the argument lists hold no collective's word)
  CHECK(collective_name("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)") == "AllGather");
  CHECK(collective_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)") ==
        "AllReduce");
  CHECK(collective_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)") ==
        "SendRecv");
  CHECK(collective_name("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
        "ReduceScatter");
  CHECK(collective_name("ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevComm*)") == "Reduce");
  CHECK(collective_name("ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)") == "Broadcast");
  // RCCL's one kernel for every collective: its launching op says which
  CHECK(collective_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)").empty());
  // custom all-reduce kernels
  CHECK(collective_name("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(vllm::RankData*)") == "AllReduce");
  CHECK(collective_name("void quickreduce::allreduce_prototype_twoshot<quickreduce::CodecFP, false>(...)") ==
        "AllReduce");
  CHECK(collective_name("void c10d::symmetric_memory::multimem_all_reduce_kernel<8>(...)") == "AllReduce");
  // op names above the kernels
  CHECK(collective_name("nccl:all_reduce") == "AllReduce");
  CHECK(collective_name("nccl:_all_gather_base") == "AllGather");
  CHECK(collective_name("c10d::broadcast_") == "Broadcast");
  CHECK(collective_name("gloo:all_reduce") == "AllReduce");
  CHECK(collective_name("record_param_comms").empty());
  CHECK(collective_name("void deep_ep::intranode::dispatch<8, 768, 8192>(...)").empty());
}

TEST_CASE("kernel rules: the shipped table, GLOB over the lower-cased name, first match in order") {
  const tlsql::KernelRules& shipped = tlsql::KernelRules::shipped();
  REQUIRE(shipped.rules().size() >= 20);  // sql/kernel_rules.sql, read through SQLite
  const tlsql::KernelRule* r = shipped.match("void deep_ep::internode::combine<8>(int*)");
  REQUIRE(r);
  CHECK(r->cls == GpuClass::communication);
  CHECK(r->subclass == "all_to_all");
  CHECK(shipped.match("NCCLDEVKERNEL_X")->pattern == "*nccl*");  // case does not matter
  CHECK(shipped.match("void mylib::ep::internode::dispatch<8>(int*)") == nullptr);
  // Users' rules come first (priority), then in insertion order.
  tlsql::KernelRules user(
      {{"*mylib::ep::*", GpuClass::communication, "all_to_all", "user"}, {"*mylib*", GpuClass::compute, "", "user"}});
  CHECK(user.match("void mylib::ep::x")->cls == GpuClass::communication);
  CHECK(user.match("void mylib::gemm")->cls == GpuClass::compute);
  CHECK(classify_gpu(Kind::kernel, "void mylib::ep::x", GpuRule::tlsql, user, false) == GpuClass::communication);
  // No rule: what launched it decides.
  CHECK(classify_gpu(Kind::kernel, "void other::k", GpuRule::tlsql, user, true) == GpuClass::communication);
  CHECK(classify_gpu(Kind::kernel, "void other::k", GpuRule::tlsql, user, false) == GpuClass::compute);
  // HTA's rule is HTA's: kernels named nccl only.
  CHECK(classify_gpu(Kind::kernel, "void mylib::ep::x", GpuRule::hta, user, true) == GpuClass::compute);
}

// KernelRules::match rules most patterns out by a substring search before GLOB: it must answer
// as GLOB alone does (sqlite3_strglob over the lower-cased name, first match) for every pattern,
// those with '?', '[', no plain run, runs GLOB reads as characters (UTF-8, malformed bytes that
// both read as U+FFFD) and names with such bytes.
TEST_CASE("kernel rules: the substring pre-check answers as GLOB alone") {
  const std::vector<std::string> patterns = {
      "*nccl*",   "*gemm*nn*", "sm90_*",  "*_kernel",      "*",          "",       "**",    "a*b*c",
      "*[ab]cd*", "*g?mm*",    "*xmma*",  "*caf\xc3\xa9*", "*\xc0\x80*", "*\xff*", "Gemm*", "*::*::*",
      "*ep::*",   "cutlass*",  "*_128x*", "*e*e*e*",       "[*]*",       "*]*",    "*a]b*", "*\xc3*"};
  const std::vector<std::string> names = {
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel",
      "void deep_ep::internode::combine<8>(int*)",
      "caf\xc3\xa9_kernel",
      "odd\xc1\x81"
      "bytes",
      "stray\xff"
      "byte",
      "[x]y",
      "a]b",
      "abc",
      "",
      "gemm",
      "GEMM_NN",
      "g_mm",
      "aabbcd",
      "eee",
      "ee"};
  std::vector<tlsql::KernelRule> one(1);
  for (const std::string& pattern : patterns) {
    one[0] = {pattern, GpuClass::compute, "", "test"};
    const tlsql::KernelRules rules(one);
    for (const std::string& name : names) {
      CAPTURE(pattern);
      CAPTURE(name);
      const std::string lower = tlsql::lowercase(name);
      CHECK((rules.match(name) != nullptr) == (sqlite3_strglob(pattern.c_str(), lower.c_str()) == 0));
    }
  }
  // And in order: the first pattern that matches, whichever the pre-check passed over.
  const tlsql::KernelRules two({{"*zzz*", GpuClass::communication, "", "t"}, {"*g?mm*", GpuClass::compute, "", "t"}});
  CHECK(two.match("a_gemm_b")->pattern == "*g?mm*");
}

TEST_CASE("what makes the kernels an op or annotation launches communication") {
  using tlsql::communication_context;
  for (const char* name : {"dispatch(F)", "combine(B)", "moe_dispatch", "c10d::allreduce_", "record_param_comms",
                           "nccl:all_to_all", "MoE.all_to_all"}) {
    CAPTURE(name);
    CHECK(communication_context(Kind::annotation, name));
    CHECK(communication_context(Kind::cpu_op, name));
  }
  // Words, not substrings; python frames never (torch's __torch_dispatch__ wraps compute).
  for (const char* name : {"dispatcher_setup", "recombined", "aten::mm", "triton_poi_fused_all_reduce_0"})
    CHECK_FALSE(communication_context(Kind::annotation, name));
  CHECK_FALSE(communication_context(Kind::python, "torch/utils/_python_dispatch.py(12): __torch_dispatch__"));
  CHECK_FALSE(communication_context(Kind::runtime, "dispatch"));
}

// A copy's direction read the same from each profiler's name (the memory kinds of memory_bw, the
// copies a perf model does not measure against HBM): Kineto's, the Nsight reader's (nsys's
// ENUM_CUDA_MEMCPY_OPER labels), rocprofv3's operation names.
TEST_CASE("copy_direction: one direction for each profiler's name of a copy") {
  using tlsql::copy_direction;
  CHECK(copy_direction("Memcpy HtoD (Pageable -> Device)") == "HtoD");
  CHECK(copy_direction("Memcpy DtoH (Device -> Pinned)") == "DtoH");
  CHECK(copy_direction("Memcpy DtoD (Device -> Device)") == "DtoD");
  CHECK(copy_direction("Memcpy PtoP (Device -> Device)") == "PtoP");
  CHECK(copy_direction("Memcpy HtoD") == "HtoD");
  CHECK(copy_direction("Memcpy HtoD(Pinned)") == "HtoD");
  CHECK(copy_direction("Memcpy Host-to-Device") == "HtoD");
  CHECK(copy_direction("Memcpy Device-to-Host") == "DtoH");
  CHECK(copy_direction("Memcpy Device-to-Device") == "DtoD");
  CHECK(copy_direction("Memcpy Peer-to-Peer") == "PtoP");
  CHECK(copy_direction("Memcpy Array-to-Device") == "AtoD");
  CHECK(copy_direction("Memcpy Host-to-Host") == "HtoH");
  CHECK(copy_direction("Memcpy Unified Device-to-Host") == "DtoH");
  CHECK(copy_direction("MEMORY_COPY_HOST_TO_DEVICE") == "HtoD");
  CHECK(copy_direction("MEMORY_COPY_DEVICE_TO_HOST") == "DtoH");
  CHECK(copy_direction("MEMORY_COPY_DEVICE_TO_DEVICE") == "DtoD");
  CHECK(copy_direction("MEMORY_COPY_HOST_TO_HOST") == "HtoH");
  for (const char* none :
       {"MEMORY_COPY_NONE", "MEMORY_COPY_LAST", "Memcpy Unknown", "Memcpy", "Memset (Device)", "Memset", "Memcpy HtoX",
        "Memcpy htod", "Memcpy Host-to-Disk", "aten::copy_", "cudaMemcpyAsync", "MEMORY_COPY_HOST_TO_"}) {
    CAPTURE(none);
    CHECK(copy_direction(none).empty());
  }
}
