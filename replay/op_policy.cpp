#include "replay/op_policy.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cstring>

namespace tlsql::replay {

namespace {

// Argument types whose values are data the op computes with: tensors (replay makes them itself,
// so writing into them, out= included, touches nothing else), numbers, flags, enums (ScalarType,
// Layout, MemoryFormat, QScheme), text that picks a mode or names a dimension (gelu's approximate,
// div's rounding_mode, einsum's equation, scatter_reduce's reduce), a Device (the worker
// substitutes its own, so a recorded "cuda:7" never reaches LibTorch) and a Generator (always
// None: sampling ops draw from the worker's own default generator). Named by kind so that kinds
// a later LibTorch adds (SymFloat, SymBool) need no version test; anything else names something
// outside the op's tensors: a Storage (memory of another tensor or of a file), a Stream (a device
// queue), an object (a c10d process group, packed weights, a profiler handle) or a TorchScript
// interpreter value (Any, a type variable, a Future, a dict, a tuple).
constexpr const char* kDataKinds[] = {"TensorType",     "IntType",    "SymIntType",       "SymFloatType",
                                      "SymBoolType",    "FloatType",  "ComplexType",      "BoolType",
                                      "NumberType",     "StringType", "DeviceObjType",    "GeneratorType",
                                      "ScalarTypeType", "LayoutType", "MemoryFormatType", "QSchemeType"};

// The type inside optionals and lists (Tensor?[] -> Tensor). Schema types come from LibTorch's
// registry, not from input; a loop all the same.
c10::TypePtr element(c10::TypePtr t) {
  for (;;) {
    if (auto o = t->cast<c10::OptionalType>())
      t = o->getElementType();
    else if (auto l = t->cast<c10::ListType>())
      t = l->getElementType();
    else
      return t;
  }
}

bool is_data(const c10::TypePtr& t) {
  const char* kind = c10::typeKindToString(t->kind());
  return std::any_of(std::begin(kDataKinds), std::end(kDataKinds),
                     [&](const char* k) { return std::strcmp(k, kind) == 0; });
}

// A str argument that names a file: aten::from_file's `filename` (with shared=True the op creates,
// grows and writes it). Every other str argument of an aten kernel in LibTorch 1.13 is a mode or a
// dimension name (docs/replay.md); the test is by name so that a later op like from_file is caught too.
bool names_a_file(const c10::Argument& a) {
  if (element(a.type())->kind() != c10::TypeKind::StringType) return false;
  std::string n = a.name();
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return (char)std::tolower(c); });
  return n.find("file") != std::string::npos || n.find("path") != std::string::npos;
}

std::string op_text(const c10::FunctionSchema& s) {
  return s.overload_name().empty() ? s.name() : s.name() + "." + s.overload_name();
}

// The part of the rule that holds for every overload of a name.
std::string refusal_by_name(const c10::FunctionSchema& s) {
  const std::string& name = s.name();
  if (name.rfind("aten::", 0) != 0)
    return "refused: replay runs only aten:: operators, which compute on tensors, and " + name +
           " is not one (c10d:: ops are collectives, profiler:: ops drive the profiler, prim:: ops "
           "belong to the TorchScript interpreter)";
  // Interpreter builtins (aten::save, aten::manual_seed, aten::warn, aten::wait) are registered with
  // the TorchScript operator registry only; tensor kernels are in the dispatcher.
  if (!c10::Dispatcher::singleton().findSchema({s.name(), s.overload_name()}))
    return "refused: " + op_text(s) + " is a TorchScript interpreter builtin, not a tensor kernel";
  return "";
}

}  // namespace

std::string refusal(const c10::FunctionSchema& s) {
  if (std::string why = refusal_by_name(s); !why.empty()) return why;
  bool tensor = false;
  for (const auto& a : s.arguments()) {
    c10::TypePtr t = element(a.type());
    if (!is_data(t))
      return "refused: " + op_text(s) + " takes '" + a.name() + "' (" + t->annotation_str() +
             "), which is not data but something outside the op's tensors";
    if (names_a_file(a))
      return "refused: " + op_text(s) + " takes '" + a.name() + "', the name of a file it would open";
    tensor = tensor || t->kind() == c10::TypeKind::TensorType;
  }
  for (const auto& r : s.returns()) tensor = tensor || element(r.type())->kind() == c10::TypeKind::TensorType;
  if (!tensor)
    return "refused: " + op_text(s) +
           " neither takes nor returns a tensor: a process setting or query, not a computation on tensors";
  return "";
}

std::string refusal_of_all(const std::vector<c10::FunctionSchema>& overloads) {
  std::string first;
  for (const auto& s : overloads) {
    std::string why = refusal(s);
    if (why.empty()) return "";
    if (first.empty()) first = why;
  }
  return first;
}

}  // namespace tlsql::replay
