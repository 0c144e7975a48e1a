// critical_path(annotation [, instance [, trace [, schema]]]): the critical path (critical_path.h)
// of one occurrence of an annotation, one row per edge in path order. Its rows are read here from
// the schema's event and launch_link tables through its EventSource's statements (the loaded store
// and a saved file alike: one read path).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <compare>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "src/event_store.h"
#include "src/event_table.h"
#include "src/kind.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"
#include "udf/analysis/critical_path.h"
#include "udf/connection_cache.h"
#include "udf/gpu_class.h"
#include "udf/registry.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

namespace {

// A pid, tid, device or stream as a key: an integer, or text that reads as exactly one, by its
// value; other text by its bytes. Two values are one key exactly when their texts (what
// sqlite3_column_text makes of them) are equal, without making the text of each row's integers
// (a serving trace's every launch: most of this function's time).
struct KeyPart {
  bool text = false;
  int64_t i = 0;
  std::string s;
  auto operator<=>(const KeyPart&) const = default;
};
KeyPart text_part(std::string_view t) {
  int64_t i = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), i);
  if (ec == std::errc() && end == t.data() + t.size() && !t.empty() && fmt::format_int(i).str() == t)
    return {false, i, {}};  // ("05", "-0", "+5" stay text: no integer's text reads so)
  return {true, 0, std::string(t)};
}

// A statement of the EventSource's (`{s}`: the schema; errors thrown as SqlError) with the binds
// and column reads used here.
struct Query {
  std::unique_ptr<Statement> st;
  Query(EventSource& events, std::string_view sql) : st(events.statement(sql)) {}
  sqlite3_stmt* get() const { return st->get(); }
  bool step() { return st->step(); }
  Query& bind(int i, int64_t v) { return sqlite3_bind_int64(get(), i, v), *this; }
  Query& bind(int i, const std::string& v) {
    return sqlite3_bind_text(get(), i, v.c_str(), -1, SQLITE_TRANSIENT), *this;
  }
  bool null(int c) const { return sqlite3_column_type(get(), c) == SQLITE_NULL; }
  int64_t i(int c) const { return sqlite3_column_int64(get(), c); }
  std::string t(int c) const { return std::string(view(c)); }
  // The column's text, valid until the next step (no copy: a launch's kernel name is read a row).
  std::string_view view(int c) const {
    const unsigned char* v = sqlite3_column_text(get(), c);
    return v ? std::string_view((const char*)v, (size_t)sqlite3_column_bytes(get(), c)) : std::string_view();
  }
  KeyPart k(int c) const {
    return sqlite3_column_type(get(), c) == SQLITE_INTEGER ? KeyPart{false, i(c), {}} : text_part(view(c));
  }
};

// Numbers for keys: threads (pid, tid) and streams (device, stream), in the order first met.
// (The last key answered at once: rows in a row mostly name the same thread or stream.)
struct Numbering {
  std::map<std::pair<KeyPart, KeyPart>, int32_t> ids;
  const std::pair<const std::pair<KeyPart, KeyPart>, int32_t>* last = nullptr;
  int32_t operator()(KeyPart a, KeyPart b) {
    if (last && last->first.first == a && last->first.second == b) return last->second;
    last = &*ids.try_emplace({std::move(a), std::move(b)}, (int32_t)ids.size()).first;
    return last->second;
  }
};
const KeyPart kNoPart = text_part("");  // (the other half of a pid's or a tid's own key)

// The window: the instance-th (by start) host event of the trace whose name contains
// `annotation` (HTA matches the same way), or the whole trace for an empty annotation (uid -1).
// Throws std::runtime_error (a SqlError for SQLite's own errors).
struct Window {
  int64_t uid = -1, ts = 0, end = 0;
};
Window window(EventSource& events, int64_t trace, const std::string& annotation, int64_t instance) {
  Query t(events, "SELECT 1 FROM {s}.trace WHERE id = ?1");
  if (!t.bind(1, trace).step()) throw std::runtime_error(fmt::format("no trace has id {}", trace));
  if (annotation.empty()) {
    Query w(events, "SELECT min(ts), max(end) FROM {s}.event WHERE trace = ?1");
    w.bind(1, trace);
    if (!w.step() || w.null(0)) throw std::runtime_error(fmt::format("trace {} has no timed events", trace));
    return {-1, w.i(0), w.i(1)};
  }
  // (GLOB picks the names, once per distinct name in a loaded trace; instr says it exactly.)
  Query w(events,
          "SELECT uid, ts, end FROM {s}.event WHERE trace = ?1 AND kind IN ('annotation', 'cpu_op', "
          "'python') AND ts IS NOT NULL AND name GLOB ?3 AND instr(name, ?2) > 0 ORDER BY ts, uid");
  w.bind(1, trace).bind(2, annotation).bind(3, glob_containing(annotation));
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

CpInput read_input(EventSource& events, int64_t trace, int64_t start, int64_t end) {
  CpInput in;
  Numbering threads, streams, pids, tids;
  std::unordered_map<int64_t, int64_t> runtime_of;  // correlation -> host call in the window
  // Every host event starting in the window with a duration (HTA's window: the nesting of the
  // walk needs the annotations and frames too, and any other host event, as HTA's call stack has).
  Query h(events,
          "SELECT uid, kind, name, pid, tid, ts, end, correlation, kind IN ('cpu_op', 'annotation') "
          "AND instr(name, 'forward') > 0, kind IN ('cpu_op', 'annotation') AND instr(name, "
          "'autograd') > 0 FROM {s}.event WHERE trace = ?1 AND kind IN ('cpu_op', 'runtime', "
          "'driver', 'annotation', 'python', 'other') AND ts BETWEEN ?2 AND ?3 AND dur > 0");
  h.bind(1, trace).bind(2, start).bind(3, end);
  while (h.step()) {
    const std::string_view kind = h.view(1), name = h.view(2);
    const bool call = kind == "runtime" || kind == "driver";
    in.host.push_back({h.i(0), pids(h.k(3), kNoPart), tids(kNoPart, h.k(4)), h.i(5), h.i(6), call || kind == "cpu_op",
                       call && blocking_host_call(name), call && runtime_lock_call(name), h.i(8) != 0, h.i(9) != 0});
    if (call && !h.null(7)) runtime_of.emplace(h.i(7), h.i(0));
  }

  // The trace's launches, read from launch_link (its uids' range; the events by uid): SQLite's own
  // plan scanned every event of the trace and looked each up in launch_link. Either way in gpu
  // uid order (launch_link's rowid).
  int64_t first = 0, last = -1;  // the trace's uids: [first, last]
  {
    Query r(events, "SELECT uid_base, uid_base + events - 1 FROM {s}.trace WHERE id = ?1");
    if (r.bind(1, trace).step() && !r.null(0) && !r.null(1)) first = r.i(0), last = r.i(1);
  }
  Query g(events,
          "SELECT g.uid, g.kind, g.name, g.pid, g.stream, g.ts, g.end, r.uid, r.ts, r.dur, r.pid, "
          "r.tid FROM {s}.launch_link l CROSS JOIN {s}.event g ON g.uid = l.gpu CROSS JOIN {s}.event "
          "r ON r.uid = l.runtime WHERE l.gpu BETWEEN ?2 AND ?3 AND g.trace = ?1 AND g.ts IS NOT "
          "NULL AND r.ts IS NOT NULL");
  g.bind(1, trace).bind(2, first).bind(3, last);
  // Whether GPU work of a kind and name is a collective, once per (kind, name): the kernel rules
  // lower-case and match every name they see, and the whole trace's GPU work repeats a few
  // hundred names (most of this function's time on a large trace when asked per row).
  // (Per kind, by name: looked up by the column's text, a name copied once, not per row.)
  struct ByView {
    using is_transparent = void;
    size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  std::map<Kind, std::unordered_map<std::string, bool, ByView, std::equal_to<>>> communication;
  while (g.step()) {
    const bool in_window = g.i(8) >= start && g.i(8) <= end && g.i(9) > 0;
    const Kind kind = kind_from_name(g.view(1));
    auto& seen = communication[kind];
    const std::string_view name = g.view(2);
    auto it = seen.find(name);
    if (it == seen.end())
      it = seen.emplace(name, classify_gpu(kind, name, GpuRule::tlsql) == GpuClass::communication).first;
    const bool comm = it->second;
    in.gpu.push_back(
        {g.i(0), g.i(7), g.i(8), threads(g.k(10), g.k(11)), g.i(5), g.i(6), streams(g.k(3), g.k(4)), in_window, comm});
  }

  // One scan of the trace's runtime and driver calls (in the order the two queries this replaces
  // read them, so that threads are numbered as before) for:
  //   - cudaEventRecord / cudaStreamWaitEvent calls by correlation (the sync events name them):
  //     a name with either in any ASCII case (SQL's LIKE, tested here rather than by SQLite's LIKE,
  //     which folded every byte of every call's name: most of this function's SQL time);
  //   - the stream waits and event records up to the window's end (CpWait), in time order: the waits
  //     starting in the window that no "Stream Wait Event" sync event names, each with the latest
  //     record before it on its thread (names as written: instr).
  struct Call {
    int64_t ts;
    int32_t thread;
  };
  std::unordered_map<int64_t, Call> calls;
  struct Candidate {               // a record or wait call, numbered once sorted
    int64_t ts, uid, correlation;  // correlation: -1 none
    bool wait, has_correlation;
    KeyPart pid, tid;
  };
  std::vector<Candidate> candidates;
  {
    auto has = [](std::string_view name, std::string_view lower) {  // ASCII case-insensitive
      if (name.size() < lower.size()) return false;
      for (size_t at = 0; at + lower.size() <= name.size(); ++at) {
        size_t k = 0;
        while (k < lower.size() &&
               (name[at + k] >= 'A' && name[at + k] <= 'Z' ? name[at + k] + 32 : name[at + k]) == lower[k])
          ++k;
        if (k == lower.size()) return true;
      }
      return false;
    };
    // Only calls with "event" in their name (any ASCII case, whatever PRAGMA case_sensitive_like
    // says: GLOB's classes) can be either: the event table matches that once per distinct name
    // and hands over those calls alone, not the trace's every runtime call.
    Query c(events,
            "SELECT correlation, ts, pid, tid, uid, name FROM {s}.event WHERE trace = ?1 AND kind "
            "IN ('runtime', 'driver') AND ts IS NOT NULL AND name GLOB '*[Ee][Vv][Ee][Nn][Tt]*'");
    c.bind(1, trace);
    while (c.step()) {
      const auto* text = (const char*)sqlite3_column_text(c.get(), 5);
      const std::string_view name(text ? text : "", text ? (size_t)sqlite3_column_bytes(c.get(), 5) : 0);
      const bool record = name.find("EventRecord") != std::string_view::npos,
                 wait = name.find("StreamWaitEvent") != std::string_view::npos;
      if (!c.null(0) && (record || wait || has(name, "eventrecord") || has(name, "streamwaitevent")))
        calls.emplace(c.i(0), Call{c.i(1), threads(c.k(2), c.k(3))});
      if ((record || wait) && c.i(1) <= end)
        candidates.push_back({c.i(1), c.i(4), c.null(0) ? -1 : c.i(0), wait, !c.null(0), c.k(2), c.k(3)});
    }
  }

  std::unordered_set<int64_t> synced;  // correlations of the Stream Wait Event sync events
  {
    Query w(events,
            "SELECT correlation FROM {s}.event WHERE trace = ?1 AND kind = 'sync' AND name = 'Stream "
            "Wait Event' AND correlation IS NOT NULL");
    w.bind(1, trace);
    while (w.step()) synced.insert(w.i(0));
  }
  {
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) { return std::tie(a.ts, a.uid) < std::tie(b.ts, b.uid); });
    std::unordered_map<int32_t, int64_t> last_record;  // thread -> start of its latest record
    for (const Candidate& w : candidates) {
      const int32_t thread = threads(w.pid, w.tid);
      if (!w.wait) {
        last_record[thread] = w.ts;
      } else if (w.ts >= start && (!w.has_correlation || !synced.count(w.correlation))) {
        auto r = last_record.find(thread);
        in.waits.push_back({w.uid, w.ts, thread, r == last_record.end() ? -1 : r->second});
      }
    }
  }

  Query s(events,
          "SELECT uid, name, pid, stream, ts, end, correlation, args ->> '$.wait_on_stream', "
          "args ->> '$.wait_on_cuda_event_record_corr_id' FROM {s}.event WHERE trace = ?1 AND kind = "
          "'sync' AND ts IS NOT NULL");
  s.bind(1, trace);
  while (s.step()) {
    const std::string name = s.t(1);
    CpSync x{CpSync::stream_sync, s.i(0), s.i(4), s.i(5), streams(s.k(2), s.k(3))};
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
        x.record_ts = r->second.ts, x.record_stream = streams(s.k(2), s.k(7));
    in.sync.push_back(x);
  }
  return in;
}

// One computed path and the window it covers; `error` set instead when there is none.
struct Computed {
  std::vector<CpStep> path;
  Window win;
  std::string error;
  std::optional<std::string> waits;  // what became of the waits without a sync event (waits_note)
};

// The report's header part on the window's stream waits without a sync event: how many, how many
// inferred, and of the others, how many for each reason and the first 5 uids (a user looks them up).
std::optional<std::string> waits_note(const CpInput& in, const CpWaits& w) {
  if (in.waits.empty()) return std::nullopt;
  std::string out = fmt::format(
      "{} stream wait{} (cudaStreamWaitEvent / hipStreamWaitEvent) without a GPU-side sync event, "
      "invisible to HTA's graph: {} inferred (critical_path's inferred = 1)",
      in.waits.size(), in.waits.size() == 1 ? "" : "s", w.inferred);
  if (w.unplaced.empty()) return out;
  out += fmt::format(", {} not placed", w.unplaced.size());
  std::map<std::string, int64_t> why;
  for (const auto& [uid, reason] : w.unplaced) ++why[reason];
  const char* sep = " (";
  for (const auto& [reason, n] : why) out += fmt::format("{}{}: {}", sep, n, reason), sep = "; ";
  out += "; uid";
  for (size_t k = 0; k < w.unplaced.size() && k < 5; ++k)
    out += fmt::format("{} {}", k ? "," : "", w.unplaced[k].first);
  out += w.unplaced.size() > 5 ? ", ...)" : ")";
  return out;
}

// The last path computed on a connection, kept while the schema holds the same rows: the
// critical_path report's note, the report and --overlay each ask for the same path in turn, and
// reading a window (the whole trace's launches) is most of the work on a large trace.
struct LastPath {
  RowsVersion rows;
  std::string annotation;
  int64_t trace = -1, instance = -1;
  std::shared_ptr<const Computed> value;
};

std::shared_ptr<const Computed> compute(EventSource& events, int64_t trace, const std::string& annotation,
                                        int64_t instance) {
  sqlite3* db = events.db();
  const std::string& schema = events.schema();
  LastPath key;
  key.rows = rows_version(db, schema, events.store());
  key.annotation = annotation, key.trace = trace, key.instance = instance;
  LastPath* last = connection_cached<LastPath>(db, "critical_path", [] { return std::make_unique<LastPath>(); });
  if (last && last->value && last->rows == key.rows && last->annotation == key.annotation && last->trace == key.trace &&
      last->instance == key.instance)
    return last->value;

  auto out = std::make_shared<Computed>();
  CpInput in;
  try {
    out->win = window(events, trace, annotation, instance);
    in = read_input(events, trace, out->win.ts, out->win.end);
  } catch (const SqlError&) {
    throw;  // SQLite's own (an interrupt, a missing table): not remembered
  } catch (const std::exception& e) {
    out->error = std::string("critical_path: ") + e.what();
  }
  if (out->error.empty()) {
    CpResult r = critical_path(in);
    out->waits = waits_note(in, r.waits);
    if (r.error.empty())
      out->path = std::move(r.path);
    else
      out->error = fmt::format("critical_path('{}', {}, {}): {}", annotation, instance, trace, r.error);
  }
  if (last) key.value = out, *last = std::move(key);
  return out;
}

struct CriticalPath {
  using Row = size_t;  // the step
  static constexpr TableArgument arguments[] = {
      {"annotation", "annotation", true}, {"instance", "instance"}, {"trace", "trace"}, {"schema", "schema"}};
  static constexpr double estimated_rows = 1000;
  std::shared_ptr<const Computed> done;

  std::vector<Row> rows(const TableCall& call) {
    sqlite3_value* annotation = call.arg(0);
    if (sqlite3_value_type(annotation) != SQLITE_TEXT)
      throw FunctionError("annotation must be text ('' for the whole trace)");
    auto integer = [](sqlite3_value* v, int64_t& out) {
      if (!v || sqlite3_value_type(v) == SQLITE_NULL) return out = 0, true;
      if (sqlite3_value_numeric_type(v) != SQLITE_INTEGER) return false;
      return out = sqlite3_value_int64(v), true;
    };
    int64_t instance = 0, trace = 0;
    if (!integer(call.arg(1), instance) || instance < 0) throw FunctionError("instance must be an integer >= 0");
    // A NULL trace is what a report's lookup of a missing rank gives: an error, not trace 0.
    if ((call.arg(2) && sqlite3_value_type(call.arg(2)) == SQLITE_NULL) || !integer(call.arg(2), trace))
      throw FunctionError("trace must be a trace id (no trace has the rank asked for?)");
    try {
      std::unique_ptr<EventSource> own;
      done = compute(event_source(call.db, call.arg(3), own), trace, (const char*)sqlite3_value_text(annotation),
                     instance);
    } catch (const std::exception& e) {
      throw FunctionError(std::string("critical_path: ") + e.what());
    }
    if (!done->error.empty()) throw FunctionError(done->error);
    std::vector<Row> out(done->path.size());
    for (size_t k = 0; k < out.size(); ++k) out[k] = k;
    return out;
  }
  const CpStep& step(Row r) const { return done->path[r]; }
  static auto columns() {
    using C = TableColumn<CriticalPath, Row>;
    using Ctx = sqlite3_context*;
    using P = CriticalPath;
    return std::to_array<C>({
        {"step", "INTEGER", [](Ctx c, P&, const Row& r) { result(c, (int64_t)r); }},
        {"type", "TEXT", [](Ctx c, P& p, const Row& r) { result(c, cp_edge_name(p.step(r).type)); }},
        {"bound_by", "TEXT", [](Ctx c, P& p, const Row& r) { result(c, p.step(r).bound_by); }},
        {"uid", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, or_null(p.step(r).uid)); }},
        {"dur", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, (int64_t)p.step(r).weight); }},
        {"from_uid", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, (int64_t)p.step(r).from_uid); }},
        {"from_end", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, (int)p.step(r).from_end); }},
        {"to_uid", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, (int64_t)p.step(r).to_uid); }},
        {"to_end", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, (int)p.step(r).to_end); }},
        {"ts", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, (int64_t)p.step(r).from_ts); }},
        // 1 for a sync dependency tlsql inferred from a stream wait without a sync event (HTA has none).
        {"inferred", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, (int)p.step(r).inferred); }},
        // The window's columns are hidden: constant on every row, they stay out of SELECT * (the
        // report's note reads them).
        {"window_uid", "INTEGER", [](Ctx c, P& p, const Row&) { result(c, or_null(p.done->win.uid)); }, true},
        {"window_ts", "INTEGER", [](Ctx c, P& p, const Row&) { result(c, (int64_t)p.done->win.ts); }, true},
        {"window_end", "INTEGER", [](Ctx c, P& p, const Row&) { result(c, (int64_t)p.done->win.end); }, true},
        {"waits_note", "TEXT", [](Ctx c, P& p, const Row&) { result(c, p.done->waits); }, true},
    });
  }
  static std::optional<int64_t> or_null(int64_t uid) { return uid >= 0 ? std::optional(uid) : std::nullopt; }
};

}  // namespace

std::vector<SqlFunction> critical_path_functions() {
  return {table_function<CriticalPath>(
      "critical_path",
      "table: the critical path of the instance-th (from 0) host event whose name contains annotation "
      "('' = whole trace), one row per edge: step, type, bound_by, uid, dur (ns), from/to node, ts "
      "(HTA's critical_path_analysis)")};
}
TLSQL_FUNCTIONS(critical_path_functions);

}  // namespace tlsql
