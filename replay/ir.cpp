#include "replay/ir.h"

#include <torch/csrc/jit/runtime/operator.h>
#include <torch/version.h>

#include <sstream>

#include "args/op_args.h"
#include "replay/op_policy.h"

namespace tlsql::replay {

using nlohmann::json;

namespace {

// Some profilers record an aten op without its namespace ("detach").
std::string qualified(const std::string& recorded) {
  return recorded.find("::") == std::string::npos ? "aten::" + recorded : recorded;
}

std::vector<c10::FunctionSchema> overloads(const std::string& recorded) {
  std::vector<c10::FunctionSchema> out;
  std::string name = qualified(recorded);
  if (name.find(' ') != std::string::npos || name.find("::") == 0) return out;
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name))) out.push_back(op->schema());
  return out;
}

bool is_tensor_dtype(const std::string& t) {
  return !t.empty() && t != "Scalar" && t != "ScalarList" && t != "TensorList" && t != "GenericList";
}

// Recorded JSON member `key` as an array, or an empty array.
json member(const json& args, const char* key) {
  auto it = args.find(key);
  return it != args.end() && it->is_array() ? *it : json::array();
}

std::string text_at(const json& a, size_t i) {
  return i < a.size() && a[i].is_string() ? a[i].get<std::string>() : std::string();
}

// The base of an optional type and whether it was optional.
c10::TypePtr base_type(const c10::TypePtr& t, bool& optional) {
  optional = false;
  if (auto o = t->cast<c10::OptionalType>()) {
    optional = true;
    return o->getElementType();
  }
  return t;
}

bool is_list_of(const c10::TypePtr& t, c10::TypeKind elem) {
  auto l = t->cast<c10::ListType>();
  if (!l) return false;
  bool opt;
  return base_type(l->getElementType(), opt)->kind() == elem;
}

// Can a value recorded as `recorded` be passed for `a`?
bool compatible(const std::string& recorded, const c10::Argument& a) {
  bool optional;
  c10::TypePtr t = base_type(a.type(), optional);
  c10::TypeKind k = t->kind();
  if (is_tensor_dtype(recorded)) return k == c10::TypeKind::TensorType;
  if (recorded == "TensorList") return is_list_of(t, c10::TypeKind::TensorType);
  if (recorded == "ScalarList") return t->cast<c10::ListType>() && !is_list_of(t, c10::TypeKind::TensorType);
  if (recorded == "Scalar")
    return k == c10::TypeKind::NumberType || k == c10::TypeKind::IntType || k == c10::TypeKind::SymIntType ||
           k == c10::TypeKind::FloatType || k == c10::TypeKind::BoolType || k == c10::TypeKind::ComplexType ||
           k == c10::TypeKind::StringType || k == c10::TypeKind::DeviceObjType;  // ScalarType etc. are ints
  // Not recorded (None, or a type the profiler does not capture): fine if it may be None or has a default.
  return optional || a.default_value().has_value();
}

json ivalue_json(const c10::IValue& v) {
  if (v.isNone()) return nullptr;
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt();
  if (v.isDouble()) return v.toDouble();
  if (v.isString()) return v.toStringRef();
  if (v.isIntList()) return v.toIntVector();
  if (v.isDoubleList()) return v.toDoubleVector();
  if (v.isBoolList()) {
    json out = json::array();
    for (bool b : v.toBoolList()) out.push_back(b);
    return out;
  }
  std::ostringstream o;
  o << v;
  return o.str();
}

// The value of a non-tensor argument from its Concrete Inputs text (or its default).
std::optional<json> scalar_value(const c10::Argument& a, const std::string& concrete, std::string& why) {
  bool optional;
  c10::TypePtr t = base_type(a.type(), optional);
  c10::TypeKind k = t->kind();
  if (concrete.empty()) {
    if (a.default_value()) return ivalue_json(*a.default_value());
    if (optional) return json(nullptr);
    why = "no recorded value for argument '" + a.name() + "' (" + arg_type_text(a) + ")";
    return std::nullopt;
  }
  if (concrete == "True" || concrete == "False") return json(concrete == "True");
  if (concrete == "None") return json(nullptr);
  if (k == c10::TypeKind::StringType) return json(concrete);
  // (Concrete Inputs are Python reprs: "0.", "1e-05", "[1., 2.]", "[True, False]": args/op_args.h.)
  const json j = args::concrete_value(concrete);
  if (j.is_string()) {
    why = "cannot read the recorded value '" + concrete + "' of argument '" + a.name() + "'";
    return std::nullopt;
  }
  if (j.is_number()) {
    if (k == c10::TypeKind::FloatType || k == c10::TypeKind::NumberType) return json(j.get<double>());
    if (k == c10::TypeKind::BoolType) return json(j.get<double>() != 0);
  }
  return j;
}

// TraceLens's rule (EventReplay._get_event_replay_IR): a tensor the op overwrites whole needs no
// initial values, "init": null; that is every tensor of aten::fill_ and every tensor of aten::copy_
// but src. Every other tensor is "normal", an in-place op's self included: masked_fill_, resize_,
// add_ and index_put_ read it. (TraceLens compares the recorded name; tlsql its aten:: spelling, so
// a "fill_" recorded without the namespace is the same op.)
json tensor_init(const std::string& op, const std::string& arg) {
  const std::string name = qualified(op);
  const bool overwritten = name == "aten::fill_" || (name == "aten::copy_" && arg != "src");
  return overwritten ? json(nullptr) : json("normal");
}

json contiguous_strides(const json& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(shape[i].get<int64_t>(), 1);
  }
  return s;
}

}  // namespace

std::string arg_type_text(const c10::Argument& a) {
  std::ostringstream o;
  o << a;  // "<type> <name>[=<default>]"
  std::string s = o.str(), key = " " + a.name();
  for (size_t p = s.rfind(key); p != std::string::npos; p = p ? s.rfind(key, p - 1) : std::string::npos) {
    size_t end = p + key.size();
    if (end == s.size() || s[end] == '=') return s.substr(0, p);
    if (p == 0) break;
  }
  return a.type()->annotation_str();
}

std::optional<json> build_ir(const std::string& name, const json& args, std::string& why) {
  json dims = member(args, "Input Dims"), types = member(args, "Input type"), strides = member(args, "Input Strides"),
       concrete = member(args, "Concrete Inputs");
  if (types.empty() && dims.empty()) {
    why = "the trace has no Input Dims / Input type for this op (record_shapes was off)";
    return std::nullopt;
  }
  auto schemas = overloads(name);
  if (schemas.empty()) {
    why = "LibTorch " TORCH_VERSION " has no operator " + name;
    return std::nullopt;
  }
  if (why = refusal_of_all(schemas); !why.empty()) return std::nullopt;
  size_t n = types.size();
  const c10::FunctionSchema* match = nullptr;
  for (const auto& s : schemas) {
    if (s.arguments().size() != n || s.is_vararg()) continue;
    bool ok = true;
    for (size_t i = 0; i < n && ok; ++i) ok = compatible(text_at(types, i), s.arguments()[i]);
    if (ok) {
      match = &s;
      break;
    }
  }
  if (!match) {
    std::ostringstream o;
    o << "no overload of " << name << " in LibTorch " TORCH_VERSION " takes the recorded " << n << " arguments "
      << types.dump() << "; it has:";
    for (const auto& s : schemas) o << " " << s;
    why = o.str();
    return std::nullopt;
  }
  // The worker refuses it too; saying so here keeps a refused op out of IR files.
  if (why = refusal(*match); !why.empty()) return std::nullopt;
  json pos = json::array(), kw = json::array();
  for (size_t i = 0; i < n; ++i) {
    const c10::Argument& a = match->arguments()[i];
    std::string t = text_at(types, i);
    json value;
    if (is_tensor_dtype(t)) {
      json shape = i < dims.size() && dims[i].is_array() ? dims[i] : json::array();
      json st = i < strides.size() && strides[i].is_array() && strides[i].size() == shape.size()
                    ? strides[i]
                    : contiguous_strides(shape);
      value = {{"shape", shape}, {"dtype", t}, {"strides", st}, {"init", tensor_init(name, a.name())}};
    } else if (t == "TensorList") {
      why = "argument '" + a.name() + "' is a tensor list, whose shapes the trace does not record per element";
      if (!(i < dims.size() && dims[i].is_array())) return std::nullopt;
      // Recent profilers record a list's element shapes as a nested array.
      value = json::array();
      for (const auto& d : dims[i]) {
        if (!d.is_array()) return std::nullopt;
        value.push_back({{"shape", d},
                         {"dtype", "float"},
                         {"strides", contiguous_strides(d)},
                         {"init", tensor_init(name, a.name())}});
      }
      why.clear();
    } else {
      auto v = scalar_value(a, text_at(concrete, i), why);
      if (!v) return std::nullopt;
      value = *v;
    }
    json arg = {{"arg_name", a.name()}, {"arg_type", arg_type_text(a)}, {"value", value}};
    (a.kwarg_only() ? kw : pos).push_back(arg);
  }
  return json{{"op_name", name}, {"replay_ir", {{"list_pos_args", pos}, {"list_kwargs", kw}}}};
}

namespace {
std::string fmt_part(const char* part, const std::string& what) { return std::string("\"") + part + "\" " + what; }
bool int_list(const json& j) {
  if (!j.is_array()) return false;
  for (const auto& x : j)
    if (!x.is_number_integer()) return false;
  return true;
}
// A tensor spec, or a value that holds no tensor spec (numbers, lists of numbers, ...).
std::string check_value(const json& v) {
  auto tensor = [](const json& t) -> std::string {
    if (!t.is_object() || !t.contains("shape")) return "";  // not a tensor spec
    if (!int_list(t["shape"])) return "a tensor \"shape\" that is not a list of integers";
    if (!t.value("dtype", json()).is_string()) return "a tensor without a \"dtype\" string";
    if (t.contains("strides") && (!int_list(t["strides"]) || t["strides"].size() != t["shape"].size()))
      return "tensor \"strides\" that are not one integer per dimension";
    return "";
  };
  if (v.is_array()) {
    for (const auto& e : v) {
      if (e.is_array() || (e.is_object() && !e.contains("shape"))) return "a value nested deeper than a list";
      if (std::string w = tensor(e); !w.empty()) return w;
    }
    return "";
  }
  if (v.is_object() && !v.contains("shape")) return "an object value that is not a tensor spec";
  return tensor(v);
}
}  // namespace

std::string check_ir(const json& ir) {
  if (!ir.is_object()) return "an entry that is not an object";
  if (!ir.value("op_name", json()).is_string()) return "\"op_name\" is not a string";
  if (!ir.contains("replay_ir") || !ir["replay_ir"].is_object()) return "\"replay_ir\" is not an object";
  const json& r = ir["replay_ir"];
  for (const char* part : {"list_pos_args", "list_kwargs"}) {
    if (!r.contains(part)) continue;
    if (!r[part].is_array()) return fmt_part(part, "is not a list");
    for (const auto& a : r[part]) {
      if (!a.is_object() || !a.contains("value")) return fmt_part(part, "holds an argument without a \"value\"");
      if (a.contains("arg_name") && !a["arg_name"].is_string()) return fmt_part(part, "holds a non-string arg_name");
      if (a.contains("arg_type") && !a["arg_type"].is_string()) return fmt_part(part, "holds a non-string arg_type");
      if (std::string w = check_value(a["value"]); !w.empty()) return fmt_part(part, "holds " + w);
    }
  }
  return "";
}

std::optional<c10::FunctionSchema> schema_for_ir(const json& ir, std::string& why) {
  std::string name = ir.value("op_name", "");
  std::vector<std::string> names;
  const json& r = ir.contains("replay_ir") ? ir["replay_ir"] : json::object();
  for (const char* part : {"list_pos_args", "list_kwargs"})
    if (r.contains(part))
      for (const auto& a : r[part]) names.push_back(a.value("arg_name", ""));
  auto schemas = overloads(name);
  if (schemas.empty()) {
    why = "LibTorch " TORCH_VERSION " has no operator " + name;
    return std::nullopt;
  }
  if (why = refusal_of_all(schemas); !why.empty()) return std::nullopt;
  for (const auto& s : schemas) {
    if (s.is_vararg()) continue;
    // Every IR argument must be a schema argument; the rest must have defaults (or be optional).
    size_t matched = 0;
    bool ok = true;
    for (const auto& a : s.arguments()) {
      bool in = std::find(names.begin(), names.end(), a.name()) != names.end();
      if (in) ++matched;
      bool opt;
      base_type(a.type(), opt);
      if (!in && !a.default_value() && !opt) ok = false;
    }
    if (ok && matched == names.size()) return s;
  }
  why = "no overload of " + name + " in LibTorch " TORCH_VERSION " has the IR's arguments";
  return std::nullopt;
}

}  // namespace tlsql::replay
