#include "udf/gpu_class.h"

#include <algorithm>
#include <string>

namespace tlsql {

namespace {

bool contains_any(const std::string& s, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (s.find(k) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string lowercase(std::string_view s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return (char)std::tolower(c); });
  return l;
}

std::optional<GpuRule> gpu_rule(std::string_view name) {
  if (name == "tlsql") return GpuRule::tlsql;
  if (name == "tracelens") return GpuRule::tracelens;
  if (name == "hta") return GpuRule::hta;
  return std::nullopt;
}

const char* gpu_class_name(GpuClass c) {
  switch (c) {
    case GpuClass::compute: return "compute";
    case GpuClass::communication: return "communication";
    case GpuClass::memcpy: return "memcpy";
    case GpuClass::memset: return "memset";
    case GpuClass::none: break;
  }
  return "";
}

bool communication_kernel(std::string_view name) {
  // Library and kernel names, not words: inductor fuses an all() reduction into kernels named
  // triton_poi_fused_..._all_reduce_..., which compute.
  return contains_any(lowercase(name),
                      {"nccl", "rccl", "msccl", "cross_device_reduce", "quickreduce", "one_shot_all_reduce",
                       "two_shot_all_reduce", "multimem_", "deep_ep::", "nvshmem"});
}

bool communication_op(std::string_view name) {
  if (communication_kernel(name)) return true;
  // Inductor names its kernels (and the ops that launch them) after the aten ops they fuse:
  // triton_poi_fused_..._all_reduce_... computes an all() reduction.
  if (name.substr(0, 7) == "triton_") return false;
  return contains_any(lowercase(name), {"c10d::", "record_param_comms", "allreduce", "all_reduce", "allgather",
                                        "all_gather", "reduce_scatter", "reducescatter", "all_to_all", "alltoall"});
}

std::string collective_name(std::string_view name) {
  // Compared without case, underscores and colons: _allgather_base, all_gather, AllGather and
  // nccl:all_gather are one word. Longer words first: allreduce holds reduce, reducescatter
  // holds scatter, sendrecv holds send, alltoallv holds alltoall.
  std::string w;
  for (char c : lowercase(name))
    if (c != '_' && c != ':') w += c;
  static const std::pair<const char*, const char*> kWords[] = {{"reducescatter", "ReduceScatter"},
                                                               {"allgather", "AllGather"},
                                                               {"alltoallv", "AllToAllv"},
                                                               {"alltoall", "AllToAll"},
                                                               {"allreduce", "AllReduce"},
                                                               {"crossdevicereduce", "AllReduce"},
                                                               {"quickreduce", "AllReduce"},
                                                               {"broadcast", "Broadcast"},
                                                               {"sendrecv", "SendRecv"},
                                                               {"barrier", "Barrier"},
                                                               {"gather", "Gather"},
                                                               {"scatter", "Scatter"},
                                                               {"reduce", "Reduce"},
                                                               {"send", "Send"},
                                                               {"recv", "Recv"}};
  for (auto [word, canonical] : kWords)
    if (w.find(word) != std::string::npos) return canonical;
  return "";
}

GpuClass classify_gpu(Kind kind, std::string_view name, GpuRule rule) {
  switch (kind) {
    case Kind::memcpy: return GpuClass::memcpy;
    case Kind::memset:
      if (rule != GpuRule::tracelens) return GpuClass::memset;
      return communication_kernel(name) ? GpuClass::communication : GpuClass::compute;
    case Kind::kernel:
      if (rule == GpuRule::hta)
        return lowercase(name).find("nccl") != std::string::npos ? GpuClass::communication : GpuClass::compute;
      return communication_kernel(name) ? GpuClass::communication : GpuClass::compute;
    default: return GpuClass::none;
  }
}

}  // namespace tlsql
