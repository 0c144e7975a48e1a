#pragma once
// The text of torch.autograd.profiler.emit_nvtx()'s ranges (PyTorch's getNvtxStr), which an NVTX
// range (Nsight Systems) or a roctx range (rocprofv3's marker records) carries:
//   "aten::mul, seq = 12, op_id = 34, sizes = [[2, 3], []], input_op_ids = [(1,0)]"   current
//   "aten::add, seq = 12, sizes = [[2, 3], [3]]", "aten::empty"                      before op ids
//   "MulBackward0, stashed seq = 13"                 a backward Function's apply(), before op ids
// One rule for both readers: which texts are op ranges, the name, seq, op id and shapes in them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "src/readers/event_records.h"
#include "src/trace_model.h"

namespace tlsql::emit_nvtx {

struct OpRange {
  std::string_view name, sizes;
  int64_t seq = kNull, op_id = kNull;
  bool stashed = false;  // the legacy "stashed seq = N" of a backward Function's apply()
  // A record_function range (its name is no op's: it has a space or a comma, and it is not the
  // autograd engine's): emit_nvtx writes it as an op's, Kineto files it as a user annotation.
  bool user = false;
};

// The op range a text is, or nullopt for a plain range (an annotation with its whole text).
std::optional<OpRange> op_range(std::string_view text);

// An autograd engine's range: a backward Function ("MulBackward0", a custom Function's
// "MyReLUBackward") or the engine's wrapper around one ("autograd::engine::evaluate_function: ...").
bool backward_name(std::string_view name);

// The forward thread of a backward op (Kineto's "Fwd thread id"): that of the first other op range
// with the same seq in the same process. Ranges in the order they started.
class ForwardThreads {
 public:
  // kNull for a range with no seq or a forward one; for a backward one its forward's thread (1 when
  // unknown or 0: still marked backward).
  int64_t fwd_tid(const OpRange& op, int64_t pid, int64_t tid);

 private:
  struct Hash {
    size_t operator()(const std::pair<int64_t, int64_t>& k) const {
      return std::hash<int64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ (uint64_t)k.second);
    }
  };
  // (pid, seq) -> thread: one entry a forward op, looked up by each backward one.
  std::unordered_map<std::pair<int64_t, int64_t>, int64_t, Hash> forward_;
};

// An op range's args: op_id, "Sequence number", "Input Dims" (sizes when JSON, else text "sizes"),
// "Fwd thread id", and the range's whole text as "nvtx".
void write_args(event_records::Writer& out, const OpRange& op, int64_t fwd_tid, std::string_view text);

}  // namespace tlsql::emit_nvtx
