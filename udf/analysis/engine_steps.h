// The iterations of a serving engine's loop (docs/inference.md, "Engine steps"), found in one pass
// over a schema's rows: what the engine_step views and the steps report read. The rules:
//   - a step is a step annotation (vLLM, SGLang, ATOM: serving_step, src/serving_step.h) where the trace
//     has one, else a worker's per-step frame, else one turn of the host loop of a thread that
//     launches CUDA / HIP graphs (from the end of one GPU wait to the end of the next); a step
//     inside another of the same source is part of that one;
//   - an annotation's or frame's step holds its subtree (members), and the GPU work in it is the
//     GPU work of that subtree (graph replays hang under their launch); a loop step holds its
//     thread's host events in its turn, and the GPU work their launch calls launched (launch_link);
//   - per step: the GPU work's busy time (the union of its intervals), span (first start to last
//     end), kernels, and the graph launches among its members;
//   - a trace with no serving step falls back to its ProfilerSteps (source profiler_step): the
//     GPU work and graph launches whose ProfilerStep is the step's (the `step` column: a GPU
//     event's is its launch's), as the mfu report counts them. Those rows are the report's only:
//     they have no members and are not in engine_step.
// The pass works on plain rows (StepRows below: the loaded store or a saved table, in
// engine_steps_sql.cpp), so that it is tested without a database (tests/unit/engine_steps_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/kind.h"
#include "src/serving_step.h"
#include "src/trace_model.h"

namespace tlsql {

// What a row's name says for the steps; the same for every row of that name.
struct StepName {
  std::optional<ServingStep> annotation, frame;  // serving_step of the name as an annotation / a python frame
  bool graph_launch = false;                     // is_graph_launch
  bool gpu_wait = false;                         // gpu_wait_call
  int64_t profiler_step = kNull;                 // N of "ProfilerStep#N"
  explicit StepName(std::string_view name = {});
};

// A host thread (within its trace): pid and tid as the trace wrote them, numbers and texts apart.
struct ThreadKey {
  int64_t pid = kNull, tid = kNull;
  uint8_t text = 0;  // 1: pid is a text's id, 2: tid is
  bool operator==(const ThreadKey&) const = default;
};

// The rows of one schema in uid order (row i), as the pass reads them: the loaded store
// (engine_steps_sql.cpp) or plain vectors (StepRows).
class StepInput {
 public:
  virtual ~StepInput() = default;
  virtual size_t size() const = 0;
  virtual int64_t uid(size_t i) const = 0;
  virtual int64_t parent(size_t i) const = 0;  // a row, -1 for none
  virtual int64_t trace(size_t i) const = 0;
  virtual Kind kind(size_t i) const = 0;
  virtual int64_t ts(size_t i) const = 0;    // kNull: none
  virtual int64_t end(size_t i) const = 0;   // kNull: none
  virtual int64_t step(size_t i) const = 0;  // the ProfilerStep number (event.step), kNull: none
  virtual ThreadKey thread(size_t i) const = 0;
  virtual const StepName& name(size_t i) const = 0;
  // The launch call (a row) of GPU work, from launch_link; -1 for none. Read only for loop steps.
  virtual int64_t launch(size_t i) const = 0;
};

// Plain vectors: a saved database's table is read into these, and the tests write them.
class StepRows : public StepInput {
 public:
  // Appends a row; `parent` is a row index (-1: none).
  void add(int64_t uid, int64_t parent, int64_t trace, Kind kind, std::string_view name, int64_t ts, int64_t end,
           ThreadKey thread = {}, int64_t step = kNull);
  // Links GPU row `gpu` to its launch call, row `runtime`.
  void link(size_t gpu, int64_t runtime) { launch_[gpu] = runtime; }
  void set_parent(size_t i, int64_t parent) { parent_[i] = parent; }

  size_t size() const override { return uid_.size(); }
  int64_t uid(size_t i) const override { return uid_[i]; }
  int64_t parent(size_t i) const override { return parent_[i]; }
  int64_t trace(size_t i) const override { return trace_[i]; }
  Kind kind(size_t i) const override { return kind_[i]; }
  int64_t ts(size_t i) const override { return ts_[i]; }
  int64_t end(size_t i) const override { return end_[i]; }
  int64_t step(size_t i) const override { return step_[i]; }
  ThreadKey thread(size_t i) const override { return thread_[i]; }
  const StepName& name(size_t i) const override { return names_[(size_t)name_[i]]; }
  int64_t launch(size_t i) const override { return launch_[i]; }

 private:
  std::vector<int64_t> uid_, parent_, trace_, ts_, end_, step_, launch_;
  std::vector<Kind> kind_;
  std::vector<ThreadKey> thread_;
  std::vector<int32_t> name_;
  std::vector<StepName> names_;
  std::unordered_map<std::string, int32_t> by_name_;
};

struct EngineStep {
  enum Source : uint8_t { annotation, frame, loop, profiler_step };
  int64_t trace = 0, iteration = 0, uid = 0, row = -1;
  int64_t ts = kNull, end = kNull;  // dur: end - ts (NULL when either is)
  Source source = annotation;
  std::optional<int64_t> tokens, prefill, decode;
  const char* phase = nullptr;  // prefill / decode / mixed, nullptr unknown
  // Its GPU work: busy ns (the union), first start and last end (kNull: none), kernels; and the
  // graph launch calls among its host events.
  int64_t gpu_busy = 0, gpu_start = kNull, gpu_end = kNull, kernels = 0, graph_replays = 0;
};
const char* source_name(EngineStep::Source s);

struct EngineSteps {
  std::vector<EngineStep> steps;  // by trace, then iteration; profiler_step rows only for traces without others
  std::vector<int32_t> member;    // per row: the (serving) step it is a member of, or -1
  std::vector<std::pair<uint32_t, int32_t>> gpu;  // (row, step): the GPU work of each serving step, by row
  std::string error;                              // non-empty: the parent links loop (the message)
};

// The host-loop numbering of one row (engine_loop_event): on a thread that launches graphs, each
// host event with a start, `k` the GPU waits on its thread that ended at or before its start, and
// `step` the row of the wait that ends its turn (the first such wait by uid), -1 after the
// thread's last wait.
struct LoopRow {
  uint32_t row;
  int64_t k;
  int64_t step;
  bool wait;
};

// The host events that take part in a host loop, and the calls that launch graphs or wait for
// the GPU (the name decides which: is_graph_launch, gpu_wait_call).
inline bool loop_host_kind(Kind k) { return is_host_node(k); }
inline bool launch_call_kind(Kind k) { return k == Kind::runtime || k == Kind::driver; }

// The loop rows of every thread that launches a graph, in the traces `wanted` accepts (by trace
// id; all when empty), by row.
std::vector<LoopRow> loop_rows(const StepInput& rows, const std::function<bool(int64_t)>& wanted = {});

// The engine steps of every trace in `rows`.
EngineSteps find_engine_steps(const StepInput& rows);

}  // namespace tlsql
