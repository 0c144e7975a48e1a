// Which operators replay runs: the one rule that the IR builder (replay_ir, .export-replay), the
// worker and tlsql-replay all apply. A trace or an IR bundle names the op to run, so it is input;
// replay runs only ops that compute on tensors it made itself, and refuses the rest with a reason.
#pragma once

#include <ATen/core/function_schema.h>

#include <string>
#include <vector>

namespace tlsql::replay {

// "" when replay may run the operator overload `s`; otherwise one line, "refused: OP ...why".
// Refused (docs/replay.md, "What replay refuses and why"):
// - ops outside the aten:: namespace (c10d:: collectives, profiler::, prim::, quantized:: ...);
// - TorchScript interpreter builtins, which have no tensor kernel (aten::save, aten::manual_seed);
// - ops that take a value that is not data: a Storage, a Stream, an object (a process group, packed
//   weights), an interpreter value (Any, a Future, a dict, a tuple);
// - ops with a str argument that names a file (aten::from_file's filename);
// - ops that neither take nor return a tensor (process settings and queries such as
//   aten::_cufft_set_plan_cache_max_size).
std::string refusal(const c10::FunctionSchema& s);

// The first overload's refusal when every overload of a name is refused (an op of another
// namespace, a builtin, aten::from_file), so such an op says so even when no overload takes the
// recorded arguments; "" when some overload may run.
std::string refusal_of_all(const std::vector<c10::FunctionSchema>& overloads);

}  // namespace tlsql::replay
