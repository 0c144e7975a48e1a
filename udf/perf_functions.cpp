#include "perf_functions.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>

#include "connection_cache.h"
#include "event_store.h"
#include "interval_union.h"
#include "kind.h"
#include "perf_model.h"
#include "tree_access.h"

namespace tlsql {

const char* const kPerfFunctionHelp =
    R"(flops(uid [, schema])         FLOPs of the op (its model, or inductor's kernel_flop); NULL if none
bytes(uid [, schema])         bytes the op moves to and from memory; NULL if none
tflops(uid [, schema])        flops / gpu_time, TFLOP/s
tbps(uid [, schema])          bytes / gpu_time, TB/s
intensity(uid [, schema])     flops / bytes (FLOPs per byte)
peak_tflops(uid [, schema])   gpu_spec peak for the trace's GPU and the op's dtype (matrix or vector units)
peak_tbps(uid [, schema])     gpu_spec memory bandwidth of the trace's GPU, TB/s
achieved_pct(uid [, schema])  % of the peak of the resource that bounds the op (see bound)
bound(uid [, schema])         'compute' or 'memory': which side of the roofline ridge the op sits
perf(uid [, schema])          all of the above and gpu_ns as one JSON object (one evaluation)
short_name(name)              name without template / argument lists (HTA's use_short_name)
op_category(name)             GEMM, CONV_fwd, CONV_bwd, SDPA_fwd, SDPA_bwd, NORM_fwd, NORM_bwd,
                              elementwise, reduce, comm, memcpy or other
dtype_bytes(type)             bytes per element of a trace dtype ('c10::BFloat16' -> 2)
numel(dims_json)              elements of a shape ('[2, 3]' -> 6)
)";

namespace {

// Everything the perf functions need about one event.
struct Measured {
  std::optional<double> flops, bytes;
  bool matrix = false;
  std::string dtype;
  int64_t gpu_ns = 0, trace = 0, device = -1;
};

class PerfContext {
 public:
  PerfContext(sqlite3* db, const std::string& schema) : db_(db), schema_(schema), tree_(db, schema) {
    if (!tree_.ok()) return;
    prepare(fmt::format("SELECT name, kind, args, trace, device FROM \"{}\".event WHERE uid = ?", schema), &info_);
    prepare(fmt::format("SELECT launcher FROM \"{}\".launch_link WHERE gpu = ?", schema), &launcher_);
    // The device the op's work ran on; else the trace's first device.
    // Optional: a database without gpu_spec still has FLOPs and bytes.
    sqlite3_prepare_v2(
        db_,
        fmt::format("SELECT s.matrix_tflops, s.vector_tflops, s.hbm_tbps, f.vector_tflops "
                    "FROM \"{0}\".device_gpu g JOIN \"{0}\".gpu_spec s ON s.gpu = g.gpu AND s.dtype = ?1 "
                    "LEFT JOIN \"{0}\".gpu_spec f ON f.gpu = g.gpu AND f.dtype = 'fp32' "
                    "WHERE g.trace = ?2 ORDER BY g.id = ?3 DESC, g.id LIMIT 1",
                    schema)
            .c_str(),
        -1, &peaks_, nullptr);
  }
  ~PerfContext() {
    for (sqlite3_stmt* s : {info_, launcher_, peaks_}) sqlite3_finalize(s);
  }
  PerfContext(const PerfContext&) = delete;
  PerfContext& operator=(const PerfContext&) = delete;
  std::string error() const { return tree_.ok() ? error_ : tree_.error(); }

  // `timed`: also the GPU time (a walk of the event's subtree), which flops(), bytes(),
  // intensity(), the peaks and bound() do without.
  std::optional<Measured> measure(int64_t uid, bool timed) {
    std::string name, kind, args;
    Measured m;
    if (!info(uid, name, kind, args, m.trace, m.device)) return std::nullopt;
    // Inductor-augmented traces carry the answer (profile_analysis.py --augment_trace).
    // (Parsed only when the text names them: most events' args never do.)
    const bool augmented =
        args.find("\"kernel_flop\"") != std::string::npos || args.find("\"kernel_num_gb\"") != std::string::npos;
    auto j = augmented ? nlohmann::json::parse(args, nullptr, false) : nlohmann::json();
    if (j.is_object() && (j.contains("kernel_flop") || j.contains("kernel_num_gb"))) {
      if (j.contains("kernel_flop") && j["kernel_flop"].is_number()) m.flops = j["kernel_flop"].get<double>();
      if (j.contains("kernel_num_gb") && j["kernel_num_gb"].is_number())
        m.bytes = j["kernel_num_gb"].get<double>() * 1e9;
    } else if (kind == "kernel") {
      // A kernel with no numbers of its own takes its launching op's, when that op launched only it.
      int64_t op;
      if (single_launch(uid, op))
        if (auto o = model_innermost(op))
          m.flops = o->flops, m.bytes = o->bytes, m.matrix = o->matrix, m.dtype = o->dtype;
    } else if (kind == "cpu_op") {
      if (auto o = model_innermost(uid))
        m.flops = o->flops, m.bytes = o->bytes, m.matrix = o->matrix, m.dtype = o->dtype;
    }
    if (timed) m.gpu_ns = gpu_time(uid, kind);
    return m;
  }

  // gpu_spec figures for the event's GPU and dtype: (peak TFLOP/s, TB/s).
  std::pair<std::optional<double>, std::optional<double>> peaks(const Measured& m) {
    std::string dt = spec_dtype(m.dtype);
    if (dt.empty()) dt = "fp32";
    // Remembered per (dtype, units, trace, device) until the connection changes any row (an
    // UPDATE of gpu_spec must show at once) or the schema changes (info_, stepped by every
    // measure(), is re-prepared after a DETACH / ATTACH: another database under the same name).
    std::pair<int64_t, int> epoch{sqlite3_total_changes64(db_),
                                  sqlite3_stmt_status(info_, SQLITE_STMTSTATUS_REPREPARE, 0)};
    if (epoch != peaks_epoch_) peaks_seen_.clear(), peaks_epoch_ = epoch;
    auto key = std::make_tuple(dt, m.matrix, m.trace, m.device);
    if (auto it = peaks_seen_.find(key); it != peaks_seen_.end()) return it->second;
    auto& out = peaks_seen_[key];
    sqlite3_stmt* s = peaks_;
    if (!s) return out;
    sqlite3_bind_text(s, 1, dt.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, m.trace);
    sqlite3_bind_int64(s, 3, m.device);
    if (sqlite3_step(s) == SQLITE_ROW) {
      auto col = [&](int i) -> std::optional<double> {
        if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
        return sqlite3_column_double(s, i);
      };
      // Vector work in a dtype the datasheet gives no vector figure for: the fp32 vector peak.
      out.first = m.matrix ? col(0) : (col(1) ? col(1) : col(3));
      out.second = col(2);
    }
    sqlite3_reset(s);  // no statement stays active between calls (it would block DETACH)
    return out;
  }

 private:
  void prepare(const std::string& sql, sqlite3_stmt** s) {
    if (error_.empty() && sqlite3_prepare_v2(db_, sql.c_str(), -1, s, nullptr) != SQLITE_OK)
      error_ = sqlite3_errmsg(db_);
  }
  bool info(int64_t uid, std::string& name, std::string& kind, std::string& args, int64_t& trace, int64_t& device) {
    if (const EventStore* s = tree_.store()) {  // a loaded trace: its row, no SQL
      if (uid < s->first_uid || uid - s->first_uid >= s->total_rows) return false;
      int64_t local;
      const LoadedTrace& t = s->trace_at(uid - s->first_uid, local);
      const EventRec& e = t.rows[(size_t)local];
      name = e.name == StringPool::kNone ? std::string() : std::string(s->strings.get(e.name));
      kind = kind_name(e.kind);
      args = e.is(EventRec::has_args) ? std::string(s->args.get(e.args, e.args_len)) : std::string();
      trace = t.id;
      device = e.device == EventRec::kNull32 ? -1 : e.device;
      return true;
    }
    sqlite3_bind_int64(info_, 1, uid);
    if (sqlite3_step(info_) != SQLITE_ROW) return sqlite3_reset(info_), false;
    auto text = [&](int i) {
      return sqlite3_column_text(info_, i) ? std::string((const char*)sqlite3_column_text(info_, i)) : std::string();
    };
    name = text(0), kind = text(1), args = text(2);
    trace = sqlite3_column_int64(info_, 3);
    device = sqlite3_column_type(info_, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(info_, 4);
    sqlite3_reset(info_);
    return true;
  }
  // The op whose numbers a kernel takes: the nearest op at or above its launcher that has a model
  // and launched nothing but this kernel (aten::_flash_attention_forward launches the flash
  // kernel; the model sits on aten::_scaled_dot_product_flash_attention above it).
  bool single_launch(int64_t gpu, int64_t& op) {
    sqlite3_bind_int64(launcher_, 1, gpu);
    bool linked = sqlite3_step(launcher_) == SQLITE_ROW;
    std::vector<int64_t> chain{linked ? sqlite3_column_int64(launcher_, 0) : 0};
    sqlite3_reset(launcher_);
    if (!linked) return false;
    for (auto [a, d] : tree_.ancestors(chain[0])) chain.push_back(a);
    for (int64_t c : chain) {
      std::string name, kind, args;
      int64_t t, dv;
      if (!info(c, name, kind, args, t, dv) || kind != "cpu_op") return false;
      int kernels = 0;  // stop at the second: an op high up the tree has a large subtree
      tree_.visit_descendants(c, [&](const TreeRow& r) { return !(is_gpu_work(r.kind) && ++kernels > 1); });
      if (kernels > 1) return false;
      if (has_perf_model(name)) {
        op = c;
        return true;
      }
    }
    return false;
  }
  // The model of `uid`, unless an op of the same family below it is modeled too: the innermost
  // modeled op carries the numbers (aten::linear -> aten::addmm, aten::layer_norm ->
  // aten::native_layer_norm), so summing over ops never counts the same work twice. Other
  // families below do not count (a convolution's bias add_ is elementwise).
  std::optional<OpPerf> model_innermost(int64_t uid) {
    std::string name, kind, args;
    int64_t t, d;
    if (!info(uid, name, kind, args, t, d) || !has_perf_model(name)) return std::nullopt;
    auto mine = model_op(name, args);
    if (!mine) return std::nullopt;
    const std::string family = op_category(name);
    for (auto [k, dist] : tree_.descendants(uid)) {
      std::string n2, k2, a2;
      if (info(k, n2, k2, a2, t, d) && k2 == "cpu_op" && has_perf_model(n2) && op_category(n2) == family &&
          model_op(n2, a2))
        return std::nullopt;
    }
    return mine;
  }
  int64_t gpu_time(int64_t uid, const std::string& kind) {
    std::vector<std::pair<int64_t, int64_t>> iv;
    if (auto r = tree_.row(uid); r && is_gpu_work(r->kind) && r->has_time) iv.emplace_back(r->ts, r->end);
    if (!is_gpu_work(kind))
      for (auto [k, d] : tree_.descendants(uid))
        if (auto r = tree_.row(k); r && is_gpu_work(r->kind) && r->has_time) iv.emplace_back(r->ts, r->end);
    return union_length(iv);
  }

 public:
  TreeAccess& tree() { return tree_; }

 private:
  sqlite3* db_;
  std::string schema_, error_;
  TreeAccess tree_;
  sqlite3_stmt *info_ = nullptr, *launcher_ = nullptr, *peaks_ = nullptr;
  std::map<std::tuple<std::string, bool, int64_t, int64_t>, std::pair<std::optional<double>, std::optional<double>>>
      peaks_seen_;
  std::pair<int64_t, int> peaks_epoch_{-1, -1};
};

enum class Fn { flops, bytes, tflops, tbps, intensity, peak_tflops, peak_tbps, achieved_pct, bound, perf };
const char* const kFnNames[] = {"flops",       "bytes",     "tflops",       "tbps",  "intensity",
                                "peak_tflops", "peak_tbps", "achieved_pct", "bound", "perf"};

// Every number the perf functions give for one event.
struct Perf {
  std::optional<double> flops, bytes, tflops, tbps, intensity, peak_tflops, peak_tbps, achieved_pct;
  std::optional<std::string> bound;
};

// `peaks`: also the gpu_spec figures and what follows from them (bound, achieved_pct).
Perf evaluate(PerfContext& pc, const Measured& m, bool peaks) {
  Perf p;
  p.flops = m.flops, p.bytes = m.bytes;
  if (m.gpu_ns > 0) {
    if (m.flops) p.tflops = *m.flops / (double)m.gpu_ns / 1e3;  // FLOP/ns = GFLOP/s; /1e3 -> TFLOP/s
    if (m.bytes) p.tbps = *m.bytes / (double)m.gpu_ns / 1e3;
  }
  if (m.flops && m.bytes && *m.bytes > 0) p.intensity = *m.flops / *m.bytes;
  if (!peaks) return p;
  auto [peak_tf, peak_tb] = pc.peaks(m);
  p.peak_tbps = peak_tb;               // the GPU's, whatever the op
  if (!m.flops && !m.bytes) return p;  // no model: neither the dtype nor the units are known
  p.peak_tflops = peak_tf;
  // Roofline: the ridge is peak_tflops / peak_tbps FLOPs per byte; an op whose intensity is above
  // it is compute-bound, else memory-bound. Without bytes (or flops) the known side decides.
  bool compute;
  if (p.intensity && peak_tf && peak_tb)
    compute = *p.intensity >= *peak_tf / *peak_tb;
  else
    compute = m.flops && *m.flops > 0 && !m.bytes;
  p.bound = compute ? "compute" : "memory";
  if (compute && p.tflops && peak_tf) p.achieved_pct = 100 * *p.tflops / *peak_tf;
  if (!compute && p.tbps && peak_tb) p.achieved_pct = 100 * *p.tbps / *peak_tb;
  return p;
}

void result(sqlite3_context* ctx, std::optional<double> v) {
  if (v && std::isfinite(*v))
    sqlite3_result_double(ctx, *v);
  else
    sqlite3_result_null(ctx);
}

std::string perf_json(const Perf& p, const Measured& m) {
  nlohmann::json j = nlohmann::json::object();
  auto put = [&](const char* k, std::optional<double> v) {
    j[k] = v && std::isfinite(*v) ? nlohmann::json(*v) : nullptr;
  };
  put("flops", p.flops), put("bytes", p.bytes), put("gpu_ns", (double)m.gpu_ns), put("tflops", p.tflops);
  put("tbps", p.tbps), put("intensity", p.intensity), put("peak_tflops", p.peak_tflops);
  put("peak_tbps", p.peak_tbps), put("achieved_pct", p.achieved_pct);
  j["bound"] = p.bound ? nlohmann::json(*p.bound) : nullptr;
  // Which gpu_spec row the peak came from (the roofline draws one ceiling per dtype and units).
  const bool modeled = p.flops || p.bytes;
  std::string dt = spec_dtype(m.dtype);
  j["dtype"] = modeled ? nlohmann::json(dt.empty() ? "fp32" : dt) : nullptr;
  j["units"] = modeled ? nlohmann::json(m.matrix ? "matrix" : "vector") : nullptr;
  return j.dump();
}

void perf_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Fn fn = static_cast<Fn>(reinterpret_cast<intptr_t>(sqlite3_user_data(ctx)));
  const char* name = kFnNames[(int)fn];
  int64_t uid;
  if (!uid_arg(ctx, argv[0], name, uid)) return;
  std::string schema = schema_arg(sqlite3_context_db_handle(ctx), argc > 1 ? argv[1] : nullptr);
  sqlite3* db = sqlite3_context_db_handle(ctx);
  std::unique_ptr<PerfContext> own;
  PerfContext* cached = connection_cached<PerfContext>(db, "perf:" + schema, [&]() -> std::unique_ptr<PerfContext> {
    auto c = std::make_unique<PerfContext>(db, schema);
    if (!c->error().empty()) return nullptr;
    return c;
  });
  if (!cached) own = std::make_unique<PerfContext>(db, schema);
  PerfContext& pc = cached ? *cached : *own;
  if (!pc.error().empty()) return sqlite3_result_error(ctx, fmt::format("{}: {}", name, pc.error()).c_str(), -1);
  pc.tree().take_walk_error();
  auto m = pc.measure(uid, fn == Fn::tflops || fn == Fn::tbps || fn == Fn::achieved_pct || fn == Fn::perf);
  if (pc.tree().report_walk_error(ctx, name, uid)) return;
  if (!m) return sqlite3_result_error(ctx, fmt::format("{}({}): no event has uid {}", name, uid, uid).c_str(), -1);
  Perf p = evaluate(pc, *m, fn >= Fn::peak_tflops);
  switch (fn) {
    case Fn::flops: return result(ctx, p.flops);
    case Fn::bytes: return result(ctx, p.bytes);
    case Fn::tflops: return result(ctx, p.tflops);
    case Fn::tbps: return result(ctx, p.tbps);
    case Fn::intensity: return result(ctx, p.intensity);
    case Fn::peak_tflops: return result(ctx, p.peak_tflops);
    case Fn::peak_tbps: return result(ctx, p.peak_tbps);
    case Fn::achieved_pct: return result(ctx, p.achieved_pct);
    case Fn::bound:
      if (!p.bound) return sqlite3_result_null(ctx);
      return sqlite3_result_text(ctx, p.bound->c_str(), -1, SQLITE_TRANSIENT);
    case Fn::perf: {
      std::string j = perf_json(p, *m);
      return sqlite3_result_text(ctx, j.c_str(), -1, SQLITE_TRANSIENT);
    }
  }
}

// HTA's shorten_name as its outputs show it: names holding template or argument lists lose
// them (and any return type before the last space, and "->"); other names stay whole, as does
// a name that would shorten to nothing ("Memcpy DtoH (Device -> Pinned)").
std::string short_name(const std::string& name) {
  if (name.find_first_of("<(") == std::string::npos) return name;
  std::string s, out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 2, "->") == 0) {
      ++i;
      continue;
    }
    s += name[i];
  }
  for (char c : s) {
    if (c == '>' || c == ')') {
      char open = c == '>' ? '<' : '(';
      while (!out.empty() && out.back() != open) out.pop_back();
      if (!out.empty()) out.pop_back();
    } else {
      out += c;
    }
  }
  size_t sp = out.rfind(' ');
  std::string last = sp == std::string::npos ? out : out.substr(sp + 1);
  return last.empty() ? name : last;
}

void short_name_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  std::string s = short_name((const char*)n);
  sqlite3_result_text(ctx, s.c_str(), -1, SQLITE_TRANSIENT);
}

void op_category_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  std::string c = op_category((const char*)n);
  sqlite3_result_text(ctx, c.c_str(), -1, SQLITE_TRANSIENT);
}

void dtype_bytes_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* t = sqlite3_value_text(argv[0]);
  int b = t ? dtype_bytes((const char*)t) : 0;
  if (b)
    sqlite3_result_int(ctx, b);
  else
    sqlite3_result_null(ctx);
}

void numel_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* t = sqlite3_value_text(argv[0]);
  if (!t) return sqlite3_result_null(ctx);
  auto j = nlohmann::json::parse((const char*)t, nullptr, false);
  if (!j.is_array())
    return sqlite3_result_error(ctx, "numel(dims): expected a JSON array of sizes such as '[2, 3]'", -1);
  double n = 1;
  for (const auto& v : j) {
    if (!v.is_number_integer()) return sqlite3_result_error(ctx, "numel(dims): expected integer sizes", -1);
    n *= v.get<double>();
  }
  if (n <= 9.2e18)
    sqlite3_result_int64(ctx, (int64_t)n);
  else
    sqlite3_result_double(ctx, n);
}

}  // namespace

void register_perf_functions(sqlite3* db) {
  for (int f = 0; f <= (int)Fn::perf; ++f) {
    for (int argc : {1, 2})
      sqlite3_create_function_v2(db, kFnNames[f], argc, SQLITE_UTF8 | SQLITE_INNOCUOUS,
                                 reinterpret_cast<void*>(static_cast<intptr_t>(f)), perf_fn, nullptr, nullptr, nullptr);
  }
  sqlite3_create_function_v2(db, "op_category", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                             op_category_fn, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "short_name", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                             short_name_fn, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "dtype_bytes", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                             dtype_bytes_fn, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "numel", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr, numel_fn,
                             nullptr, nullptr, nullptr);
}

}  // namespace tlsql
