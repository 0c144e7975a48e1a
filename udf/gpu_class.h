// What a piece of GPU work is: computation, communication, a copy or a memset. The one place this
// is decided: gpu_class(uid), the timeline / temporal / collectives reports, the GPU timeline
// picture and op_category's "comm" all follow it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/trace_model.h"

namespace tlsql {

enum class GpuClass : uint8_t { none, compute, communication, memcpy, memset };

// The rules of each reference, where they differ (docs/reports.md):
//   tlsql: memcpys and memsets by kind; kernels named by a communication library (NCCL / RCCL /
//          MSCCL, vLLM's and SGLang's custom all-reduce, torch symmetric memory, DeepEP, NVSHMEM)
//          are communication, the rest computation;
//   tracelens: the same, with memsets counted as computation (TraceLens's gpu_timeline);
//   hta: kernels named "nccl" are communication (HTA's temporal breakdown), memcpys / memsets by kind.
enum class GpuRule : uint8_t { tlsql, tracelens, hta };
constexpr int kGpuRules = 3;

std::optional<GpuRule> gpu_rule(std::string_view name);  // "tlsql", "tracelens", "hta"
const char* gpu_class_name(GpuClass c);                  // "compute", ...; "" for none

// ASCII lower case (names are matched case-insensitively here and in perf_model.cpp).
std::string lowercase(std::string_view s);

// A GPU kernel name that a communication library launches.
bool communication_kernel(std::string_view name);
// An op or annotation name that is communication (c10d::allreduce_, record_param_comms,
// nccl:all_reduce, _C_custom_ar::all_reduce, ...): op_category's "comm".
bool communication_op(std::string_view name);

// The collective a name says, one spelling for every source (the collectives and overlap reports):
// "AllReduce", "AllGather", "ReduceScatter", "AllToAll", "AllToAllv", "Broadcast", "Reduce",
// "SendRecv", "Send", "Recv", "Gather", "Scatter" or "Barrier"; "" when the name says none. It reads
// the kernel's "Collective name" arg (allreduce, _allgather_base, _reduce_scatter_base,
// all_gather_into_tensor_coalesced, all_to_allv, ...), NCCL / RCCL kernel names
// (ncclDevKernel_AllGather_RING_LL, ncclKernel_SendRecv_...), custom all-reduce kernels
// (cross_device_reduce, quickreduce, one_shot_all_reduce, multimem_all_reduce) and op names
// (nccl:all_reduce, c10d::broadcast_, gloo:all_reduce). RCCL's ncclDevKernel_Generic says none:
// its collective is its launching op's.
std::string collective_name(std::string_view name);

// The class of an event of kind `kind` named `name`; none for events that are not GPU work.
GpuClass classify_gpu(Kind kind, std::string_view name, GpuRule rule);

}  // namespace tlsql
