#include "src/kind.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string>
#include <unordered_map>

namespace tlsql {

std::string_view kind_name(Kind k) {
  static constexpr std::array<std::string_view, kKindCount> names = {
      "cpu_op", "python",         "annotation", "runtime", "driver", "kernel", "memcpy", "memset",
      "sync",   "gpu_annotation", "instant",    "counter", "flow",   "meta",   "other"};
  return names[static_cast<size_t>(k)];
}

Kind kind_from_name(std::string_view name) {
  // A hash lookup: a saved database's millions of rows each name their kind.
  static const std::unordered_map<std::string_view, Kind> kinds = [] {
    std::unordered_map<std::string_view, Kind> m;
    for (size_t i = 0; i < kKindCount; ++i) m.emplace(kind_name((Kind)i), (Kind)i);
    return m;
  }();
  auto it = kinds.find(name);
  return it == kinds.end() ? Kind::other : it->second;
}

Kind normalize_kind(char ph, std::string_view cat) {
  switch (ph) {
    case 'M': return Kind::meta;
    case 'C': return Kind::counter;
    case 's':
    case 't':
    case 'f': return Kind::flow;
    case 'i':
    case 'I': return Kind::instant;
    default: break;
  }
  // Category names are matched case-insensitively: Kineto wrote "Kernel" in 2021, "kernel" now.
  struct Entry {
    std::string_view cat;
    Kind kind;
  };
  static constexpr Entry table[] = {
      {"cpu_op", Kind::cpu_op},
      {"operator", Kind::cpu_op},
      {"python_function", Kind::python},
      {"python", Kind::python},
      {"user_annotation", Kind::annotation},
      {"cuda_runtime", Kind::runtime},
      {"runtime", Kind::runtime},
      {"hip_runtime", Kind::runtime},
      {"cuda_driver", Kind::driver},
      {"driver", Kind::driver},
      {"kernel", Kind::kernel},
      {"gpu_memcpy", Kind::memcpy},
      {"memcpy", Kind::memcpy},
      {"gpu_memset", Kind::memset},
      {"memset", Kind::memset},
      {"cuda_sync", Kind::sync},
      {"gpu_user_annotation", Kind::gpu_annotation},
      {"cpu_instant_event", Kind::instant},
  };
  if (cat.size() > 32) return Kind::other;
  char lower[32];
  std::transform(cat.begin(), cat.end(), lower, [](unsigned char c) { return (char)std::tolower(c); });
  std::string_view key(lower, cat.size());
  for (const Entry& e : table)
    if (e.cat == key) return e.kind;
  return Kind::other;
}

bool is_graph_launch(std::string_view name) {
  for (std::string_view p : {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"})
    if (name.substr(0, p.size()) == p && (name.size() == p.size() || name[p.size()] == '_')) return true;
  return false;
}

Kind launched_work(std::string_view call) {
  auto has = [&](std::string_view part) { return call.find(part) != std::string_view::npos; };
  // Only CUDA / HIP API calls: a cpu_op or python frame is never asked, but a name is cheap to check.
  if (!(call.starts_with("cu") || call.starts_with("hip") || call.starts_with("__cuda"))) return Kind::other;
  if (is_graph_launch(call) || has("HostFunc")) return Kind::other;
  if (has("Launch") && has("Kernel")) return Kind::kernel;
  // Synchronous cudaMemcpy is not allowed while capturing; the async forms (and 2D / 3D / peer
  // variants, hipMemcpyWithStream) are the graph's copy nodes.
  if (has("Memcpy") && (has("Async") || has("WithStream"))) return Kind::memcpy;
  if (has("Memset") && has("Async")) return Kind::memset;
  return Kind::other;
}

namespace {
// The digits at the start of `s`, consumed; nullopt if none (a sign is not a digit).
std::optional<int64_t> leading_number(std::string_view& s) {
  int64_t n = 0;
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  s.remove_prefix((size_t)(p - s.data()));
  return n;
}
// The number after the first `key` in `s`, if one follows it.
std::optional<int64_t> number_after(std::string_view s, std::string_view key) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  s.remove_prefix(at + key.size());
  return leading_number(s);
}
// "sq<a>sk<b>sqsq<c>sqsk<d>" (all of it): vLLM's detailed aggregates of one request group.
std::optional<std::array<int64_t, 4>> vllm_group(std::string_view s) {
  std::array<int64_t, 4> v{};
  size_t i = 0;
  for (std::string_view key : {"sq", "sk", "sqsq", "sqsk"}) {
    if (!s.starts_with(key)) return std::nullopt;
    s.remove_prefix(key.size());
    auto n = leading_number(s);
    if (!n) return std::nullopt;
    v[i++] = *n;
  }
  if (!s.empty()) return std::nullopt;
  return v;
}

// "_<key>_<N>(<inner>)" at the start of `s`, consumed: N and the text in parentheses.
std::optional<std::pair<int64_t, std::string_view>> vllm_part(std::string_view& s, std::string_view key) {
  if (!s.starts_with(key)) return std::nullopt;
  std::string_view rest = s.substr(key.size());
  auto n = leading_number(rest);
  if (!n || !rest.starts_with('(')) return std::nullopt;
  size_t close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  s = rest.substr(close + 1);
  return std::pair{*n, rest.substr(1, close - 1)};
}

std::optional<int64_t> sum(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t r;
  if (!a || !b || __builtin_add_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

// vLLM: execute_<T>_context_<P>(...)_generation_<D>(...), or execute_context_<P>(<t>)_generation_<D>(<t>).
std::optional<ServingStep> vllm_step(std::string_view name) {
  constexpr std::string_view prefix = "execute_";
  if (!name.starts_with(prefix)) return std::nullopt;
  std::string_view rest = name.substr(prefix.size());
  ServingStep st;
  st.annotation = true;
  if (rest.starts_with("context_")) {       // the native form: tokens per group in the parentheses
    rest = name.substr(prefix.size() - 1);  // "_context_..."
    auto c = vllm_part(rest, "_context_");
    auto g = c ? vllm_part(rest, "_generation_") : std::nullopt;
    if (!g || !rest.empty()) return std::nullopt;
    // "(<tokens>)", or more numbers after it as vLLM has written them ("(888_788544)"): the first.
    auto tokens_of = [](std::string_view t) -> std::optional<int64_t> {
      auto n = leading_number(t);
      while (n && t.starts_with('_'))
        if (t.remove_prefix(1); !leading_number(t)) return std::nullopt;
      return t.empty() ? n : std::nullopt;
    };
    auto c_tokens = tokens_of(c->second), g_tokens = tokens_of(g->second);
    if (!c_tokens || !g_tokens) return std::nullopt;
    st.prefill = c->first, st.decode = g->first, st.tokens = sum(c_tokens, g_tokens);
    return st;
  }
  st.tokens = leading_number(rest);
  if (!st.tokens || !(rest.empty() || rest[0] == '_')) return std::nullopt;
  std::string_view parts = rest;
  auto c = vllm_part(parts, "_context_");
  auto g = c ? vllm_part(parts, "_generation_") : std::nullopt;
  if (g && parts.empty()) {
    st.prefill = c->first, st.decode = g->first;
    auto cl = vllm_group(c->second), gl = vllm_group(g->second);
    if (cl && gl)
      st.lengths = StepLengths{(*cl)[0], (*cl)[1], (*cl)[2], (*cl)[3], (*gl)[0], (*gl)[1], (*gl)[2], (*gl)[3]};
    return st;
  }
  // Other text after the tokens: the request counts where it names them.
  st.prefill = number_after(rest, "_context_");
  st.decode = number_after(rest, "_generation_");
  return st;
}

// The value of `key=` in a bracketed label's body ("bs=64 tok=64 d=64"): its leading digits
// (ATOM's padded batch "bs=117/128" is 117 real requests). nullopt when absent.
std::optional<int64_t> field(std::string_view body, std::string_view key) {
  for (size_t at = body.find(key); at != std::string_view::npos; at = body.find(key, at + 1)) {
    if ((at > 0 && body[at - 1] != ' ') || at + key.size() >= body.size() || body[at + key.size()] != '=') continue;
    std::string_view v = body.substr(at + key.size() + 1);
    return leading_number(v);
  }
  return std::nullopt;
}

// The aggregates of a label that has them (sqsq / sqsk present): `prefix` "c_" / "g_" (SGLang) or
// "" (ATOM, whose one group is the phase's).
std::optional<std::array<int64_t, 4>> label_group(std::string_view body, const std::string& prefix) {
  auto sqsq = field(body, prefix + "sqsq"), sqsk = field(body, prefix + "sqsk");
  if (!sqsq || !sqsk) return std::nullopt;
  auto sq = field(body, prefix.empty() ? "tok" : prefix + "sq"), sk = field(body, prefix + "sk");
  return std::array<int64_t, 4>{sq.value_or(0), sk.value_or(0), *sqsq, *sqsk};
}

// SGLang: step[EXTEND|DECODE|MIXED bs=.. (toks=..) (c=.. g=..) (c_sq=.. ... g_sqsk=..)].
std::optional<ServingStep> sglang_step(std::string_view name) {
  if (!name.starts_with("step[") || !name.ends_with("]")) return std::nullopt;
  std::string_view body = name.substr(5, name.size() - 6);
  std::string_view mode = body.substr(0, body.find(' '));
  auto bs = field(body, "bs");
  if (!bs || !(mode == "EXTEND" || mode == "DECODE" || mode == "MIXED")) return std::nullopt;
  ServingStep st;
  st.annotation = true;
  st.tokens = field(body, "toks");
  if (mode == "EXTEND") st.mode = "prefill", st.prefill = bs, st.decode = 0;
  if (mode == "DECODE") st.mode = "decode", st.prefill = 0, st.decode = bs;
  if (mode == "MIXED") st.mode = "mixed", st.prefill = field(body, "c"), st.decode = field(body, "g");
  auto c = label_group(body, "c_"), g = label_group(body, "g_");
  if (c || g) {
    const std::array<int64_t, 4> none{};
    c = c.value_or(none), g = g.value_or(none);
    st.lengths = StepLengths{(*c)[0], (*c)[1], (*c)[2], (*c)[3], (*g)[0], (*g)[1], (*g)[2], (*g)[3]};
    if (!st.tokens) st.tokens = sum((*c)[0], (*g)[0]);
  }
  return st;
}

// ATOM: prefill[bs=.. tok=.. (ctx=[..]) (sk=.. sqsq=.. sqsk=..)], decode[bs=.. tok=.. (p=..) (d=..) ...].
std::optional<ServingStep> atom_step(std::string_view name) {
  const bool prefill = name.starts_with("prefill["), decode = name.starts_with("decode[");
  if (!(prefill || decode) || !name.ends_with("]")) return std::nullopt;
  std::string_view body = name.substr(name.find('[') + 1);
  body.remove_suffix(1);
  auto bs = field(body, "bs");
  if (!bs) return std::nullopt;
  ServingStep st;
  st.annotation = true;
  st.tokens = field(body, "tok");
  st.mode = prefill ? "prefill" : "decode";
  if (prefill) st.prefill = bs, st.decode = 0;
  if (decode) st.prefill = field(body, "p").value_or(0), st.decode = field(body, "d").value_or(*bs);
  if (auto l = label_group(body, "")) {
    StepLengths s;
    (prefill ? s.c_sq : s.g_sq) = (*l)[0], (prefill ? s.c_sk : s.g_sk) = (*l)[1];
    (prefill ? s.c_sqsq : s.g_sqsq) = (*l)[2], (prefill ? s.c_sqsk : s.g_sqsk) = (*l)[3];
    st.lengths = s;
  }
  return st;
}
}  // namespace

const char* ServingStep::phase() const {
  if (!prefill || !decode) return mode;
  if (*prefill > 0 && *decode > 0) return "mixed";
  if (*prefill > 0) return "prefill";
  if (*decode > 0) return "decode";
  return mode;
}

std::optional<ServingStep> serving_step(Kind kind, std::string_view name) {
  ServingStep st;
  if (kind == Kind::annotation) {
    if (auto v = vllm_step(name)) return v;
    if (auto s = sglang_step(name)) return s;
    return atom_step(name);
  }
  if (kind != Kind::python) return std::nullopt;
  // "<path>/<file>.py(<line>): <function>"
  size_t paren = name.rfind(".py(");
  size_t colon = name.rfind("): ");
  if (paren == std::string_view::npos || colon == std::string_view::npos || colon < paren) return std::nullopt;
  std::string_view file = name.substr(0, paren), function = name.substr(colon + 3);
  if (size_t slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  // vLLM V1's gpu_worker, V0's worker_base (where its workers' execute_model lives) and the
  // spec-decode / multi-step workers; not the model runner's execute_model inside them.
  if ((function == "execute_model" && (file.ends_with("worker") || file == "worker_base")) ||
      (function == "forward_batch_generation" && file == "tp_worker"))
    return st;
  return std::nullopt;
}

int capture_boundary(std::string_view call) {
  if (!(call.starts_with("cu") || call.starts_with("hip"))) return 0;
  if (call.find("StreamBeginCapture") != std::string_view::npos) return 1;
  if (call.find("StreamEndCapture") != std::string_view::npos) return -1;
  return 0;
}

namespace {
// A CUDA / HIP runtime call's name without its API prefix and per-thread / version suffix
// (cudaStreamSynchronize_ptsz -> StreamSynchronize); empty for other names.
std::string_view runtime_call(std::string_view call) {
  std::string_view rest;
  if (call.starts_with("cuda"))
    rest = call.substr(4);
  else if (call.starts_with("hip"))
    rest = call.substr(3);
  else
    return {};
  if (size_t u = rest.find('_'); u != std::string_view::npos) rest = rest.substr(0, u);
  return rest;
}
}  // namespace

bool gpu_wait_call(std::string_view call) {
  const std::string_view rest = runtime_call(call);
  return rest == "DeviceSynchronize" || rest == "StreamSynchronize" || rest == "EventSynchronize";
}

bool blocking_host_call(std::string_view call) {
  if (gpu_wait_call(call)) return true;
  const std::string_view rest = runtime_call(call);
  return rest == "EventQuery" || rest == "Memcpy" || rest == "MemcpyAsync" || rest == "MemcpyWithStream";
}

bool runtime_lock_call(std::string_view call) {
  if (!call.starts_with("cuda")) return false;
  const std::string_view rest = runtime_call(call);
  return rest == "LaunchKernel" || rest == "MemcpyAsync" || rest == "HostAlloc";
}

}  // namespace tlsql
