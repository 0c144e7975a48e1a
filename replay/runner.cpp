#include "replay/runner.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "replay/ir.h"
#include "replay/op_policy.h"

#if __has_include(<ATen/cuda/CUDAEvent.h>) && __has_include(<cuda_runtime_api.h>)
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#define TLSQL_CUDA_EVENTS 1
#endif

namespace tlsql::replay {

using nlohmann::json;

namespace {

std::optional<at::ScalarType> scalar_type(const std::string& t) {
  static const std::pair<const char*, at::ScalarType> names[] = {{"float", at::kFloat},
                                                                 {"double", at::kDouble},
                                                                 {"c10::Half", at::kHalf},
                                                                 {"c10::BFloat16", at::kBFloat16},
                                                                 {"long int", at::kLong},
                                                                 {"long", at::kLong},
                                                                 {"int", at::kInt},
                                                                 {"short int", at::kShort},
                                                                 {"short", at::kShort},
                                                                 {"signed char", at::kChar},
                                                                 {"unsigned char", at::kByte},
                                                                 {"bool", at::kBool},
                                                                 {"c10::complex<float>", at::kComplexFloat},
                                                                 {"c10::complex<double>", at::kComplexDouble},
                                                                 {"c10::complex<c10::Half>", at::kComplexHalf}};
  for (const auto& [n, st] : names)
    if (t == n) return st;
  return std::nullopt;
}

std::vector<int64_t> ints(const json& j) {
  std::vector<int64_t> v;
  for (const auto& x : j) v.push_back(x.get<int64_t>());
  return v;
}

struct Builder {
  at::Device device;
  int64_t index_bound = 2;  // integer tensors get values in [0, index_bound)
  std::string error;

  std::optional<at::Tensor> tensor(const json& spec) {
    auto st = scalar_type(spec.value("dtype", ""));
    if (!st) {
      error = "dtype " + spec.value("dtype", "?") + " is not supported by LibTorch " + std::string(TORCH_VERSION);
      return std::nullopt;
    }
    auto options = at::TensorOptions().dtype(*st).device(device);
    auto t = spec.contains("strides") ? at::empty_strided(ints(spec.at("shape")), ints(spec.at("strides")), options)
                                      : at::empty(ints(spec.at("shape")), options);  // contiguous
    if (t.numel() == 0) return t;
    if (at::isFloatingType(*st) || at::isComplexType(*st))
      t.normal_();
    else if (*st == at::kBool)
      t.random_(0, 2);
    else
      t.random_(0, index_bound);
    return t;
  }

  // The IValue for argument `a` from its IR value.
  std::optional<c10::IValue> value(const c10::Argument& a, const json& v) {
    c10::TypePtr t = a.type();
    if (auto o = t->cast<c10::OptionalType>()) {
      if (v.is_null()) return c10::IValue();
      t = o->getElementType();
    }
    switch (t->kind()) {
      case c10::TypeKind::TensorType: {
        if (!v.is_object()) break;
        auto x = tensor(v);
        if (!x) return std::nullopt;
        return c10::IValue(*x);
      }
      case c10::TypeKind::ListType: {
        auto elem = t->castRaw<c10::ListType>()->getElementType();
        if (auto o = elem->cast<c10::OptionalType>()) elem = o->getElementType();
        if (!v.is_array()) break;
        if (elem->kind() == c10::TypeKind::TensorType) {
          c10::List<at::Tensor> l;
          for (const auto& e : v) {
            auto x = tensor(e);
            if (!x) return std::nullopt;
            l.push_back(*x);
          }
          return c10::IValue(l);
        }
        if (elem->kind() == c10::TypeKind::FloatType) {
          std::vector<double> d;
          for (const auto& e : v) d.push_back(e.get<double>());
          return c10::IValue(d);
        }
        if (elem->kind() == c10::TypeKind::BoolType) {
          c10::List<bool> l;
          for (const auto& e : v) l.push_back(e.get<bool>());
          return c10::IValue(l);
        }
        return c10::IValue(ints(v));
      }
      case c10::TypeKind::NumberType:
        if (v.is_boolean()) return c10::IValue(at::Scalar(v.get<bool>()));
        if (v.is_number_integer()) return c10::IValue(at::Scalar(v.get<int64_t>()));
        if (v.is_number()) return c10::IValue(at::Scalar(v.get<double>()));
        break;
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType:
        if (v.is_number()) return c10::IValue(v.get<int64_t>());
        if (v.is_boolean()) return c10::IValue((int64_t)v.get<bool>());
        break;
      case c10::TypeKind::FloatType:
        if (v.is_number()) return c10::IValue(v.get<double>());
        break;
      case c10::TypeKind::BoolType:
        if (v.is_boolean()) return c10::IValue(v.get<bool>());
        if (v.is_number()) return c10::IValue(v.get<double>() != 0);
        break;
      case c10::TypeKind::StringType:
        if (v.is_string()) return c10::IValue(v.get<std::string>());
        break;
      case c10::TypeKind::DeviceObjType: return c10::IValue(device);
      default: break;
    }
    error = "cannot make a " + a.type()->annotation_str() + " for argument '" + a.name() + "' from " + v.dump();
    return std::nullopt;
  }
};

// Integer tensors (indices) must stay inside the smallest dimension of the floating tensors.
int64_t index_bound(const json& ir) {
  int64_t bound = INT64_MAX;
  for (const char* part : {"list_pos_args", "list_kwargs"})
    for (const auto& a : ir.at("replay_ir").value(part, json::array())) {
      const json& v = a.at("value");
      if (!v.is_object() || !v.contains("shape")) continue;
      auto st = scalar_type(v.value("dtype", ""));
      if (!st || !at::isFloatingType(*st)) continue;
      for (const auto& d : v.at("shape"))
        if (d.get<int64_t>() > 0) bound = std::min(bound, d.get<int64_t>());
    }
  return bound == INT64_MAX ? 2 : bound;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

RunResult run_ir(const json& ir, const RunOptions& opt) {
  RunResult r;
  if (std::string bad = check_ir(ir); !bad.empty()) {
    r.error = bad;
    return r;
  }
  try {
    std::string why;
    auto schema = schema_for_ir(ir, why);
    if (!schema) {
      r.error = why;
      return r;
    }
    // The last line: an IR file or a worker request names the op, so the rule is applied here,
    // before any tensor is made or anything is dispatched, whatever built the IR.
    if (r.error = refusal(*schema); !r.error.empty()) return r;
    bool cuda = opt.device == "cuda" || (opt.device.empty() && default_device() == "cuda");
    if (cuda && !torch::cuda::is_available()) {
      r.error = "this LibTorch has no CUDA device (build tlsql against a CUDA LibTorch; see README)";
      return r;
    }
    if (opt.device != "" && opt.device != "cuda" && opt.device != "cpu") {
      r.error = "device must be 'cuda' or 'cpu', not '" + opt.device + "'";
      return r;
    }
    r.device = cuda ? "cuda" : "cpu";
    Builder b{cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU), 2, {}};
    b.index_bound = index_bound(ir);
    std::map<std::string, json> given;
    for (const char* part : {"list_pos_args", "list_kwargs"})
      for (const auto& a : ir.at("replay_ir").value(part, json::array()))
        given[a.value("arg_name", "")] = a.at("value");
    torch::jit::Stack inputs;
    for (const auto& a : schema->arguments()) {
      auto it = given.find(a.name());
      if (it == given.end()) {
        inputs.push_back(a.default_value() ? *a.default_value() : c10::IValue());
        continue;
      }
      auto v = b.value(a, it->second);
      if (!v) {
        r.error = b.error;
        return r;
      }
      inputs.push_back(*v);
    }
    auto handle = c10::Dispatcher::singleton().findSchema({schema->name(), schema->overload_name()});
    if (!handle) {
      r.error = "operator " + schema->name() + "." + schema->overload_name() + " has no kernel registered";
      return r;
    }
    int done = 0;
    const int total = std::max(1, opt.warmup) + std::max(1, opt.iters);
    auto call = [&] {
      torch::jit::Stack s = inputs;
      handle->callBoxed(s);
      if (opt.progress) opt.progress(++done, total);
      return s;
    };
    torch::jit::Stack out = call();  // also the first warm-up
    for (const auto& v : out)
      if (v.isTensor()) r.output_shapes.push_back(v.toTensor().sizes().vec());
    for (int i = 1; i < opt.warmup; ++i) call();
    std::vector<double> us;
    int iters = std::max(1, opt.iters);
    using clock = std::chrono::steady_clock;
    if (cuda) {
#ifdef TLSQL_CUDA_EVENTS
      r.timer = "cuda events";
      std::vector<at::cuda::CUDAEvent> start(iters), stop(iters);
      for (auto* v : {&start, &stop})
        for (auto& e : *v) e = at::cuda::CUDAEvent(cudaEventDefault);
      auto stream = c10::cuda::getCurrentCUDAStream();
      for (int i = 0; i < iters; ++i) {
        start[i].record(stream);
        call();
        stop[i].record(stream);
      }
      stop.back().synchronize();
      for (int i = 0; i < iters; ++i) us.push_back(start[i].elapsed_time(stop[i]) * 1e3);
#else
      r.timer = "cuda sync";  // no CUDA headers at build time: synchronize around each call
      for (int i = 0; i < iters; ++i) {
        torch::cuda::synchronize();
        auto t0 = clock::now();
        call();
        torch::cuda::synchronize();
        us.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
      }
#endif
    } else {
      r.timer = "steady clock";
      for (int i = 0; i < iters; ++i) {
        auto t0 = clock::now();
        call();
        us.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
      }
    }
    double sum = 0;
    for (double x : us) sum += x;
    r.mean_us = sum / us.size();
    r.median_us = median(us);
    r.min_us = *std::min_element(us.begin(), us.end());
    r.ok = true;
  } catch (const std::exception& e) {
    std::string m = e.what();
    r.error = m.substr(0, m.find('\n'));  // c10::Error appends a C++ backtrace
  }
  return r;
}

namespace {
// Python-dict style, as TraceLens's replay script prints arguments.
std::string py(const json& v, int depth = 0) {
  if (depth > 32) return "...";  // values are checked to be shallow; never recurse unboundedly
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return "'" + v.get<std::string>() + "'";
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py(v[i], depth + 1);
    return s + "]";
  }
  if (v.is_object()) {
    std::string s = "{";
    bool first = true;
    for (const char* k : {"shape", "dtype", "strides"})
      if (v.contains(k)) {
        s += std::string(first ? "" : ", ") + "'" + k + "': " + py(v[k], depth + 1);
        first = false;
      }
    return s + "}";
  }
  return v.dump();
}
}  // namespace

std::string describe_ir(const json& ir) {
  std::ostringstream o;
  if (!check_ir(ir).empty()) return "";
  const json& r = ir.at("replay_ir");
  for (auto [part, title] : {std::pair{"list_pos_args", "Positional Args"}, std::pair{"list_kwargs", "Keyword Args"}}) {
    json args = r.value(part, json::array());
    if (args.empty()) continue;
    o << title << ":\n";
    for (const auto& a : args)
      o << "  " << a.value("arg_name", "") << " " << a.value("arg_type", "") << ": " << py(a.at("value")) << "\n";
  }
  return o.str();
}

std::string default_device() { return torch::cuda::is_available() ? "cuda" : "cpu"; }

}  // namespace tlsql::replay
