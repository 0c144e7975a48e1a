// The engine steps (engine_steps.h) as SQL: engine_steps, engine_step_members,
// engine_step_launched and engine_loop_events, the tables under the engine_step views and the
// steps report. The rows are read from the loaded store (no SQL per row) or a saved database's
// event table, once per schema and connection while it holds the same data.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/event_table.h"
#include "src/kind.h"
#include "src/sqlite_util.h"
#include "udf/analysis/engine_steps.h"
#include "udf/connection_cache.h"
#include "udf/registry.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

namespace {

// launch_link as (gpu uid, runtime uid). Throws SqlError.
std::vector<std::pair<int64_t, int64_t>> read_links(EventSource& events) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (auto [runtime, gpu] : events.launch_links()) out.emplace_back(gpu, runtime);
  return out;
}

// The loaded store, read in place: row i is the store's traces' rows one after the other.
class StoreRows : public StepInput {
 public:
  StoreRows(const EventStore& s, const std::vector<std::pair<int64_t, int64_t>>& links) : s_(s) {
    size_t start = 0;
    for (const auto& t : s.traces) starts_.push_back(start), start += t->rows.size();
    n_ = start;
    memo_.assign(s.strings.size() + 1, -1);
    for (auto [gpu, runtime] : links)
      if (const int64_t g = index(gpu), r = index(runtime); g >= 0 && r >= 0) links_.emplace_back(g, r);
    std::sort(links_.begin(), links_.end());
  }
  size_t size() const override { return n_; }
  int64_t uid(size_t i) const override {
    const size_t t = trace_of(i);
    return s_.traces[t]->uid_base + (int64_t)(i - starts_[t]);
  }
  int64_t parent(size_t i) const override {
    const size_t t = trace_of(i);
    const int32_t p = s_.traces[t]->rows[i - starts_[t]].parent;
    return p < 0 ? -1 : (int64_t)(starts_[t] + (size_t)p);
  }
  int64_t trace(size_t i) const override { return s_.traces[trace_of(i)]->id; }
  Kind kind(size_t i) const override { return rec(i).kind; }
  int64_t ts(size_t i) const override { return rec(i).ts; }
  int64_t end(size_t i) const override { return rec(i).end(); }
  int64_t step(size_t i) const override {
    const int32_t st = rec(i).step;
    return st == EventRec::kNull32 ? kNull : st;
  }
  ThreadKey thread(size_t i) const override {
    const EventRec& e = rec(i);
    return {e.pid.v, e.tid.v, (uint8_t)((e.is(EventRec::pid_text) ? 1 : 0) | (e.is(EventRec::tid_text) ? 2 : 0))};
  }
  const StepName& name(size_t i) const override {
    const uint32_t id = rec(i).name;
    const size_t slot = id == StringPool::kNone ? s_.strings.size() : id;
    if (memo_[slot] < 0) {
      memo_[slot] = (int32_t)names_.size();
      names_.emplace_back(id == StringPool::kNone ? std::string_view() : s_.strings.get(id));
    }
    return names_[(size_t)memo_[slot]];
  }
  int64_t launch(size_t i) const override {
    auto it = std::lower_bound(links_.begin(), links_.end(), std::pair<int64_t, int64_t>((int64_t)i, INT64_MIN));
    return it != links_.end() && it->first == (int64_t)i ? it->second : -1;
  }

 private:
  // The trace holding row i (the last one asked first: rows are mostly read in order).
  size_t trace_of(size_t i) const {
    if (i >= starts_[last_] && i - starts_[last_] < s_.traces[last_]->rows.size()) return last_;
    last_ = (size_t)(std::upper_bound(starts_.begin(), starts_.end(), i) - starts_.begin()) - 1;
    return last_;
  }
  const EventRec& rec(size_t i) const {
    const size_t t = trace_of(i);
    return s_.traces[t]->rows[i - starts_[t]];
  }
  // The row of uid, or -1.
  int64_t index(int64_t uid) const {
    for (size_t t = 0; t < s_.traces.size(); ++t) {
      const LoadedTrace& tr = *s_.traces[t];
      if (uid >= tr.uid_base && uid - tr.uid_base < (int64_t)tr.rows.size())
        return (int64_t)starts_[t] + (uid - tr.uid_base);
    }
    return -1;
  }

  const EventStore& s_;
  std::vector<size_t> starts_;
  size_t n_ = 0;
  mutable size_t last_ = 0;
  mutable std::vector<int32_t> memo_;               // per pool id (kNone last): index in names_, -1 not yet
  mutable std::deque<StepName> names_;              // (a deque: references stay valid as it grows)
  std::vector<std::pair<int64_t, int64_t>> links_;  // (gpu row, runtime row), by gpu row
};

// A saved database's event table (names only of the kinds the steps read), and its launch_link,
// through the EventSource's statement (its typed scan has no thread or step: a copy either way).
// Throws SqlError.
std::unique_ptr<StepRows> read_saved(EventSource& events) {
  auto rows = std::make_unique<StepRows>();
  auto q = events.statement(
      "SELECT uid, parent, trace, kind, CASE WHEN kind IN ('annotation', 'python', 'runtime', 'driver') OR name "
      "GLOB 'ProfilerStep#*' THEN name END, ts, end, step, pid, tid FROM {s}.event ORDER BY uid");
  sqlite3_stmt* r = q->get();
  std::map<std::string, int64_t> texts;  // pid / tid texts, numbered
  auto id = [&](int c, uint8_t text_bit, uint8_t& text) -> int64_t {
    switch (sqlite3_column_type(r, c)) {
      case SQLITE_NULL: return kNull;
      case SQLITE_INTEGER: return sqlite3_column_int64(r, c);
      default:
        text |= text_bit;
        return texts.try_emplace((const char*)sqlite3_column_text(r, c), (int64_t)texts.size()).first->second;
    }
  };
  auto integer = [&](int c) { return sqlite3_column_type(r, c) == SQLITE_NULL ? kNull : sqlite3_column_int64(r, c); };
  std::vector<int64_t> parent_uid;
  while (q->step()) {
    ThreadKey t;
    t.pid = id(8, 1, t.text), t.tid = id(9, 2, t.text);
    const unsigned char* name = sqlite3_column_text(r, 4);
    parent_uid.push_back(integer(1));
    rows->add(sqlite3_column_int64(r, 0), -1, sqlite3_column_int64(r, 2),
              kind_from_name((const char*)sqlite3_column_text(r, 3)), name ? (const char*)name : "", integer(5),
              integer(6), t, integer(7));
  }
  auto index = [&](int64_t uid) -> int64_t {  // rows are in uid order
    size_t lo = 0, hi = rows->size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (rows->uid(mid) < uid)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < rows->size() && rows->uid(lo) == uid ? (int64_t)lo : -1;
  };
  for (size_t i = 0; i < parent_uid.size(); ++i)
    if (parent_uid[i] != kNull) rows->set_parent(i, index(parent_uid[i]));
  for (auto [gpu, runtime] : read_links(events))
    if (const int64_t g = index(gpu), k = index(runtime); g >= 0 && k >= 0) rows->link((size_t)g, k);
  return rows;
}

// The rows of `schema`, from its EventSource: the loaded store read in place (StoreRows: through
// the typed scan it would be a copy of every row), or the saved table copied (read_saved).
std::unique_ptr<StepInput> rows_of(sqlite3* db, const std::string& schema) {
  std::unique_ptr<EventSource> own;
  EventSource* events = tree_for(db, schema, own);
  if (!events->ok()) throw SqlError(events->error());
  if (const EventStore* s = events->store()) return std::make_unique<StoreRows>(*s, read_links(*events));
  return read_saved(*events);
}

// Row -> uid, as runs of consecutive uids (one per trace for a loaded store).
struct Uids {
  std::vector<std::pair<size_t, int64_t>> runs;  // (first row, its uid)
  explicit Uids(const StepInput& rows) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t u = rows.uid(i);
      if (runs.empty() || u != runs.back().second + (int64_t)(i - runs.back().first)) runs.emplace_back(i, u);
    }
  }
  int64_t operator()(size_t row) const {
    auto it = std::upper_bound(runs.begin(), runs.end(), std::pair<size_t, int64_t>(row, INT64_MAX));
    --it;
    return it->second + (int64_t)(row - it->first);
  }
};

struct Steps {
  EngineSteps found;
  Uids uids;
  explicit Steps(const StepInput& rows) : found(find_engine_steps(rows)), uids(rows) {}
};

// The steps of `schema`: the connection's cached ones while the schema holds the same data (a
// saved database's data version included: a change by any connection), else made into `own`.
// Throws SqlError / std::runtime_error.
const Steps& steps_for(sqlite3* db, const std::string& schema, std::unique_ptr<Steps>& own) {
  const unsigned int version = data_version(db, schema.c_str());
  std::string error;
  auto make = [&]() -> std::unique_ptr<Steps> {
    try {
      return std::make_unique<Steps>(*rows_of(db, schema));
    } catch (const std::exception& e) {
      error = e.what();
      return nullptr;
    }
  };
  const Steps* s = connection_cached<Steps>(db, fmt::format("engine_steps:{}:{}", schema, version),
                                            schema_identity(db, schema), make);
  if (!s && error.empty()) s = (own = make()).get();
  if (!s) throw std::runtime_error(error);
  if (!s->found.error.empty()) throw std::runtime_error(s->found.error);
  return *s;
}

void result_int(sqlite3_context* ctx, int64_t v) {
  v == kNull ? sqlite3_result_null(ctx) : sqlite3_result_int64(ctx, v);
}
void result_opt(sqlite3_context* ctx, const std::optional<int64_t>& v) {
  v ? sqlite3_result_int64(ctx, *v) : sqlite3_result_null(ctx);
}
void result_text(sqlite3_context* ctx, const char* v) {
  v ? sqlite3_result_text(ctx, v, -1, SQLITE_STATIC) : sqlite3_result_null(ctx);
}

// What the four tables share: the one optional argument, schema (the last column, hidden).
template <class Derived>
struct StepsCursor : VtabCursor<ConnectionTable> {
  std::unique_ptr<Steps> own;
  const Steps* steps = nullptr;
  size_t at = 0;
  static int best_index(ConnectionTable&, sqlite3_index_info* info) {
    const int rc = hidden_args_best_index(info, Derived::kSchemaColumn, 1);
    info->estimatedCost = 1e5;  // (with or without the schema: the one plan)
    return rc;
  }
  int filter(int plan, int, sqlite3_value** argv) {
    sqlite3* db = table().db;
    const std::string schema = schema_arg(db, (plan & 1) ? argv[0] : nullptr);
    at = 0;
    try {
      return static_cast<Derived*>(this)->start(db, schema);
    } catch (const std::exception& e) {
      return error(fmt::format("{}: {}", Derived::kName, e.what()));
    }
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

// engine_steps([schema]): one row per step.
enum StepCol {
  kTrace,
  kIteration,
  kUid,
  kTs,
  kEnd,
  kDur,
  kSource,
  kTokens,
  kPrefill,
  kDecode,
  kPhase,
  kGpuBusy,
  kGpuStart,
  kGpuEnd,
  kKernels,
  kGraphReplays,
  kStepSchema
};
struct StepCursor : StepsCursor<StepCursor> {
  static constexpr int kSchemaColumn = kStepSchema;
  static constexpr const char* kName = "engine_steps";
  static std::string declaration() {
    return "CREATE TABLE x(trace INTEGER, iteration INTEGER, uid INTEGER, ts INTEGER, end INTEGER, dur INTEGER, "
           "source TEXT, tokens INTEGER, prefill_requests INTEGER, decode_requests INTEGER, phase TEXT, gpu_busy "
           "INTEGER, gpu_start INTEGER, gpu_end INTEGER, kernels INTEGER, graph_replays INTEGER, schema HIDDEN)";
  }
  int start(sqlite3* db, const std::string& schema) {
    steps = &steps_for(db, schema, own);
    return SQLITE_OK;
  }
  bool eof() const { return at >= steps->found.steps.size(); }
  void next() { ++at; }
  void column(sqlite3_context* ctx, int col) const {
    const EngineStep& s = steps->found.steps[at];
    switch (col) {
      case kTrace: sqlite3_result_int64(ctx, s.trace); break;
      case kIteration: sqlite3_result_int64(ctx, s.iteration); break;
      case kUid: sqlite3_result_int64(ctx, s.uid); break;
      case kTs: result_int(ctx, s.ts); break;
      case kEnd: result_int(ctx, s.end); break;
      case kDur: result_int(ctx, s.ts == kNull || s.end == kNull ? kNull : sat_sub(s.end, s.ts)); break;
      case kSource: result_text(ctx, source_name(s.source)); break;
      case kTokens: result_opt(ctx, s.tokens); break;
      case kPrefill: result_opt(ctx, s.prefill); break;
      case kDecode: result_opt(ctx, s.decode); break;
      case kPhase: result_text(ctx, s.phase); break;
      case kGpuBusy: sqlite3_result_int64(ctx, s.gpu_busy); break;
      case kGpuStart: result_int(ctx, s.gpu_start); break;
      case kGpuEnd: result_int(ctx, s.gpu_end); break;
      case kKernels: sqlite3_result_int64(ctx, s.kernels); break;
      case kGraphReplays: sqlite3_result_int64(ctx, s.graph_replays); break;
      default: sqlite3_result_null(ctx);
    }
  }
};

// engine_step_members / engine_step_launched ([schema]): (trace, iteration, phase, uid) per member
// / piece of GPU work of a serving step.
enum MemberCol { kMTrace, kMIteration, kMPhase, kMUid, kMSchema };
template <bool kGpu>
struct MemberCursor : StepsCursor<MemberCursor<kGpu>> {
  static constexpr int kSchemaColumn = kMSchema;
  static constexpr const char* kName = kGpu ? "engine_step_launched" : "engine_step_members";
  static std::string declaration() {
    return fmt::format("CREATE TABLE x(trace INTEGER, iteration INTEGER, phase TEXT, {} INTEGER, schema HIDDEN)",
                       kGpu ? "gpu" : "uid");
  }
  size_t size() const { return kGpu ? this->steps->found.gpu.size() : this->steps->found.member.size(); }
  int32_t step_at() const {
    return kGpu ? this->steps->found.gpu[this->at].second : this->steps->found.member[this->at];
  }
  void settle() {
    if (!kGpu)
      while (this->at < size() && step_at() < 0) ++this->at;
  }
  int start(sqlite3* db, const std::string& schema) {
    this->steps = &steps_for(db, schema, this->own);
    settle();
    return SQLITE_OK;
  }
  bool eof() const { return this->at >= size(); }
  void next() {
    ++this->at;
    settle();
  }
  void column(sqlite3_context* ctx, int col) const {
    const EngineStep& s = this->steps->found.steps[(size_t)step_at()];
    switch (col) {
      case kMTrace: sqlite3_result_int64(ctx, s.trace); break;
      case kMIteration: sqlite3_result_int64(ctx, s.iteration); break;
      case kMPhase: result_text(ctx, s.phase); break;
      case kMUid:
        sqlite3_result_int64(ctx, this->steps->uids(kGpu ? this->steps->found.gpu[this->at].first : this->at));
        break;
      default: sqlite3_result_null(ctx);
    }
  }
};

// engine_loop_events([schema]): the host-loop numbering of every thread that launches graphs.
enum LoopCol { kLUid, kLWait, kLK, kLStep, kLSchema };
struct LoopCursor : StepsCursor<LoopCursor> {
  static constexpr int kSchemaColumn = kLSchema;
  static constexpr const char* kName = "engine_loop_events";
  std::vector<LoopRow> rows;
  std::unique_ptr<Uids> uids;
  static std::string declaration() {
    return "CREATE TABLE x(uid INTEGER, wait INTEGER, k INTEGER, step INTEGER, schema HIDDEN)";
  }
  int start(sqlite3* db, const std::string& schema) {
    const std::unique_ptr<StepInput> in = rows_of(db, schema);
    rows = loop_rows(*in);
    uids = std::make_unique<Uids>(*in);
    return SQLITE_OK;
  }
  bool eof() const { return at >= rows.size(); }
  void next() { ++at; }
  void column(sqlite3_context* ctx, int col) const {
    const LoopRow& l = rows[at];
    switch (col) {
      case kLUid: sqlite3_result_int64(ctx, (*uids)(l.row)); break;
      case kLWait: sqlite3_result_int(ctx, l.wait ? 1 : 0); break;
      case kLK: sqlite3_result_int64(ctx, l.k); break;
      case kLStep: l.step < 0 ? sqlite3_result_null(ctx) : sqlite3_result_int64(ctx, (*uids)((size_t)l.step)); break;
      default: sqlite3_result_null(ctx);
    }
  }
};

}  // namespace

std::vector<SqlFunction> engine_step_functions() {
  auto table = [](const char* name, const char* help, const sqlite3_module* module) {
    SqlFunction f{name, "([schema])", help, SqlFunction::table};
    f.module = module;
    return f;
  };
  return {table("engine_steps",
                "table: the serving-engine steps (view engine_step; docs/inference.md), else a trace's ProfilerSteps "
                "(source 'profiler_step', iteration N): trace, iteration, uid, ts, end, dur, source, tokens, "
                "prefill_requests, decode_requests, phase, gpu_busy, gpu_start, gpu_end (ns), kernels, graph_replays",
                vtab_module<StepCursor>()),
          table("engine_step_members",
                "table: the host events of each serving-engine step (view engine_step_member): trace, iteration, "
                "phase, uid",
                vtab_module<MemberCursor<false>>()),
          table("engine_step_launched",
                "table: the GPU work of each serving-engine step, graph replays included (view engine_step_gpu): "
                "trace, iteration, phase, gpu",
                vtab_module<MemberCursor<true>>()),
          table("engine_loop_events",
                "table: the host events of the threads that launch graphs, numbered by the GPU waits ended before "
                "them (view engine_loop_event): uid, wait, k, step",
                vtab_module<LoopCursor>())};
}
TLSQL_FUNCTIONS(engine_step_functions);

}  // namespace tlsql
