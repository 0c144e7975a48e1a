#include "src/serving_step.h"

#include <array>
#include <charconv>
#include <string>

namespace tlsql {

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

}  // namespace tlsql
