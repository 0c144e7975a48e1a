// What a piece of GPU work is: computation, communication, a copy or a memset. The one place this
// is decided: gpu_class(uid), the timeline / temporal / collectives reports, the GPU timeline
// picture and op_category's "comm" all follow it. Kernels are classed by rules that are data (a
// schema's kernel_rule table, shipped as sql/kernel_rules.sql, extended by users), then by what
// launched them (gpu_class_schema.h).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/trace_model.h"

namespace tlsql {

enum class GpuClass : uint8_t { none, compute, communication, memcpy, memset };

// The rules of each reference, where they differ (docs/reports.md):
//   tlsql: memcpys and memsets by kind; kernels by the kernel rules (communication libraries:
//          NCCL / RCCL / MSCCL++, vLLM's and SGLang's custom all-reduce, torch symmetric memory,
//          DeepEP, NVSHMEM, userbuffers; computation families), a kernel no rule matches by what
//          launched it (communication_context above it), else computation;
//   tracelens: the same, with memsets counted as computation (TraceLens's gpu_timeline);
//   hta: kernels named "nccl" are communication (HTA's temporal breakdown), memcpys / memsets by kind.
enum class GpuRule : uint8_t { tlsql, tracelens, hta };
constexpr int kGpuRules = 3;

std::optional<GpuRule> gpu_rule(std::string_view name);  // "tlsql", "tracelens", "hta"
const char* gpu_class_name(GpuClass c);                  // "compute", ...; "" for none

// A GPU kernel name that a communication library launches (by the shipped kernel rules).
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

// Which way a copy goes, from its name as each profiler writes it: Kineto's "Memcpy HtoD (Pageable
// -> Device)", the Nsight reader's "Memcpy Host-to-Device" (nsys's ENUM_CUDA_MEMCPY_OPER label,
// "Unified " before it for a managed copy), rocprofv3's "MEMORY_COPY_HOST_TO_DEVICE": Kineto's
// four letters, H(ost), D(evice), A(rray), P(eer) around "to" ("HtoD", "DtoH", "DtoD", "PtoP",
// ...); "" when the name says none. HTA's memory kinds ("Memcpy HtoD": the memory_bw reports) and
// whether a copy's bytes cross a link (perf_model.h memcpy_over_link) read it.
std::string copy_direction(std::string_view name);

// One kernel rule: a row of kernel_rule (sql/kernel_rules.sql).
struct KernelRule {
  std::string pattern;  // GLOB over the kernel's lower-cased name
  GpuClass cls = GpuClass::compute;
  std::string subclass, source;
  bool operator==(const KernelRule&) const = default;
};

// A schema's kernel rules in the order they apply: highest priority first, then as inserted.
class KernelRules {
 public:
  KernelRules() = default;
  explicit KernelRules(std::vector<KernelRule> rules);
  // The first rule whose pattern matches `name` (lower-cased here), else nullptr.
  const KernelRule* match(std::string_view name) const;
  const std::vector<KernelRule>& rules() const { return rules_; }
  bool operator==(const KernelRules&) const = default;
  // The rules sql/kernel_rules.sql ships (what a database saved before kernel_rule follows).
  static const KernelRules& shipped();
  // SCHEMA.kernel_rule, or the shipped rules when the schema has no such table. A row a file can
  // hold but tlsql would not write is refused (SqlError naming it): a class other than
  // communication / compute, a pattern over 256 bytes or with more than 8 '*' (GLOB's work grows
  // with each), more than 10,000 rules.
  static KernelRules read(sqlite3* db, const std::string& schema);

 private:
  std::vector<KernelRule> rules_;
  // Per rule, the longest ASCII run of its pattern's plain characters, which every name it
  // matches holds ("" where the pattern has '?' or '[': none is taken then): a substring search
  // rules out most patterns before GLOB, whose '*' retries every position of a long kernel name.
  std::vector<std::string> needles_;
};

// Whether an op or annotation named `name` makes the kernels it launches communication (when no
// kernel rule names them; the innermost op or annotation above a kernel is what launched it): communication_op's names
// (c10d::, record_param_comms, nccl:..., all_reduce, all_to_all, ...) and names with the word "dispatch" or "combine"
// (expert-parallel all-to-all: dispatch(F), combine(B), moe_dispatch). Words are runs of letters
// and digits. Only ops (cpu_op) and annotations say so: python frames such as
// __torch_dispatch__ do not.
bool communication_context(Kind kind, std::string_view name);

// The class of an event of kind `kind` named `name`; none for events that are not GPU work.
// `rules`: the schema's kernel rules; `under_communication`: a communication_context is above it.
GpuClass classify_gpu(Kind kind, std::string_view name, GpuRule rule, const KernelRules& rules,
                      bool under_communication);
// The same by the shipped rules and the name alone.
GpuClass classify_gpu(Kind kind, std::string_view name, GpuRule rule);

}  // namespace tlsql
