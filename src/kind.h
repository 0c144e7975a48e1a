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
// is waiting, not work: the critical path gives it no weight (udf/critical_path.h).
bool blocking_host_call(std::string_view call);

// A CUDA runtime call that holds the runtime's lock while it runs (cudaLaunchKernel,
// cudaMemcpyAsync, cudaHostAlloc: HTA's CUDA_RUNTIME_EVENTS; and their _ptsz / _ptds / versioned
// spellings, the same calls). Such calls on different threads run one at a time, so the critical
// path chains them across threads in the order they end (udf/critical_path.h). HIP's calls are
// not listed: HTA names CUDA's, and nothing we have read says HIP's runtime serializes them alike.
bool runtime_lock_call(std::string_view call);

// A host call that does nothing but wait for the GPU (cudaDeviceSynchronize,
// cudaStreamSynchronize, cudaEventSynchronize; hip* and _ptsz spellings): the serving loop's
// wait for each step's sampled tokens, which ends a host-loop step (engine_step, docs/inference.md).
bool gpu_wait_call(std::string_view call);

// The attention work of one serving step's requests, as the detailed step annotations record it
// (TraceLens's "sq/sk" aggregates): over the context (prefill) requests, the sums of each request's
// query length sq, key length sk (cached + new tokens), sq·sq and sq·sk; the same over the
// generation (decode) requests. Attention models read them (udf/perf_model.cpp): an attention op
// records its heads and head sizes, not its requests' lengths.
struct StepLengths {
  int64_t c_sq = 0, c_sk = 0, c_sqsq = 0, c_sqsk = 0;
  int64_t g_sq = 0, g_sk = 0, g_sqsq = 0, g_sqsk = 0;
  bool operator==(const StepLengths&) const = default;
};

// One iteration of a serving engine's loop, read from an event's name (docs/inference.md). Step
// annotations (Kind::annotation), each with or without the sq/sk aggregates:
//   - vLLM: `execute_<tokens>_context_<P>(sq..sk..sqsq..sqsk..)_generation_<D>(...)`, or the
//     native `execute_context_<P>(<prefill tokens>)_generation_<D>(<decode tokens>)`;
//   - SGLang: `step[EXTEND|DECODE|MIXED bs=<requests> toks=<tokens> c=<P> g=<D> c_sq=.. ...]`;
//   - ATOM: `prefill[bs=.. tok=.. sk=.. sqsq=.. sqsk=..]`, `decode[bs=.. tok=.. p=.. d=.. ...]`;
// else a serving worker's per-step python frame (Kind::python), which says nothing of the batch:
// vLLM's `...worker.py(N): execute_model` (V0: `worker_base.py`), SGLang's
// `...tp_worker.py(N): forward_batch_generation`.
struct ServingStep {
  bool annotation = false;                         // from the annotation (else a frame)
  std::optional<int64_t> tokens, prefill, decode;  // tokens scheduled; prefill / decode requests
  const char* mode = nullptr;                      // the phase the name states (SGLang, ATOM), if any
  std::optional<StepLengths> lengths;              // the detailed annotations' aggregates
  // "prefill" (prefill requests only), "decode" (decode only), "mixed", or nullptr (unknown): from
  // the request counts when the name gives both, else the phase it states.
  const char* phase() const;
};
std::optional<ServingStep> serving_step(Kind kind, std::string_view name);

}  // namespace tlsql
