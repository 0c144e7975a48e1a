#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "src/trace_model.h"

namespace tlsql {

// The one place that maps a trace's (phase, category) to tlsql's `kind`, so 2021-era names
// (Operator, Runtime, Kernel, ...), today's (cpu_op, cuda_runtime, kernel, gpu_memcpy, ...) and
// ROCm traces (hip* calls under cuda_runtime) query the same way.
Kind normalize_kind(char ph, std::string_view cat);

// kind_name's inverse: Kind::other for a name that is not a kind.
Kind kind_from_name(std::string_view name);

// GPU work: what gpu_time() sums and launched() lists (kernels, memcpys, memsets).
inline bool is_gpu_work(Kind k) { return k == Kind::kernel || k == Kind::memcpy || k == Kind::memset; }

// Events that run on a GPU stream and hang under their launching runtime call.
inline bool is_gpu_side(Kind k) {
  return k == Kind::kernel || k == Kind::memcpy || k == Kind::memset || k == Kind::gpu_annotation || k == Kind::sync;
}
// Events that take part in the host call tree built from time containment.
inline bool is_host_node(Kind k) {
  return k == Kind::cpu_op || k == Kind::python || k == Kind::annotation || k == Kind::runtime || k == Kind::driver ||
         k == Kind::instant || k == Kind::other;
}

// Whether a runtime / driver call launches a CUDA or HIP graph (cudaGraphLaunch, cuGraphLaunch,
// hipGraphLaunch, and their per-thread-stream spellings such as cudaGraphLaunch_ptsz): the GPU
// events it launches replay kernels that ops launched when the graph was captured, ops that are
// not its ancestors (docs/inference.md).
bool is_graph_launch(std::string_view name);

// The GPU work a runtime / driver call puts on a stream: Kind::kernel for kernel launches
// (cudaLaunchKernel[ExC], cuLaunchKernel[Ex], hipLaunchKernel, hipModuleLaunchKernel,
// hipExtModuleLaunchKernel, cooperative launches, ...), Kind::memcpy / Kind::memset for
// asynchronous copies and fills, Kind::other for anything else (graph launches included). Used
// where no GPU event says it, as inside a graph capture: there each such call adds one node.
Kind launched_work(std::string_view call);

// +1 for a call that starts capturing a stream into a graph (cudaStreamBeginCapture[ToGraph],
// cuStreamBeginCapture, hipStreamBeginCapture, ...), -1 for one that ends it, 0 otherwise.
int capture_boundary(std::string_view call);

// A host call that waits for the GPU (cudaDeviceSynchronize, cudaStreamSynchronize,
// cudaEventSynchronize, cudaEventQuery, cudaMemcpy, cudaMemcpyAsync: HTA's list, as an async copy
// may synchronize; and their hip* spellings, cudaMemcpy*'s _ptds / WithStream variants). Its time
// is waiting, not work: the critical path gives it no weight (udf/analysis/critical_path.h).
bool blocking_host_call(std::string_view call);

// A CUDA runtime call that holds the runtime's lock while it runs (cudaLaunchKernel,
// cudaMemcpyAsync, cudaHostAlloc: HTA's CUDA_RUNTIME_EVENTS; and their _ptsz / _ptds / versioned
// spellings, the same calls). Such calls on different threads run one at a time, so the critical
// path chains them across threads in the order they end (udf/analysis/critical_path.h). HIP's calls are
// not listed: HTA names CUDA's, and nothing we have read says HIP's runtime serializes them alike.
bool runtime_lock_call(std::string_view call);

// A host call that does nothing but wait for the GPU (cudaDeviceSynchronize,
// cudaStreamSynchronize, cudaEventSynchronize; hip* and _ptsz spellings): the serving loop's
// wait for each step's sampled tokens, which ends a host-loop step (engine_step, docs/inference.md).
bool gpu_wait_call(std::string_view call);

}  // namespace tlsql
