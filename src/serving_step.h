// Serving-engine steps read from an event's name: the one parser of vLLM / SGLang / ATOM step
// annotations and serving workers' per-step frames (docs/inference.md). The tree builder, the
// graph-replay matcher, the engine-steps pass and the attention models read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "src/kind.h"

namespace tlsql {

// The attention work of one serving step's requests, as the detailed step annotations record it
// (TraceLens's "sq/sk" aggregates): over the context (prefill) requests, the sums of each request's
// query length sq, key length sk (cached + new tokens), sq·sq and sq·sk; the same over the
// generation (decode) requests. Attention models read them (udf/perf/perf_model.cpp): an attention op
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
