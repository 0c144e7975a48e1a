// How the profiler records an op's arguments (args "Input Dims", "Concrete Inputs"): the one
// reader of those formats, for the perf models (udf/perf/perf_model.cpp) and the replay worker
// (replay/ir.cpp) alike. The lowest layer: it includes nothing of tlsql's.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace tlsql::args {

using Shape = std::vector<int64_t>;

// The most of an event's args text parsed whole into a JSON tree (the perf models' members,
// kernel_flop, Concrete Inputs): an op's args are a few KB (a cat of 1,000 tensors: tens of KB). A
// tree takes ~30 times its text, and nlohmann's destructor allocates a stack as long as its widest
// container while noexcept: a hostile event's 12 MB "Input Dims", unwound by a bad_alloc under a
// memory cap, aborted the process. Longer text parses as not JSON (the op has no model).
constexpr size_t kMaxParsedArgs = 1u << 20;
inline nlohmann::json parse_bounded(std::string_view text) {
  if (text.size() > kMaxParsedArgs) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
}

// "Input Dims": per argument its shape ([] for a scalar, an absent tensor or a 0-dim tensor),
// and for a TensorList the shape of each tensor (`lists`, empty for other arguments).
// A dimension that is not a non-negative integer (-4, 2.5, "x": a malformed or hostile trace) makes
// `valid` false: no shape of the op is known then (a model must not count with it).
struct InputDims {
  std::vector<Shape> shape;
  std::vector<std::vector<Shape>> lists;
  bool valid = true;
};
InputDims input_dims(const nlohmann::json& dims);

// One "Concrete Inputs" entry, a Python repr, as JSON: "2" 2, "0." 0.0, "1e-05", "[1, 1]",
// "[True, False]" [true, false], "None" null, "True" true; anything else (a string argument,
// "inf") as that string; "" (not recorded) as null.
nlohmann::json concrete_value(std::string_view text);
// Its numbers: a scalar's, or a list's elements ("[2., 2.]" -> {2, 2}); {} for None / text.
std::vector<double> numbers(std::string_view text);
// Its integers: numbers() truncated (beyond int64: saturated; NaN: 0).
std::vector<int64_t> ints(std::string_view text);
// Its booleans: "True" -> {true}, "[True, False]" -> {true, false}; {} otherwise.
std::vector<bool> bools(std::string_view text);
bool truthy(std::string_view text);  // "True", "true" or a non-zero number

}  // namespace tlsql::args
