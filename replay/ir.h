// Replay IR (TraceLens EventReplay's JSON format) built from a traced op and LibTorch's operator
// registry, and the registry lookups the runner shares. LibTorch headers stay inside replay/.
#pragma once

#include <ATen/core/function_schema.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tlsql::replay {

// {"op_name", "replay_ir": {"list_pos_args": [...], "list_kwargs": [...]}} for an op recorded with
// `args` (the event's args: "Input Dims", "Input type", "Input Strides", "Concrete Inputs").
// nullopt with `why` set when no overload of `name` matches what was recorded.
std::optional<nlohmann::json> build_ir(const std::string& name, const nlohmann::json& args, std::string& why);

// The overload an IR was built for: the one whose argument names are the IR's, in order.
// What is wrong with one IR entry ({op_name, replay_ir: {list_pos_args, list_kwargs}}, each
// argument an object with a "value"; tensors {shape, dtype[, strides]} with integer lists), or ""
// when replay can read it. Checked before anything reads the entry, so a hand-edited or hostile
// file gets a message, never an exception or a read of a missing member.
std::string check_ir(const nlohmann::json& ir);

std::optional<c10::FunctionSchema> schema_for_ir(const nlohmann::json& ir, std::string& why);

// The schema's argument type as TraceLens writes it ("Tensor(a!)", "int[2]", "SymInt[]", "Scalar?").
std::string arg_type_text(const c10::Argument& a);

}  // namespace tlsql::replay
