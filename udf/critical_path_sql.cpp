// critical_path(annotation [, instance [, trace [, schema]]]): the critical path (critical_path.h)
// of one occurrence of an annotation, one row per edge in path order. Its rows are read here from
// the schema's event and launch_link tables (the loaded store and a saved file alike).
#include <fmt/format.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/event_store.h"
#include "src/event_table.h"
#include "src/kind.h"
#include "src/sqlite_util.h"
#include "udf/connection_cache.h"
#include "udf/critical_path.h"
#include "udf/gpu_class.h"
#include "udf/registry.h"
#include "udf/tree_access.h"

namespace tlsql {

namespace {

// A Statement (its errors thrown as SqlError) with the binds and column reads used here.
struct Query : Statement {
  using Statement::Statement;
  Query& bind(int i, int64_t v) { return sqlite3_bind_int64(get(), i, v), *this; }
  Query& bind(int i, const std::string& v) {
    return sqlite3_bind_text(get(), i, v.c_str(), -1, SQLITE_TRANSIENT), *this;
  }
  bool null(int c) const { return sqlite3_column_type(get(), c) == SQLITE_NULL; }
  int64_t i(int c) const { return sqlite3_column_int64(get(), c); }
  std::string t(int c) const {
    const unsigned char* v = sqlite3_column_text(get(), c);
    return v ? (const char*)v : "";
  }
};

// Numbers for text keys: threads (pid, tid) and streams (device, stream).
struct Numbering {
  std::map<std::pair<std::string, std::string>, int32_t> ids;
  int32_t operator()(const std::string& a, const std::string& b) {
    return ids.try_emplace({a, b}, (int32_t)ids.size()).first->second;
  }
};

// The window: the instance-th (by start) host event of the trace whose name contains
// `annotation` (HTA matches the same way), or the whole trace for an empty annotation (uid -1).
// Throws std::runtime_error (a SqlError for SQLite's own errors).
struct Window {
  int64_t uid = -1, ts = 0, end = 0;
};
Window window(sqlite3* db, const std::string& q, int64_t trace, const std::string& annotation, int64_t instance) {
  Query t(db, fmt::format("SELECT 1 FROM {}.trace WHERE id = ?1", q));
  if (!t.bind(1, trace).step()) throw std::runtime_error(fmt::format("no trace has id {}", trace));
  if (annotation.empty()) {
    Query w(db, fmt::format("SELECT min(ts), max(end) FROM {}.event WHERE trace = ?1", q));
    w.bind(1, trace);
    if (!w.step() || w.null(0)) throw std::runtime_error(fmt::format("trace {} has no timed events", trace));
    return {-1, w.i(0), w.i(1)};
  }
  Query w(db, fmt::format("SELECT uid, ts, end FROM {}.event WHERE trace = ?1 AND kind IN ('annotation', 'cpu_op', "
                          "'python') AND ts IS NOT NULL AND instr(name, ?2) > 0 ORDER BY ts, uid",
                          q));
  w.bind(1, trace).bind(2, annotation);
  int64_t seen = 0;
  while (w.step())
    if (seen++ == instance) return {w.i(0), w.i(1), w.i(2)};
  // (The fix is the user's choice of window: say how to pick another, or the whole trace.)
  if (seen == 0)
    throw std::runtime_error(
        fmt::format("no host event of trace {} has '{}' in its name: name another "
                    "annotation (the report's @annotation), or '' for the whole trace",
                    trace, annotation));
  throw std::runtime_error(fmt::format("'{}' occurs {} time{} in trace {}: instance {} is not one of 0..{}", annotation,
                                       seen, seen == 1 ? "" : "s", trace, instance, seen - 1));
}

CpInput read_input(sqlite3* db, const std::string& q, int64_t trace, int64_t start, int64_t end) {
  CpInput in;
  Numbering threads, streams, pids, tids;
  std::unordered_map<int64_t, int64_t> runtime_of;  // correlation -> host call in the window
  // Every host event starting in the window with a duration (HTA's window: the nesting of the
  // walk needs the annotations and frames too, and any other host event, as HTA's call stack has).
  Query h(db, fmt::format("SELECT uid, kind, name, pid, tid, ts, end, correlation, kind IN ('cpu_op', 'annotation') "
                          "AND instr(name, 'forward') > 0, kind IN ('cpu_op', 'annotation') AND instr(name, "
                          "'autograd') > 0 FROM {}.event WHERE trace = ?1 AND kind IN ('cpu_op', 'runtime', "
                          "'driver', 'annotation', 'python', 'other') AND ts BETWEEN ?2 AND ?3 AND dur > 0",
                          q));
  h.bind(1, trace).bind(2, start).bind(3, end);
  while (h.step()) {
    const std::string kind = h.t(1), name = h.t(2);
    const bool call = kind == "runtime" || kind == "driver";
    in.host.push_back({h.i(0), pids(h.t(3), ""), tids("", h.t(4)), h.i(5), h.i(6), call || kind == "cpu_op",
                       call && blocking_host_call(name), call && runtime_lock_call(name), h.i(8) != 0, h.i(9) != 0});
    if (call && !h.null(7)) runtime_of.emplace(h.i(7), h.i(0));
  }

  Query g(db, fmt::format("SELECT g.uid, g.kind, g.name, g.pid, g.stream, g.ts, g.end, r.uid, r.ts, r.dur, r.pid, "
                          "r.tid FROM {0}.launch_link l JOIN {0}.event g ON g.uid = l.gpu JOIN {0}.event r ON r.uid = "
                          "l.runtime WHERE g.trace = ?1 AND g.ts IS NOT NULL AND r.ts IS NOT NULL",
                          q));
  g.bind(1, trace);
  while (g.step()) {
    const bool in_window = g.i(8) >= start && g.i(8) <= end && g.i(9) > 0;
    in.gpu.push_back({g.i(0), g.i(7), g.i(8), threads(g.t(10), g.t(11)), g.i(5), g.i(6), streams(g.t(3), g.t(4)),
                      in_window,
                      classify_gpu(kind_from_name(g.t(1)), g.t(2), GpuRule::tlsql) == GpuClass::communication});
  }

  // cudaEventRecord / cudaStreamWaitEvent calls by correlation (the sync events name them).
  struct Call {
    int64_t ts;
    int32_t thread;
  };
  std::unordered_map<int64_t, Call> calls;
  Query c(db, fmt::format("SELECT correlation, ts, pid, tid FROM {}.event WHERE trace = ?1 AND kind IN ('runtime', "
                          "'driver') AND correlation IS NOT NULL AND ts IS NOT NULL AND (name LIKE '%EventRecord%' "
                          "OR name LIKE '%StreamWaitEvent%')",
                          q));
  c.bind(1, trace);
  while (c.step()) calls.emplace(c.i(0), Call{c.i(1), threads(c.t(2), c.t(3))});

  Query s(db, fmt::format("SELECT uid, name, pid, stream, ts, end, correlation, args ->> '$.wait_on_stream', "
                          "args ->> '$.wait_on_cuda_event_record_corr_id' FROM {}.event WHERE trace = ?1 AND kind = "
                          "'sync' AND ts IS NOT NULL",
                          q));
  s.bind(1, trace);
  while (s.step()) {
    const std::string name = s.t(1);
    CpSync x{CpSync::stream_sync, s.i(0), s.i(4), s.i(5), streams(s.t(2), s.t(3))};
    if (name == "Context Sync")
      x.what = CpSync::context_sync;
    else if (name == "Event Sync")
      x.what = CpSync::event_sync;
    else if (name == "Stream Wait Event")
      x.what = CpSync::stream_wait;
    else if (name != "Stream Sync")
      continue;
    if (!s.null(6)) {
      if (auto r = runtime_of.find(s.i(6)); r != runtime_of.end()) x.runtime = r->second;
      if (auto w = calls.find(s.i(6)); w != calls.end()) x.wait_ts = w->second.ts, x.wait_thread = w->second.thread;
    }
    if (!s.null(7) && !s.null(8))
      if (auto r = calls.find(s.i(8)); r != calls.end())
        x.record_ts = r->second.ts, x.record_stream = streams(s.t(2), s.t(7));
    in.sync.push_back(x);
  }
  return in;
}

// One computed path and the window it covers; `error` set instead when there is none.
struct Computed {
  std::vector<CpStep> path;
  Window win;
  std::string error;
};

// The last path computed on a connection, kept while the schema holds the same rows: the
// critical_path report's note, the report and --overlay each ask for the same path in turn, and
// reading a window (the whole trace's launches) is most of the work on a large trace.
struct LastPath {
  std::string schema, annotation, file;
  int64_t trace = -1, instance = -1, changes = -1;
  uint64_t store = 0;
  unsigned int data_version = 0;
  std::shared_ptr<const Computed> value;
};

std::shared_ptr<const Computed> compute(sqlite3* db, const std::string& schema, int64_t trace,
                                        const std::string& annotation, int64_t instance) {
  LastPath key;
  key.schema = schema, key.annotation = annotation, key.trace = trace, key.instance = instance;
  const EventStore* store = loaded_store(db, schema);
  key.store = store ? store->generation : 0;
  if (const char* f = sqlite3_db_filename(db, schema.c_str())) key.file = f;
  // A saved database changes with a commit by any connection; this connection's own writes (a
  // launch_link edited in memory) count too.
  if (!store) sqlite3_file_control(db, schema.c_str(), SQLITE_FCNTL_DATA_VERSION, &key.data_version);
  key.changes = sqlite3_total_changes64(db);
  LastPath* last = connection_cached<LastPath>(db, "critical_path", [] { return std::make_unique<LastPath>(); });
  if (last && last->value && last->schema == key.schema && last->annotation == key.annotation &&
      last->trace == key.trace && last->instance == key.instance && last->store == key.store &&
      last->file == key.file && last->data_version == key.data_version && last->changes == key.changes)
    return last->value;

  auto out = std::make_shared<Computed>();
  const std::string q = fmt::format("\"{}\"", schema);
  CpInput in;
  try {
    out->win = window(db, q, trace, annotation, instance);
    in = read_input(db, q, trace, out->win.ts, out->win.end);
  } catch (const SqlError&) {
    throw;  // SQLite's own (an interrupt, a missing table): not remembered
  } catch (const std::exception& e) {
    out->error = std::string("critical_path: ") + e.what();
  }
  if (out->error.empty()) {
    CpResult r = critical_path(in);
    if (r.error.empty())
      out->path = std::move(r.path);
    else
      out->error = fmt::format("critical_path('{}', {}, {}): {}", annotation, instance, trace, r.error);
  }
  if (last) key.value = out, *last = std::move(key);
  return out;
}

enum Col {
  kStep,
  kType,
  kBoundBy,
  kUid,
  kDur,
  kFromUid,
  kFromEnd,
  kToUid,
  kToEnd,
  kTs,
  kArgAnnotation,
  kArgInstance,
  kArgTrace,
  kArgSchema,
  kWindowUid,
  kWindowTs,
  kWindowEnd
};

struct Cursor : VtabCursor<ConnectionTable> {
  std::shared_ptr<const Computed> done;
  size_t at = 0;

  // The window's columns are hidden, after the arguments: constant on every row, they stay out
  // of SELECT * (the report's note reads them).
  static std::string declaration() {
    return "CREATE TABLE x(step INTEGER, type TEXT, bound_by TEXT, uid INTEGER, dur INTEGER, from_uid INTEGER, "
           "from_end INTEGER, to_uid INTEGER, to_end INTEGER, ts INTEGER, annotation HIDDEN, instance HIDDEN, "
           "trace HIDDEN, schema HIDDEN, window_uid INTEGER HIDDEN, window_ts INTEGER HIDDEN, window_end INTEGER "
           "HIDDEN)";
  }
  static int best_index(ConnectionTable&, sqlite3_index_info* info) {
    return hidden_args_best_index(info, kArgAnnotation, 4);
  }

  int filter(int plan, int, sqlite3_value** argv) {
    sqlite3* db = table().db;
    done.reset(), at = 0;
    sqlite3_value* args[4] = {nullptr, nullptr, nullptr, nullptr};
    for (int k = 0, a = 0; k < 4; ++k)
      if (plan & (1 << k)) args[k] = argv[a++];
    const char* usage = "critical_path(annotation [, instance [, trace [, schema]]])";
    if (!args[0] || sqlite3_value_type(args[0]) != SQLITE_TEXT)
      return error(fmt::format("{}: annotation must be text ('' for the whole trace)", usage));
    auto integer = [](sqlite3_value* v, int64_t fallback, int64_t& out) {
      if (!v || sqlite3_value_type(v) == SQLITE_NULL) return out = fallback, true;
      if (sqlite3_value_numeric_type(v) != SQLITE_INTEGER) return false;
      return out = sqlite3_value_int64(v), true;
    };
    int64_t instance = 0, trace = 0;
    if (!integer(args[1], 0, instance) || instance < 0)
      return error(fmt::format("{}: instance must be an integer >= 0", usage));
    // A NULL trace is what a report's lookup of a missing rank gives: an error, not trace 0.
    if ((args[2] && sqlite3_value_type(args[2]) == SQLITE_NULL) || !integer(args[2], 0, trace))
      return error(fmt::format("{}: trace must be a trace id (no trace has the rank asked for?)", usage));
    const std::string annotation = (const char*)sqlite3_value_text(args[0]);
    try {
      done = compute(db, schema_arg(db, args[3]), trace, annotation, instance);
    } catch (const std::exception& e) {
      return error(std::string("critical_path: ") + e.what());
    }
    if (!done->error.empty()) return error(done->error);
    return SQLITE_OK;
  }
  bool eof() const { return !done || at >= done->path.size(); }
  void next() { ++at; }
  void column(sqlite3_context* ctx, int col) const {
    const CpStep& s = done->path[at];
    switch (col) {
      case kStep: sqlite3_result_int64(ctx, (int64_t)at); break;
      case kType: sqlite3_result_text(ctx, cp_edge_name(s.type), -1, SQLITE_STATIC); break;
      case kBoundBy: sqlite3_result_text(ctx, s.bound_by, -1, SQLITE_STATIC); break;
      case kUid: s.uid >= 0 ? sqlite3_result_int64(ctx, s.uid) : sqlite3_result_null(ctx); break;
      case kDur: sqlite3_result_int64(ctx, s.weight); break;
      case kFromUid: sqlite3_result_int64(ctx, s.from_uid); break;
      case kFromEnd: sqlite3_result_int(ctx, s.from_end); break;
      case kToUid: sqlite3_result_int64(ctx, s.to_uid); break;
      case kToEnd: sqlite3_result_int(ctx, s.to_end); break;
      case kTs: sqlite3_result_int64(ctx, s.from_ts); break;
      case kWindowUid: done->win.uid >= 0 ? sqlite3_result_int64(ctx, done->win.uid) : sqlite3_result_null(ctx); break;
      case kWindowTs: sqlite3_result_int64(ctx, done->win.ts); break;
      case kWindowEnd: sqlite3_result_int64(ctx, done->win.end); break;
      default: sqlite3_result_null(ctx);
    }
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

}  // namespace

std::vector<SqlFunction> critical_path_functions() {
  SqlFunction f{"critical_path", "(annotation [, instance [, trace [, schema]]])",
                "table: the critical path of the instance-th (from 0) host event whose name contains annotation "
                "('' = whole trace), one row per edge: step, type, bound_by, uid, dur (ns), from/to node, ts "
                "(HTA's critical_path_analysis)",
                SqlFunction::table};
  f.module = vtab_module<Cursor>();
  return {f};
}

}  // namespace tlsql
