// SQL functions over the perf models: flops, bytes, tflops, tbps, intensity, peak_tflops,
// peak_tbps, achieved_pct, bound, op_category, dtype_bytes, numel.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "args/op_args.h"
#include "src/event_store.h"
#include "src/event_table.h"
#include "src/kind.h"
#include "src/sql_names.h"
#include "udf/connection_cache.h"
#include "udf/gpu_class.h"
#include "udf/gpu_class_schema.h"
#include "udf/perf/name_memo.h"
#include "udf/perf/perf_model.h"
#include "udf/perf/perf_sum.h"
#include "udf/perf/perf_table.h"
#include "udf/perf/user_models.h"
#include "udf/registry.h"
#include "udf/sql_function.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

namespace {

// Everything the perf functions need about one event, from the schema's perf table.
struct Measured {
  std::optional<double> flops, bytes;
  bool matrix = false;
  uint16_t dtype = 0;  // in the table's dtypes
  int64_t gpu_ns = 0, trace = 0, device = -1;
};

// The gpu_spec dtype key of the op's dtype, fp32 when it has none (the dtype its peak is read for).
std::string peak_dtype(const PerfTable& t, const Measured& m) {
  std::string dt = spec_dtype(t.dtypes[m.dtype]);
  return dt.empty() ? "fp32" : dt;
}

Measured measured(const PerfTable& t, int64_t r) {
  Measured m;
  if (const PerfTable::Model* x = t.model_of(r)) {
    if (x->has_flops) m.flops = x->flops;
    if (x->has_bytes) m.bytes = x->bytes;
    m.matrix = x->matrix;
    m.dtype = x->dtype;
  }
  m.gpu_ns = t.gpu_ns[(size_t)r];
  m.trace = t.trace_of((size_t)r);
  m.device = t.device[(size_t)r];
  return m;
}

// The gpu_spec peaks of the schema's GPUs, by (dtype, units, trace, device): one query per key.
class Peaks {
 public:
  Peaks(sqlite3* db, const std::string& schema) : db_(db) {
    // The device the op's work ran on; else the trace's first device.
    // Optional: a database without gpu_spec still has FLOPs and bytes.
    sqlite3_prepare_v2(db_,
                       fmt::format("SELECT s.matrix_tflops, s.vector_tflops, s.hbm_tbps, f.vector_tflops "
                                   "FROM {0}.device_gpu g JOIN {0}.gpu_spec s ON s.gpu = g.gpu AND s.dtype = ?1 "
                                   "LEFT JOIN {0}.gpu_spec f ON f.gpu = g.gpu AND f.dtype = 'fp32' "
                                   "WHERE g.trace = ?2 ORDER BY g.id = ?3 DESC, g.id LIMIT 1",
                                   schema_sql(db, schema))
                           .c_str(),
                       -1, &peaks_, nullptr);
  }
  ~Peaks() { sqlite3_finalize(peaks_); }
  Peaks(const Peaks&) = delete;
  Peaks& operator=(const Peaks&) = delete;

  // gpu_spec figures for the event's GPU and dtype: (peak TFLOP/s, TB/s).
  std::pair<std::optional<double>, std::optional<double>> get(const Measured& m, const PerfTable* table) {
    // Remembered until the connection changes any row (an UPDATE of gpu_spec must show at once,
    // and a ROLLBACK of one: ChangesSeen) or the schema holds another database (another perf
    // table, whose dtype indexes differ).
    if (!changes_.current(db_) || table != table_) seen_.clear(), changes_.mark(db_), table_ = table;
    auto key = std::make_tuple(m.dtype, m.matrix, m.trace, m.device);
    if (auto it = seen_.find(key); it != seen_.end()) return it->second;
    auto& out = seen_[key];
    sqlite3_stmt* s = peaks_;
    if (!s) return out;
    const std::string dt = peak_dtype(*table, m);
    sqlite3_bind_text(s, 1, dt.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, m.trace);
    sqlite3_bind_int64(s, 3, m.device);
    if (sqlite3_step(s) == SQLITE_ROW) {
      // A figure is a peak only in (0, 10^6] TFLOP/s or TB/s (10^6 TFLOP/s is an exaFLOP/s, far
      // beyond any one GPU): gpu_spec is the user's to edit, and a saved database carries its
      // rows, so 0, a negative, 1e308 or text reads as no peak, not as a ridge at infinity.
      auto col = [&](int i) -> std::optional<double> {
        if (sqlite3_column_type(s, i) != SQLITE_INTEGER && sqlite3_column_type(s, i) != SQLITE_FLOAT)
          return std::nullopt;
        const double v = sqlite3_column_double(s, i);
        if (!(v > 0 && v <= 1e6)) return std::nullopt;
        return v;
      };
      // Vector work in a dtype the datasheet gives no vector figure for: the fp32 vector peak.
      out.first = m.matrix ? col(0) : (col(1) ? col(1) : col(3));
      out.second = col(2);
    }
    sqlite3_reset(s);  // no statement stays active between calls (it would block DETACH)
    return out;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* peaks_ = nullptr;
  std::map<std::tuple<uint16_t, bool, int64_t, int64_t>, std::pair<std::optional<double>, std::optional<double>>> seen_;
  ChangesSeen changes_;  // when seen_ was emptied
  const PerfTable* table_ = nullptr;
};

// The schema's Peaks: the connection's, kept while the schema holds what it did (`identity`),
// else one of the caller's in `own` (a connection that keeps no statements).
Peaks* schema_peaks(sqlite3* db, const std::string& schema, const SchemaIdentity& identity,
                    std::unique_ptr<Peaks>& own) {
  if (Peaks* p = connection_statements<Peaks>(db, "peaks:" + schema, identity,
                                              [&] { return std::make_unique<Peaks>(db, schema); }))
    return p;
  return (own = std::make_unique<Peaks>(db, schema)).get();
}

// The first row of a parent loop in the table (a database edited by hand), as cycle_at says it.
std::optional<std::string> loop_in(const PerfTable& t) {
  if (!t.loop_uid.empty())
    for (size_t r = 0; r < t.rows; ++r)
      if (t.flags[r] & PerfTable::looped) return cycle_at(t.loop_uid[r]);
  return std::nullopt;
}

enum class Fn {
  flops,
  bytes,
  tflops,
  tbps,
  intensity,
  peak_tflops,
  peak_tbps,
  achieved_pct,
  bound,
  perf,
  peak_dtype,
  peak_units
};
const char* const kFnNames[] = {"flops",     "bytes",        "tflops", "tbps", "intensity",  "peak_tflops",
                                "peak_tbps", "achieved_pct", "bound",  "perf", "peak_dtype", "peak_units"};

// Every number the perf functions give for one event.
struct Perf {
  std::optional<double> flops, bytes, tflops, tbps, intensity, peak_tflops, peak_tbps, achieved_pct;
  std::optional<std::string> bound;
};

// The event as a PerfSample (perf_sum.h): its finite figures, GPU time and, with `peaks`, the
// gpu_spec peaks of its GPU, dtype and units.
PerfSample sample(Peaks* peaks, const PerfTable* table, const Measured& m) {
  PerfSample s;
  auto finite = [](std::optional<double> v) { return v && std::isfinite(*v) ? v : std::nullopt; };
  s.flops = finite(m.flops), s.bytes = finite(m.bytes), s.gpu_ns = m.gpu_ns, s.matrix = m.matrix;
  if (peaks) std::tie(s.peak_tflops, s.peak_tbps) = peaks->get(m, table);
  return s;
}

// One event's figures: a group of one (perf_sum.h holds the definitions). Without `peaks`, no
// gpu_spec figures and nothing that follows from them (bound, achieved_pct).
Perf evaluate(Peaks* peaks, const PerfTable* table, const Measured& m) {
  PerfSum sum;
  sum.add(sample(peaks, table, m));
  const PerfFigures f = sum.figures();
  Perf p;
  p.flops = m.flops, p.bytes = m.bytes;
  p.tflops = f.tflops, p.tbps = f.tbps, p.intensity = f.intensity;
  if (!peaks) return p;
  p.peak_tflops = f.peak_tflops, p.peak_tbps = f.peak_tbps, p.achieved_pct = f.achieved_pct;
  if (f.bound) p.bound = f.bound;
  return p;
}

void result(sqlite3_context* ctx, std::optional<double> v) {
  if (v && std::isfinite(*v))
    sqlite3_result_double(ctx, *v);
  else
    sqlite3_result_null(ctx);
}

std::string perf_json(const Perf& p, const Measured& m, const PerfTable& t) {
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
  j["dtype"] = modeled ? nlohmann::json(peak_dtype(t, m)) : nullptr;
  j["units"] = modeled ? nlohmann::json(m.matrix ? "matrix" : "vector") : nullptr;
  return j.dump();
}

void perf_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Fn fn = static_cast<Fn>(reinterpret_cast<intptr_t>(function_data(ctx)));
  const char* name = kFnNames[(int)fn];
  int64_t uid, r;
  std::string schema;
  SchemaIdentity identity;
  std::shared_ptr<const PerfTable> table = perf_row(ctx, argc, argv, name, uid, r, &schema, &identity);
  if (!table) return;
  Measured m = measured(*table, r);
  Perf p;
  if (fn == Fn::peak_tflops || fn == Fn::peak_tbps || fn == Fn::achieved_pct || fn == Fn::bound || fn == Fn::perf) {
    sqlite3* db = sqlite3_context_db_handle(ctx);
    std::unique_ptr<Peaks> own;
    p = evaluate(schema_peaks(db, schema, identity, own), table.get(), m);
  } else {
    p = evaluate(nullptr, table.get(), m);
  }
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
      std::string j = perf_json(p, m, *table);
      return sqlite3_result_text(ctx, j.c_str(), -1, SQLITE_TRANSIENT);
    }
    // Which gpu_spec row the peaks come from (the roofline draws one ceiling per dtype and units).
    case Fn::peak_dtype:
    case Fn::peak_units: {
      if (!p.flops && !p.bytes) return sqlite3_result_null(ctx);  // no model: neither is known
      std::string v = fn == Fn::peak_dtype ? peak_dtype(*table, m) : m.matrix ? "matrix" : "vector";
      return sqlite3_result_text(ctx, v.c_str(), -1, SQLITE_TRANSIENT);
    }
  }
}

// perf_sum(uid [, schema]): aggregate, the perf figures of the group (perf_sum.h) as one JSON
// object: count, modeled, gpu_ns, modeled_ns, flops, bytes, tflops, tbps, intensity,
// peak_tflops, peak_tbps, achieved_pct, bound. The reports read their columns from it, so a
// kernel's, an op's and a shape's TFLOP/s mean one thing. NULL uids are skipped.
struct SumState {
  PerfSum sum;
  std::shared_ptr<const PerfTable> table;  // the schema's, looked up on the group's first row
  std::unique_ptr<Peaks> own;
  Peaks* peaks = nullptr;
};

void perf_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  auto** slot = static_cast<SumState**>(sqlite3_aggregate_context(ctx, sizeof(SumState*)));
  if (!slot) return sqlite3_result_error_nomem(ctx);
  if (!*slot) *slot = new SumState();
  SumState& st = **slot;
  int64_t uid, r;
  if (!st.table) {  // (one statement reads one table: the data cannot change under it)
    std::string schema;
    st.table = perf_row(ctx, argc, argv, "perf_sum", uid, r, &schema);
    if (!st.table) return;
    sqlite3* db = sqlite3_context_db_handle(ctx);
    st.peaks = schema_peaks(db, schema, schema_identity(db, schema), st.own);
  } else {
    if (!uid_arg(ctx, argv[0], "perf_sum", uid)) return;
    r = st.table->row(uid);
    if (r < 0) return sqlite3_result_error(ctx, fmt::format("perf_sum({}): no event has uid {}", uid, uid).c_str(), -1);
    if (st.table->flags[(size_t)r] & PerfTable::looped)
      return sqlite3_result_error(
          ctx, fmt::format("perf_sum({}): {}", uid, cycle_at(st.table->loop_uid[(size_t)r])).c_str(), -1);
  }
  st.sum.add(sample(st.peaks, st.table.get(), measured(*st.table, r)));
}

void perf_sum_final(sqlite3_context* ctx) {
  auto** slot = static_cast<SumState**>(sqlite3_aggregate_context(ctx, 0));
  const PerfFigures f = slot && *slot ? (*slot)->sum.figures() : PerfFigures{};
  if (slot) delete *slot, *slot = nullptr;
  nlohmann::json j = nlohmann::json::object();
  auto put = [&](const char* k, std::optional<double> v) {
    j[k] = v && std::isfinite(*v) ? nlohmann::json(*v) : nullptr;
  };
  j["count"] = f.count, j["modeled"] = f.modeled, j["gpu_ns"] = f.gpu_ns, j["modeled_ns"] = f.modeled_ns;
  put("flops", f.flops), put("bytes", f.bytes), put("tflops", f.tflops), put("tbps", f.tbps);
  put("intensity", f.intensity), put("peak_tflops", f.peak_tflops), put("peak_tbps", f.peak_tbps);
  put("achieved_pct", f.achieved_pct);
  j["bound"] = f.bound ? nlohmann::json(f.bound) : nullptr;
  const std::string text = j.dump();
  sqlite3_result_text(ctx, text.c_str(), (int)text.size(), SQLITE_TRANSIENT);
}

// gpu_time(uid): ns of GPU work at or below the event (the union of their intervals).
void gpu_time_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  int64_t uid, r;
  if (auto t = perf_row(ctx, argc, argv, "gpu_time", uid, r)) sqlite3_result_int64(ctx, t->gpu_ns[(size_t)r]);
}

// counted(uid): 1 when counted_op counts the op's GPU time (see perf_table.h), else 0.
void counted_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  int64_t uid, r;
  if (auto t = perf_row(ctx, argc, argv, "counted", uid, r))
    sqlite3_result_int(ctx, (t->flags[(size_t)r] & PerfTable::counted) ? 1 : 0);
}

// perf_source(uid): where the event's numbers come from (PerfTable flags): 'model' (its own
// model), 'launcher' (a GPU event: its op's), 'inductor' (kernel_flop / kernel_num_gb args),
// 'beneath' (the sum of the numbers below it); NULL when it has none.
const char* perf_source(const PerfTable& t, int64_t r) {
  if (!t.model_of(r)) return nullptr;
  const uint8_t f = t.flags[(size_t)r];
  return (f & PerfTable::inclusive)       ? "beneath"
         : (f & PerfTable::augmented)     ? "inductor"
         : (f & PerfTable::from_launcher) ? "launcher"
                                          : "model";
}

void perf_source_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  int64_t uid, r;
  auto t = perf_row(ctx, argc, argv, "perf_source", uid, r);
  if (!t) return;
  const char* source = perf_source(*t, r);
  if (!source) return sqlite3_result_null(ctx);
  sqlite3_result_text(ctx, source, -1, SQLITE_STATIC);
}

// perf_rows([schema]): the perf table itself, one row per event, for queries that read the numbers
// of many events (counted_op, op_summary): one schema lookup and one scan instead of a lookup per
// function call and row. The values are those of the per-uid functions of the same names.
enum PerfCol {
  kPUid,
  kPCounted,
  kPGpuNs,
  kPFlops,
  kPBytes,
  kPTflops,
  kPTbps,
  kPIntensity,
  kPPeakTflops,
  kPPeakTbps,
  kPAchievedPct,
  kPBound,
  kPSource,
  kPPeakDtype,
  kPPeakUnits,
  kPSchema,
  kPMarkerUid
};
enum PerfPlan { kPlanSchema = 1, kPlanCounted = 2, kPlanFlops = 4 };

struct PerfCursor : VtabCursor<ConnectionTable> {
  std::shared_ptr<const PerfTable> perf_rows;
  std::unique_ptr<Peaks> own_peaks;
  Peaks* peaks = nullptr;
  bool counted_only = false, flops_only = false;
  size_t at = 0;
  // Row `at`'s model (flops, bytes, dtype, units: read as they are, a filter on flops evaluates
  // nothing) and its figures, evaluated on the first column that needs them; `with_peaks` when the
  // gpu_spec figures are in (tflops alone need not look them up for every row).
  std::optional<Measured> m;
  std::optional<Perf> perf;
  bool with_peaks = false;
  std::vector<std::optional<std::string>> dtype_text;  // peak_dtype per index of the table's dtypes
  const Measured& row() {
    if (!m) m = measured(*perf_rows, (int64_t)at);
    return *m;
  }
  // A row whose flops column is not NULL: a model with a finite FLOPs figure (evaluate, result).
  bool has_flops(size_t r) const {
    const PerfTable::Model* x = perf_rows->model_of((int64_t)r);
    return x && x->has_flops && std::isfinite(x->flops);
  }
  void settle() {  // skip to the next row the plan keeps
    while (at < perf_rows->rows &&
           ((counted_only && !(perf_rows->flags[at] & PerfTable::counted)) || (flops_only && !has_flops(at))))
      ++at;
    perf.reset(), m.reset();
  }

  static std::string declaration() {
    return "CREATE TABLE x(uid INTEGER, counted INTEGER, gpu_ns INTEGER, flops REAL, bytes REAL, tflops REAL, tbps "
           "REAL, intensity REAL, peak_tflops REAL, peak_tbps REAL, achieved_pct REAL, bound TEXT, source TEXT, "
           "peak_dtype TEXT, peak_units TEXT, schema HIDDEN, marker_uid INTEGER HIDDEN)";
  }
  static int best_index(ConnectionTable&, sqlite3_index_info* info) {
    int plan = 0, arg = 0;
    for (int i = 0; i < info->nConstraint; ++i) {
      const auto& c = info->aConstraint[i];
      if (!c.usable || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
      if (c.iColumn == kPSchema && !(plan & kPlanSchema)) {
        plan |= kPlanSchema;
        info->aConstraintUsage[i].argvIndex = ++arg;
        info->aConstraintUsage[i].omit = 1;
      }
    }
    // counted = 1 (counted_op): the cursor skips the other rows. SQLite still checks the value.
    for (int i = 0; i < info->nConstraint; ++i) {
      const auto& c = info->aConstraint[i];
      if (c.usable && c.op == SQLITE_INDEX_CONSTRAINT_EQ && c.iColumn == kPCounted && !(plan & kPlanCounted)) {
        plan |= kPlanCounted;
        info->aConstraintUsage[i].argvIndex = ++arg;
      }
    }
    // flops IS NOT NULL (the rooflines): the cursor skips the rows without FLOPs. SQLite still checks.
    for (int i = 0; i < info->nConstraint; ++i) {
      const auto& c = info->aConstraint[i];
      if (c.usable && c.op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL && c.iColumn == kPFlops) plan |= kPlanFlops;
    }
    info->idxNum = plan;
    const bool fewer = plan & (kPlanCounted | kPlanFlops);
    info->estimatedCost = fewer ? 1e5 : 1e6;
    info->estimatedRows = fewer ? 100000 : 1000000;
    return SQLITE_OK;
  }
  int filter(int plan, int, sqlite3_value** argv) {
    sqlite3* db = table().db;
    int arg = 0;
    const std::string schema = schema_arg(db, (plan & kPlanSchema) ? argv[arg++] : nullptr);
    counted_only = false;
    flops_only = plan & kPlanFlops;
    if (plan & kPlanCounted) {
      sqlite3_value* v = argv[arg++];
      // counted = 1 keeps the counted rows; any other value (0, NULL, text) is left to SQLite's own check.
      counted_only = sqlite3_value_numeric_type(v) == SQLITE_INTEGER && sqlite3_value_int64(v) == 1;
    }
    std::string why;
    perf_rows = perf_table(db, schema, why);
    if (!perf_rows) return error("perf_rows: " + why);
    if (const std::optional<std::string> loop = loop_in(*perf_rows)) return error("perf_rows: " + *loop);
    peaks = schema_peaks(db, schema, schema_identity(db, schema), own_peaks);
    dtype_text.clear();  // (indexes of this table's dtypes)
    at = 0;
    settle();
    return SQLITE_OK;
  }
  bool eof() const { return at >= perf_rows->rows; }
  void next() {
    ++at;
    settle();
  }
  void column(sqlite3_context* ctx, int col) {
    const PerfTable& t = *perf_rows;
    const auto r = (int64_t)at;
    switch (col) {
      case kPUid: return sqlite3_result_int64(ctx, t.uid_of(at));
      case kPCounted: return sqlite3_result_int(ctx, (t.flags[at] & PerfTable::counted) ? 1 : 0);
      case kPGpuNs: return sqlite3_result_int64(ctx, t.gpu_ns[at]);
      case kPSource:
        if (const char* s = perf_source(t, r)) return sqlite3_result_text(ctx, s, -1, SQLITE_STATIC);
        return sqlite3_result_null(ctx);
      case kPSchema: return sqlite3_result_null(ctx);
      case kPMarkerUid:  // (hidden: marker(uid)'s event, read in the scan; the fx report skips rows without one)
        if (const uint32_t m = t.marker_of(at); m != PerfTable::kNone) return sqlite3_result_int64(ctx, t.uid_of(m));
        return sqlite3_result_null(ctx);
      default: break;
    }
    const Measured& x = row();
    switch (col) {
      case kPFlops: return result(ctx, x.flops);  // (evaluate's p.flops and p.bytes are these)
      case kPBytes: return result(ctx, x.bytes);
      case kPPeakDtype:
      case kPPeakUnits:
        if (!x.flops && !x.bytes) return sqlite3_result_null(ctx);  // no model: neither is known
        if (col == kPPeakUnits) return sqlite3_result_text(ctx, x.matrix ? "matrix" : "vector", -1, SQLITE_STATIC);
        if (dtype_text.size() <= x.dtype) dtype_text.resize((size_t)x.dtype + 1);
        if (!dtype_text[x.dtype]) dtype_text[x.dtype] = peak_dtype(t, x);
        return sqlite3_result_text(ctx, dtype_text[x.dtype]->c_str(), (int)dtype_text[x.dtype]->size(),
                                   SQLITE_TRANSIENT);
      default: break;
    }
    const bool need_peaks = col >= kPPeakTflops;
    if (!perf || (need_peaks && !with_peaks)) {
      perf = evaluate(need_peaks ? peaks : nullptr, &t, x);
      with_peaks = need_peaks;
    }
    const Perf& p = *perf;
    switch (col) {
      case kPTflops: result(ctx, p.tflops); break;
      case kPTbps: result(ctx, p.tbps); break;
      case kPIntensity: result(ctx, p.intensity); break;
      case kPPeakTflops: result(ctx, p.peak_tflops); break;
      case kPPeakTbps: result(ctx, p.peak_tbps); break;
      case kPAchievedPct: result(ctx, p.achieved_pct); break;
      case kPBound:
        if (p.bound)
          sqlite3_result_text(ctx, p.bound->c_str(), -1, SQLITE_TRANSIENT);
        else
          sqlite3_result_null(ctx);
        break;
      default: sqlite3_result_null(ctx);
    }
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

// step_flops([schema]): per (trace, step), what the mfu report reads of the counted ops
// (counted_op) in the step: the model FLOPs of the counted cpu_ops with FLOPs (flops), the
// gpu_spec dtype and units holding most of them (dtype, units: the most FLOPs, then the lower
// dtype and units by name), their FLOPs and peak TFLOP/s (dtype_flops, peak_tflops: the highest
// of their ops'), and the counted events' GPU ns and the part in events with FLOPs (gpu_ns,
// modeled_ns: perf_sum's). That is, over perf_rows p JOIN event o ON o.uid = p.uid WHERE
// p.counted = 1 AND o.step IS NOT NULL: GROUP BY trace, step, peak_dtype, peak_units of the
// cpu_ops with flops > 0, and perf_sum(uid) of the rows with gpu_ns > 0 GROUP BY trace, step.
// Over a loaded trace one pass over the perf table and the store (the GROUP BY sorted every
// modeled op's row: 0.11 s of the report's 0.4 s beyond a 200 MB trace's load); a saved database
// runs those statements.
struct StepFlops {
  struct Row {
    int64_t trace, step;
    std::optional<double> flops;
    std::optional<std::string> dtype, units;
    std::optional<double> dtype_flops, peak_tflops;
    std::optional<int64_t> gpu_ns, modeled_ns;
  };
  static constexpr TableArgument arguments[] = {{"arg_schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<StepFlops, Row>>({
        {"trace", "INTEGER", field<&Row::trace>},
        {"step", "INTEGER", field<&Row::step>},
        {"flops", "REAL", field<&Row::flops>},
        {"dtype", "TEXT", field<&Row::dtype>},
        {"units", "TEXT", field<&Row::units>},
        {"dtype_flops", "REAL", field<&Row::dtype_flops>},
        {"peak_tflops", "REAL", field<&Row::peak_tflops>},
        {"gpu_ns", "INTEGER", field<&Row::gpu_ns>},
        {"modeled_ns", "INTEGER", field<&Row::modeled_ns>},
    });
  }

  std::vector<Row> rows(const TableCall& call) {
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(0), own);
    if (!events.ok()) throw std::runtime_error(events.error());
    // Per (trace, step): per (dtype, units) the FLOPs and highest peak, in name order (the order
    // the grouping gave them, in which the step's total was summed), and the counted GPU time.
    struct Step {
      std::map<std::pair<std::string, std::string>, std::pair<double, std::optional<double>>> by_dtype;
      std::optional<PerfSum> cover;
    };
    std::map<std::pair<int64_t, int64_t>, Step> steps;
    std::string why;
    const std::shared_ptr<const PerfTable> t = perf_table(call.db, events.schema(), why);
    if (!t) throw std::runtime_error(why);
    if (const EventStore* s = events.store()) {
      if (const std::optional<std::string> loop = loop_in(*t)) throw std::runtime_error(*loop);  // (as perf_rows)
      std::unique_ptr<Peaks> own_peaks;
      Peaks* peaks = schema_peaks(call.db, events.schema(), schema_identity(call.db, events.schema()), own_peaks);
      for (size_t r = 0; r < t->rows; ++r) {
        if (!(t->flags[r] & PerfTable::counted)) continue;
        const int64_t pos = t->uid_of(r) - s->first_uid;
        if (pos < 0 || pos >= s->total_rows) continue;
        int64_t local;
        const LoadedTrace& trace = s->trace_at(pos, local);
        const EventRec& e = trace.rows[(size_t)local];
        if (e.step == EventRec::kNull32) continue;
        Step& st = steps[{trace.id, e.step}];
        const Measured m = measured(*t, (int64_t)r);
        if (m.gpu_ns > 0) {
          if (!st.cover) st.cover.emplace();
          st.cover->add(sample(nullptr, t.get(), m));
        }
        if (e.kind != Kind::cpu_op || !m.flops || !std::isfinite(*m.flops) || !(*m.flops > 0)) continue;
        auto& [flops, peak] = st.by_dtype[{peak_dtype(*t, m), m.matrix ? "matrix" : "vector"}];
        flops += *m.flops;
        if (const std::optional<double> p = evaluate(peaks, t.get(), m).peak_tflops; p && std::isfinite(*p))
          peak = peak ? std::max(*peak, *p) : *p;
      }
    } else {
      from_sql(events, *t, steps);
    }
    std::vector<Row> out;
    for (const auto& [key, st] : steps) {
      Row row{key.first, key.second, {}, {}, {}, {}, {}, {}, {}};
      auto top = st.by_dtype.end();
      for (auto g = st.by_dtype.begin(); g != st.by_dtype.end(); ++g) {
        row.flops = row.flops.value_or(0) + g->second.first;
        if (top == st.by_dtype.end() || g->second.first > top->second.first) top = g;  // (ties: the first by name)
      }
      if (top != st.by_dtype.end()) {
        row.dtype = top->first.first, row.units = top->first.second;
        row.dtype_flops = top->second.first, row.peak_tflops = top->second.second;
      }
      if (st.cover) {
        const PerfFigures f = st.cover->figures();
        row.gpu_ns = f.gpu_ns, row.modeled_ns = f.modeled_ns;
      }
      if (row.flops || row.gpu_ns) out.push_back(std::move(row));
    }
    return out;
  }

 private:
  template <class Steps>
  static void from_sql(EventSource& events, const PerfTable& t, Steps& steps) {
    const std::string& schema = events.schema();
    auto ops = events.statement(
        "SELECT o.trace, o.step, p.peak_dtype, p.peak_units, sum(p.flops), max(p.peak_tflops) "
        "FROM perf_rows(?1) p CROSS JOIN {s}.event o ON o.uid = p.uid "
        "WHERE p.counted = 1 AND o.kind = 'cpu_op' AND o.step IS NOT NULL AND p.flops > 0 "
        "GROUP BY o.trace, o.step, p.peak_dtype, p.peak_units");
    sqlite3_bind_text(ops->get(), 1, schema.c_str(), (int)schema.size(), SQLITE_TRANSIENT);
    while (ops->step()) {
      sqlite3_stmt* q = ops->get();
      auto text = [&](int c) {  // (never NULL where flops > 0; a NULL reads as "")
        const unsigned char* t = sqlite3_column_text(q, c);
        return t ? std::string((const char*)t) : std::string();
      };
      std::optional<double> peak;
      if (sqlite3_column_type(q, 5) != SQLITE_NULL) peak = sqlite3_column_double(q, 5);
      steps[{sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1)}].by_dtype[{text(2), text(3)}] = {
          sqlite3_column_double(q, 4), peak};
    }
    // (Each row's figures added to the step's sum one by one, as perf_sum adds them.)
    auto cover = events.statement(
        "SELECT o.trace, o.step, p.uid FROM perf_rows(?1) p CROSS JOIN {s}.event o ON o.uid = p.uid "
        "WHERE p.counted = 1 AND p.gpu_ns > 0 AND o.step IS NOT NULL");
    sqlite3_bind_text(cover->get(), 1, schema.c_str(), (int)schema.size(), SQLITE_TRANSIENT);
    while (cover->step()) {
      sqlite3_stmt* q = cover->get();
      const int64_t r = t.row(sqlite3_column_int64(q, 2));  // (perf_rows' own table: always found)
      if (r < 0) continue;
      auto& st = steps[{sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1)}];
      if (!st.cover) st.cover.emplace();
      st.cover->add(sample(nullptr, &t, measured(t, r)));
    }
  }
};

// The rule argument of gpu_class / gpu_class_of (NULL: tlsql's); false with the error set.
bool rule_arg(sqlite3_context* ctx, sqlite3_value* v, const char* fn, GpuRule& rule) {
  rule = GpuRule::tlsql;
  if (!v || sqlite3_value_type(v) == SQLITE_NULL) return true;
  const char* name = reinterpret_cast<const char*>(sqlite3_value_text(v));
  auto r = gpu_rule(name ? name : "");
  if (!r)
    sqlite3_result_error(
        ctx, fmt::format("{}: no rule '{}': 'tlsql', 'tracelens' or 'hta'", fn, name ? name : "").c_str(), -1);
  else
    rule = *r;
  return r.has_value();
}

void class_result(sqlite3_context* ctx, GpuClass c) {
  if (c == GpuClass::none) return sqlite3_result_null(ctx);
  sqlite3_result_text(ctx, gpu_class_name(c), -1, SQLITE_STATIC);
}

// gpu_class(uid [, rule [, schema]]): 'compute', 'communication', 'memcpy' or 'memset' for GPU
// work, NULL for other events; rule 'tlsql' (default), 'tracelens' or 'hta' (gpu_class.h): the
// schema's kernel rules, then what launched the kernel (gpu_class_schema.h).
void gpu_class_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  GpuRule rule;
  if (!rule_arg(ctx, argc > 1 ? argv[1] : nullptr, "gpu_class", rule)) return;
  int64_t uid;
  if (!uid_arg(ctx, argv[0], "gpu_class", uid)) return;
  sqlite3_value* schema = argc > 2 ? argv[2] : nullptr;
  std::unique_ptr<SchemaGpuClasses> own;
  std::unique_ptr<TreeAccess> own_tree;
  TreeAccess* tree = nullptr;
  SchemaGpuClasses& classes = gpu_classes_arg(ctx, schema, own, &tree, &own_tree);
  if (!tree->ok()) throw SqlError(tree->error());
  auto c = classes.of_event(*tree, uid, rule);
  if (!c) throw FunctionError(fmt::format("no event has uid {}", uid));
  class_result(ctx, *c);
}

// gpu_class_of(kind, name [, rule [, schema]]): the class an event of that kind and name gets by
// the schema's kernel rules alone (what launched it aside: gpu_class(uid) says that too).
void gpu_class_of_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  GpuRule rule;
  if (!rule_arg(ctx, argc > 2 ? argv[2] : nullptr, "gpu_class_of", rule)) return;
  const unsigned char* k = sqlite3_value_text(argv[0]);
  const unsigned char* n = sqlite3_value_text(argv[1]);
  if (!k || !n) return sqlite3_result_null(ctx);
  const Kind kind = kind_from_name(reinterpret_cast<const char*>(k));
  if (!is_gpu_work(kind)) return sqlite3_result_null(ctx);
  std::unique_ptr<SchemaGpuClasses> own;
  const std::string_view name(reinterpret_cast<const char*>(n), (size_t)sqlite3_value_bytes(argv[1]));
  class_result(ctx, gpu_classes_arg(ctx, argc > 3 ? argv[3] : nullptr, own).of_name(kind, name, rule));
}

// kernel_rule_of(name [, schema]): the pattern of the kernel rule that classes a kernel of that
// name, NULL when none does (then what launched it decides).
void kernel_rule_of_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  std::unique_ptr<SchemaGpuClasses> own;
  const std::string_view name(reinterpret_cast<const char*>(n), (size_t)sqlite3_value_bytes(argv[0]));
  const KernelRule* r = gpu_classes_arg(ctx, argc > 1 ? argv[1] : nullptr, own).rule_for(name);
  if (!r) return sqlite3_result_null(ctx);
  const std::string& v = function_data(ctx) ? r->subclass : r->pattern;
  if (v.empty()) return sqlite3_result_null(ctx);
  sqlite3_result_text(ctx, v.c_str(), (int)v.size(), SQLITE_TRANSIENT);
}

// perf_tables(schema, ...): makes the perf tables of the schemas named (the ones every perf
// function of that schema reads) at once (PerfTablesAtOnce), where each would otherwise be made
// when a query first reads it, one after the other: a diff report reads both sides'
// (sql/report_diff_kernels.sql). Returns how many tables are ready.
void perf_tables_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  sqlite3* db = sqlite3_context_db_handle(ctx);
  std::vector<std::string> schemas;
  for (int i = 0; i < argc; ++i) {
    std::string s = schema_arg(db, argv[i]);
    if (std::find(schemas.begin(), schemas.end(), s) == schemas.end()) schemas.push_back(std::move(s));
  }
  PerfTablesAtOnce at_once(db, schemas);
  std::vector<std::string> errors;
  const std::vector<std::shared_ptr<const PerfTable>> tables = at_once.get(errors);
  for (size_t k = 0; k < tables.size(); ++k)
    if (!tables[k]) throw FunctionError("perf_tables: " + errors[k]);
  sqlite3_result_int64(ctx, (int64_t)tables.size());
}

// has_perf_model(name) / op_category(name): the connection's user models (user_models.h) first.
void has_perf_model_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* name = sqlite3_value_text(argv[0]);
  if (!name) return sqlite3_result_null(ctx);
  auto user = user_models(sqlite3_context_db_handle(ctx));
  sqlite3_result_int(ctx, has_perf_model(user.get(), reinterpret_cast<const char*>(name)) ? 1 : 0);
}

// model_gap(name, args): why an op of that name with those args has no model (perf_model.h's
// model_gap: 'Input Dims missing', 'Concrete Inputs missing'), else NULL; NULL for a name the
// connection's perf_model_user rows model (their formulas read what they read).
void model_gap_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* name = sqlite3_value_text(argv[0]);
  const unsigned char* args = sqlite3_value_text(argv[1]);
  if (!name) return sqlite3_result_null(ctx);
  const std::string_view n(reinterpret_cast<const char*>(name), (size_t)sqlite3_value_bytes(argv[0]));
  auto user = user_models(sqlite3_context_db_handle(ctx));
  if (user && user->find(n)) return sqlite3_result_null(ctx);
  const char* gap =
      model_gap(n, args ? std::string_view(reinterpret_cast<const char*>(args), (size_t)sqlite3_value_bytes(argv[1]))
                        : std::string_view());
  if (!gap) return sqlite3_result_null(ctx);
  sqlite3_result_text(ctx, gap, -1, SQLITE_STATIC);
}

// marker(uid) / marker_path(uid): the nearest "## ... ##" event above, and all of them,
// outermost first, joined by " > ".
void marker_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const bool path = function_data(ctx) != nullptr;
  int64_t uid, r;
  std::string schema;
  SchemaIdentity id;
  auto t = perf_row(ctx, argc, argv, path ? "marker_path" : "marker", uid, r, &schema, &id);
  if (!t) return;
  std::vector<int64_t> chain;
  for (uint32_t m = t->marker_of((size_t)r); m != PerfTable::kNone && (path || chain.empty()); m = t->marker_of(m))
    chain.push_back(t->uid_of(m));
  if (chain.empty()) return sqlite3_result_null(ctx);
  // The names live in the event table: read them from there (markers are few per op).
  sqlite3* db = sqlite3_context_db_handle(ctx);
  std::unique_ptr<TreeAccess> own;
  TreeAccess* tree = tree_for(db, schema, own, &id);  // (id: this call's, from perf_row)
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    if (auto e = tree->ok() ? tree->event(*it) : std::nullopt) {  // (a view: no copy of the row's texts)
      if (!out.empty()) out += " > ";
      out += e->name;
    }
  sqlite3_result_text(ctx, out.c_str(), -1, SQLITE_TRANSIENT);
}

// trace_stats(trace [, schema]): the summary's per-trace figures as JSON (perf_table.h TraceStats):
// events per kind (most first; ties by name, descending), span_start / span_end (ns), steps,
// first_step, last_step; null where the trace has no such events.
void trace_stats_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  sqlite3* db = sqlite3_context_db_handle(ctx);
  std::string error;
  auto t = perf_table(db, schema_arg(db, argc > 1 ? argv[1] : nullptr), error);
  if (!t) return sqlite3_result_error(ctx, fmt::format("trace_stats: {}", error).c_str(), -1);
  auto it = t->traces.find(sqlite3_value_int64(argv[0]));
  std::string events = "null", start = "null", end = "null", steps = "null", first = "null", last = "null";
  if (it != t->traces.end()) {
    const TraceStats& st = it->second;
    std::vector<std::pair<int64_t, std::string_view>> kinds;
    for (size_t k = 0; k < st.kinds.size(); ++k)
      if (st.kinds[k]) kinds.emplace_back(st.kinds[k], kind_name((Kind)k));
    std::sort(kinds.begin(), kinds.end(),
              [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second > b.second; });
    std::vector<std::string> members;
    for (auto& [n, k] : kinds) members.push_back(fmt::format("\"{}\":{}", k, n));
    events = fmt::format("{{{}}}", fmt::join(members, ","));
    if (st.timed) {
      start = std::to_string(st.first_start);
      if (st.last_end) end = std::to_string(*st.last_end);
      steps = std::to_string(st.steps.size());
      if (!st.steps.empty()) first = std::to_string(*st.steps.begin()), last = std::to_string(*st.steps.rbegin());
    }
  }
  std::string j =
      fmt::format(R"({{"events":{},"span_start":{},"span_end":{},"steps":{},"first_step":{},"last_step":{}}})", events,
                  start, end, steps, first, last);
  sqlite3_result_text(ctx, j.c_str(), -1, SQLITE_TRANSIENT);
}

void op_category_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  const std::string_view name(reinterpret_cast<const char*>(n), (size_t)sqlite3_value_bytes(argv[0]));
  auto user = user_models(sqlite3_context_db_handle(ctx));
  if (!user) return sqlite3_result_text(ctx, op_category(name), -1, SQLITE_STATIC);
  const std::string c = op_category(user.get(), name);
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
  auto j = args::parse_bounded((const char*)t);  // (dims from a file's event)
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

std::vector<SqlFunction> perf_functions() {
  static const char* const help[] = {
      "FLOPs of the op (its model, inductor's kernel_flop, or the sum of the modeled work beneath it); NULL if none",
      "bytes the op moves to and from memory; NULL if none",
      "flops / gpu_time, TFLOP/s",
      "bytes / gpu_time, TB/s",
      "flops / bytes (FLOPs per byte)",
      "gpu_spec peak for the trace's GPU and the op's dtype (matrix or vector units)",
      "gpu_spec memory bandwidth of the trace's GPU, TB/s",
      "% of the peak of the resource that bounds the op (see bound)",
      "'compute' or 'memory': which side of the roofline ridge the op sits",
      "all of the above and gpu_ns, peak_dtype, peak_units as one JSON object (one evaluation)",
      "the gpu_spec dtype the op's peaks are read for (bf16, fp32, ...); NULL without a model",
      "'matrix' or 'vector': the units the op's peak TFLOP/s is read for; NULL without a model"};
  std::vector<SqlFunction> v;
  auto per_uid = [&](const char* name, const char* help, void (*fn)(sqlite3_context*, int, sqlite3_value**),
                     void* data) {
    SqlFunction f{name, "(uid [, schema])", help};
    f.max_args = 2, f.fn = fn, f.user_data = data;
    v.push_back(f);
  };
  for (int f = 0; f <= (int)Fn::peak_units; ++f)
    per_uid(kFnNames[f], help[f], perf_fn, reinterpret_cast<void*>(static_cast<intptr_t>(f)));
  per_uid("gpu_time", "ns the GPU was busy with the GPU work at or below uid: union of their intervals", gpu_time_fn,
          nullptr);
  per_uid("counted",
          "1 if counted_op counts the op (modeled or launching, no modeled or counted op above) or runtime call "
          "(launching, no op above), else 0",
          counted_fn, nullptr);
  per_uid("perf_source",
          "where flops / bytes come from: 'model', 'launcher' (a kernel: its op's), 'inductor', 'beneath' (sum of "
          "the numbers below: wrappers, python frames, annotations); NULL if none",
          perf_source_fn, nullptr);
  SqlFunction sum{"perf_sum", "(uid [, schema])",
                  "aggregate: the group's perf figures as JSON: count, modeled (events with FLOPs), gpu_ns, "
                  "modeled_ns, flops, bytes, tflops and tbps (sums over the GPU time of the events that have them), "
                  "intensity, peak_tflops, peak_tbps, achieved_pct, bound",
                  SqlFunction::aggregate};
  sum.max_args = 2, sum.fn = perf_sum_step, sum.final = perf_sum_final;
  v.push_back(sum);
  SqlFunction cls{"gpu_class", "(uid [, rule [, schema]])",
                  "'compute', 'communication', 'memcpy' or 'memset' for GPU work (NULL otherwise): the kernel_rule "
                  "table, then what launched it; rule 'tlsql' (default), 'tracelens' (memsets are computation) or "
                  "'hta' (communication = kernels named nccl)"};
  cls.max_args = 3, cls.fn = gpu_class_fn;
  v.push_back(cls);
  SqlFunction tables{"perf_tables", "(schema, ...)",
                     "makes the perf tables of the schemas named at once (a loaded trace's on a thread of its own), "
                     "not one after the other when a query first reads each: returns how many are ready"};
  tables.max_args = 8, tables.fn = perf_tables_fn;
  tables.flags = SQLITE_UTF8;  // (not innocuous: it starts threads; a view in a file cannot call it)
  v.push_back(tables);
  SqlFunction rows{
      "perf_rows", "([schema])",
      "table: every event's uid, counted, gpu_ns, flops, bytes, tflops, tbps, intensity, peak_tflops, "
      "peak_tbps, achieved_pct, bound, source, peak_dtype, peak_units (the per-uid functions' values, in one scan)"};
  rows.kind = SqlFunction::table, rows.module = vtab_module<PerfCursor>();
  v.push_back(rows);
  v.push_back(table_function<StepFlops>(
      "step_flops",
      "table: per (trace, step), the counted ops' model FLOPs, the dtype and units holding most (their FLOPs and "
      "peak TFLOP/s), and the counted GPU ns and the part with FLOPs: what the mfu report reads"));
  SqlFunction changed{"tlsql_perf_models_changed", "()",
                      "internal: perf_model_user's triggers call it to check and publish the user's perf models"};
  changed.min_args = changed.max_args = 0, changed.fn = perf_models_changed_fn;
  changed.flags = SQLITE_UTF8;  // not innocuous: it changes what the perf functions return
  v.push_back(changed);
  per_uid("marker", "name of the nearest \"## ... ##\" event above uid (FX node / record_function marker)", marker_fn,
          nullptr);
  per_uid("marker_path", "the \"## ... ##\" events above uid, outermost first, joined by ' > '", marker_fn,
          reinterpret_cast<void*>(1));
  SqlFunction stats{"trace_stats", "(trace [, schema])",
                    "JSON: the trace's events per kind, span_start / span_end (ns), steps, first_step, last_step"};
  stats.max_args = 2, stats.fn = trace_stats_fn;
  v.push_back(stats);
  auto pure = [&](const char* name, const char* args, const char* help,
                  void (*fn)(sqlite3_context*, int, sqlite3_value**)) {
    SqlFunction f{name, args, help};
    f.flags |= SQLITE_DETERMINISTIC, f.fn = fn;
    v.push_back(f);
  };
  // (Not deterministic: the connection's perf_model_user rows come first.)
  auto by_name = [&](const char* name, const char* help, void (*fn)(sqlite3_context*, int, sqlite3_value**)) {
    SqlFunction f{name, "(name)", help};
    f.fn = fn;
    v.push_back(f);
  };
  by_name("op_category",
          "GEMM, CONV_fwd, CONV_bwd, SDPA_fwd, SDPA_bwd, NORM_fwd, NORM_bwd, elementwise, reduce, comm, memcpy, "
          "other, or a perf_model_user row's category",
          op_category_fn);
  by_name("has_perf_model", "1 if tlsql (or perf_model_user) has a FLOPs / bytes model for ops of that name, else 0",
          has_perf_model_fn);
  SqlFunction gap{"model_gap", "(name, args)",
                  "why an op with that name and args JSON has no perf model: 'Input Dims missing', 'Concrete Inputs "
                  "missing' (a convolution's stride / padding); NULL when it has one or the reason is another"};
  gap.min_args = gap.max_args = 2, gap.fn = model_gap_fn;
  v.push_back(gap);
  SqlFunction cls_of{"gpu_class_of", "(kind, name [, rule [, schema]])",
                     "gpu_class from an event's kind and name by the kernel_rule table alone"};
  cls_of.min_args = 2, cls_of.max_args = 4, cls_of.fn = gpu_class_of_fn;
  v.push_back(cls_of);
  SqlFunction rule_of{"kernel_rule_of", "(name [, schema])",
                      "the kernel_rule pattern that classes a kernel of that name; NULL when none does"};
  rule_of.min_args = 1, rule_of.max_args = 2, rule_of.fn = kernel_rule_of_fn;
  v.push_back(rule_of);
  SqlFunction subclass{"kernel_subclass", "(name [, schema])",
                       "the subclass (all_to_all, all_reduce, gemm, attention, ...) of the kernel_rule that classes a "
                       "kernel of that name; NULL when none does or it names none"};
  subclass.min_args = 1, subclass.max_args = 2, subclass.fn = kernel_rule_of_fn;
  subclass.user_data = reinterpret_cast<void*>(1);
  v.push_back(subclass);
  pure("dtype_bytes", "(type)", "bytes per element of a trace dtype ('c10::BFloat16' -> 2)", dtype_bytes_fn);
  pure("numel", "(dims_json)", "elements of a shape ('[2, 3]' -> 6)", numel_fn);
  return v;
}
TLSQL_FUNCTIONS(perf_functions, install_user_models);

}  // namespace tlsql
