#include "src/readers/emit_nvtx.h"

#include <charconv>

#include "src/json_check.h"
#include "src/json_scan.h"

namespace tlsql::emit_nvtx {

namespace {

// The fields getNvtxStr appends after the name, each behind ", ". A name is cut only before one of
// them: a record_function name may hold ", " itself ("my block, part 1, op_id = 3").
constexpr std::string_view kFields[] = {"seq = ", "op_id = ", "sizes = ", "input_op_ids = ", "stashed seq = "};

bool field_at(std::string_view rest) {
  for (std::string_view f : kFields)
    if (rest.starts_with(f)) return true;
  return false;
}

// The number after `key` in `fields` (", seq = 12"), kNull when absent, not digits or past int64
// (never its first digits: the range's whole text stays in args.nvtx).
int64_t number(std::string_view fields, std::string_view key) {
  size_t p = fields.find(key);
  if (p == std::string_view::npos) return kNull;
  p += key.size();
  size_t end = p;
  while (end < fields.size() && fields[end] >= '0' && fields[end] <= '9') ++end;
  int64_t v = 0;
  auto [stop, ec] = std::from_chars(fields.data() + p, fields.data() + end, v);
  return end > p && ec == std::errc() && stop == fields.data() + end ? v : kNull;
}

constexpr std::string_view kEngine = "autograd::engine::evaluate_function: ";

// An op's qualified name as the dispatcher gives it ("aten::mul", "c10d::allreduce_"): letters,
// digits, '_' and '.' around one or more "::". PyTorch before op ids wrote such a range with no
// fields when its seq was -1 and it had no shapes.
bool qualified_name(std::string_view s) {
  if (s.find("::") == std::string_view::npos || s.starts_with(":") || s.ends_with(":")) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':'))
      return false;
  return true;
}

}  // namespace

bool backward_name(std::string_view name) {
  if (name.starts_with(kEngine)) return true;
  // Built-in Functions end in "Backward" and a version ("MulBackward0"); a custom
  // autograd.Function's backward class is its name + "Backward" (torch/autograd/function.py's
  // FunctionMeta: "FlashAttnFuncBackward"), with no digits. FSDP's "RegisterPostBackwardFunction"
  // ends otherwise: a forward op.
  size_t d = name.size();
  while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') --d;
  return name.substr(0, d).ends_with("Backward");
}

std::optional<OpRange> op_range(std::string_view text) {
  // The first ", " that a field follows ends the name.
  size_t cut = std::string_view::npos;
  for (size_t p = text.find(", "); p != std::string_view::npos; p = text.find(", ", p + 1))
    if (field_at(text.substr(p + 2))) {
      cut = p;
      break;
    }
  if (cut == std::string_view::npos) {
    // A bare range: an op's only when it reads as a qualified op name (PyTorch before op ids).
    if (!qualified_name(text)) return std::nullopt;
    OpRange r;
    r.name = text;
    return r;
  }
  if (cut == 0) return std::nullopt;
  OpRange r;
  r.name = text.substr(0, cut);
  std::string_view fields = text.substr(cut);
  r.seq = number(fields, ", seq = ");
  if (r.seq == kNull && (r.seq = number(fields, ", stashed seq = ")) != kNull) r.stashed = true;
  r.op_id = number(fields, ", op_id = ");
  if (size_t p = fields.find(", sizes = "); p != std::string_view::npos) {
    std::string_view rest = fields.substr(p + 10);
    r.sizes = rest.substr(0, rest.find(", input_op_ids = "));
  }
  // Only emit_nvtx writes op ids and stashed seqs; a seq or sizes alone (PyTorch before op ids)
  // counts on an op's name, so that a user's "epoch 1, seq = 3" stays an annotation.
  if (r.op_id == kNull && !r.stashed && r.name.find("::") == std::string_view::npos && !backward_name(r.name))
    return std::nullopt;
  r.user = !r.name.starts_with(kEngine) &&
           (r.name.find(' ') != std::string_view::npos || r.name.find(',') != std::string_view::npos);
  return r;
}

int64_t ForwardThreads::fwd_tid(const OpRange& op, int64_t pid, int64_t tid) {
  if (op.seq == kNull || op.user) return kNull;
  // The autograd engine's ranges are told by name or by the legacy "stashed seq" (not by thread:
  // the engine runs CPU backward on the caller's thread, and seq counters are per thread).
  std::pair<int64_t, int64_t> key{pid, op.seq};
  if (op.stashed || backward_name(op.name)) {
    auto f = forward_.find(key);
    int64_t fwd = f != forward_.end() ? f->second : tid;
    return fwd == 0 || fwd == kNull ? 1 : fwd;
  }
  forward_.try_emplace(key, tid);
  return kNull;
}

void write_args(event_records::Writer& out, const OpRange& op, int64_t fwd_tid, std::string_view text) {
  if (op.op_id != kNull) out.arg("op_id", op.op_id);
  if (op.seq != kNull) out.arg("Sequence number", op.seq);
  // The shapes as emit_nvtx writes them ([[2, 3], []]): JSON, Kineto's "Input Dims".
  if (!op.sizes.empty()) {
    if (check_json(op.sizes.data(), op.sizes.size()).result == JsonCheck::ok && op.sizes.front() == '[') {
      // Minified and without objects it is flat: a writer keying its args (encode_keys) stores
      // it as written rather than writing the record's keys back as text for the parse thread.
      const std::string dims = json_scan::minify(op.sizes);
      out.json_arg("Input Dims", dims, dims.find('{') == std::string::npos && event_records::Writer::clean(dims));
    } else {
      out.text_arg("sizes", op.sizes);
    }
  }
  if (fwd_tid != kNull) out.arg("Fwd thread id", fwd_tid);
  out.text_arg("nvtx", text);
}

}  // namespace tlsql::emit_nvtx
