#include "src/kind.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <unordered_map>

#include "src/ascii_case.h"

namespace tlsql {

std::string_view kind_name(Kind k) {
  static constexpr std::array<std::string_view, kKindCount> names = {
      "cpu_op", "python",         "annotation", "runtime", "driver", "kernel", "memcpy", "memset",
      "sync",   "gpu_annotation", "instant",    "counter", "flow",   "meta",   "other"};
  return names[static_cast<size_t>(k)];
}

Kind kind_from_name(std::string_view name) {
  // A hash lookup: a saved database's millions of rows each name their kind.
  static const std::unordered_map<std::string_view, Kind> kinds = [] {
    std::unordered_map<std::string_view, Kind> m;
    for (size_t i = 0; i < kKindCount; ++i) m.emplace(kind_name((Kind)i), (Kind)i);
    return m;
  }();
  auto it = kinds.find(name);
  return it == kinds.end() ? Kind::other : it->second;
}

Kind normalize_kind(char ph, std::string_view cat) {
  switch (ph) {
    case 'M': return Kind::meta;
    case 'C': return Kind::counter;
    case 's':
    case 't':
    case 'f': return Kind::flow;
    case 'i':
    case 'I': return Kind::instant;
    default: break;
  }
  // Category names are matched case-insensitively: Kineto wrote "Kernel" in 2021, "kernel" now.
  struct Entry {
    std::string_view cat;
    Kind kind;
  };
  static constexpr Entry table[] = {
      {"cpu_op", Kind::cpu_op},
      {"operator", Kind::cpu_op},
      {"python_function", Kind::python},
      {"python", Kind::python},
      {"user_annotation", Kind::annotation},
      {"cuda_runtime", Kind::runtime},
      {"runtime", Kind::runtime},
      {"hip_runtime", Kind::runtime},
      {"cuda_driver", Kind::driver},
      {"driver", Kind::driver},
      {"kernel", Kind::kernel},
      {"gpu_memcpy", Kind::memcpy},
      {"memcpy", Kind::memcpy},
      {"gpu_memset", Kind::memset},
      {"memset", Kind::memset},
      {"cuda_sync", Kind::sync},
      {"gpu_user_annotation", Kind::gpu_annotation},
      {"cpu_instant_event", Kind::instant},
  };
  if (cat.size() > 32) return Kind::other;
  char lower[32];
  std::transform(cat.begin(), cat.end(), lower, ascii_lower);
  std::string_view key(lower, cat.size());
  for (const Entry& e : table)
    if (e.cat == key) return e.kind;
  return Kind::other;
}

bool is_graph_launch(std::string_view name) {
  for (std::string_view p : {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"})
    if (name.substr(0, p.size()) == p && (name.size() == p.size() || name[p.size()] == '_')) return true;
  return false;
}

Kind launched_work(std::string_view call) {
  auto has = [&](std::string_view part) { return call.find(part) != std::string_view::npos; };
  // Only CUDA / HIP API calls: a cpu_op or python frame is never asked, but a name is cheap to check.
  if (!(call.starts_with("cu") || call.starts_with("hip") || call.starts_with("__cuda"))) return Kind::other;
  if (is_graph_launch(call) || has("HostFunc")) return Kind::other;
  if (has("Launch") && has("Kernel")) return Kind::kernel;
  // Synchronous cudaMemcpy is not allowed while capturing; the async forms (and 2D / 3D / peer
  // variants, hipMemcpyWithStream) are the graph's copy nodes.
  if (has("Memcpy") && (has("Async") || has("WithStream"))) return Kind::memcpy;
  if (has("Memset") && has("Async")) return Kind::memset;
  return Kind::other;
}

int capture_boundary(std::string_view call) {
  if (!(call.starts_with("cu") || call.starts_with("hip"))) return 0;
  if (call.find("StreamBeginCapture") != std::string_view::npos) return 1;
  if (call.find("StreamEndCapture") != std::string_view::npos) return -1;
  return 0;
}

namespace {
// A CUDA / HIP runtime call's name without its API prefix and per-thread / version suffix
// (cudaStreamSynchronize_ptsz -> StreamSynchronize); empty for other names.
std::string_view runtime_call(std::string_view call) {
  std::string_view rest;
  if (call.starts_with("cuda"))
    rest = call.substr(4);
  else if (call.starts_with("hip"))
    rest = call.substr(3);
  else
    return {};
  if (size_t u = rest.find('_'); u != std::string_view::npos) rest = rest.substr(0, u);
  return rest;
}
}  // namespace

bool gpu_wait_call(std::string_view call) {
  const std::string_view rest = runtime_call(call);
  return rest == "DeviceSynchronize" || rest == "StreamSynchronize" || rest == "EventSynchronize";
}

bool blocking_host_call(std::string_view call) {
  if (gpu_wait_call(call)) return true;
  const std::string_view rest = runtime_call(call);
  return rest == "EventQuery" || rest == "Memcpy" || rest == "MemcpyAsync" || rest == "MemcpyWithStream";
}

bool runtime_lock_call(std::string_view call) {
  if (!call.starts_with("cuda")) return false;
  const std::string_view rest = runtime_call(call);
  return rest == "LaunchKernel" || rest == "MemcpyAsync" || rest == "HostAlloc";
}

}  // namespace tlsql
