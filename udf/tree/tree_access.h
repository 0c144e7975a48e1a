// EventSource: how C++ reads one schema's events, written once over the loaded trace's columnar
// store (no SQL per row) and once over a saved database's `event` table (SQL), giving the same rows
// in the same order either way. A function opens it from its schema argument, resolved once
// (event_source below, schema_arg, src/sql_names.h), and reads through it:
//   - typed events: event(uid), scan(EventScan{trace, kinds, stream, by_ts}) in uid or (ts, uid) order;
//   - the tree links: row(uid), children(uid), descendants, ancestors (every walk O(rows it returns));
//   - launch_links(): launch_link's (runtime, GPU) pairs;
//   - statement(sql): anything else, in SQL already qualified with the resolved schema.
// An analysis written on it has one read path (docs/extending.md, "How a function reads events").
// TreeAccess is its former name, kept for the code written before.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/event_table.h"
#include "src/sqlite_util.h"
#include "src/trace_model.h"
#include "udf/statement_memo.h"

namespace tlsql {

struct EventStore;

struct TreeRow {
  int64_t uid = 0, parent = -1, depth = 0, ts = 0, end = 0;
  bool has_parent = false, has_time = false;
  std::string kind, name, cat;
};

// One event's columns, as the event table gives them; `none` where the table has NULL. The texts
// point into the store or the statement's row: valid while the scan's callback runs.
struct EventView {
  static constexpr int64_t none = INT64_MIN;
  int64_t uid = 0, trace = 0, ts = none, dur = none, end = none, parent = none, depth = 0;
  int64_t stream = none, device = none;
  Kind kind = Kind::other;
  std::string_view name, cat;
  int64_t ts_or0() const { return ts == none ? 0 : ts; }  // as SQLite reads a NULL as an integer
};

// What a scan reads: one trace or all, one stream or all, the kinds listed (none listed: every
// kind), in uid order or by (ts, uid) (a NULL ts first, as ORDER BY ts, uid), or, any_order, in
// whichever order costs least (a saved database: its (kind, trace) index, no sort).
struct EventScan {
  std::optional<int64_t> trace, stream;
  std::vector<Kind> kinds;
  bool by_ts = false, any_order = false;
};

class EventSource {
 public:
  EventSource(sqlite3* db, const std::string& schema);
  ~EventSource();
  EventSource(const EventSource&) = delete;
  EventSource& operator=(const EventSource&) = delete;
  const std::string& schema() const { return schema_; }  // resolved: an attached schema's name
  sqlite3* db() const { return db_; }

  // Calls `fn` for each event `what` selects, in its order. Throws SqlError when the saved table
  // cannot be read.
  void scan(const EventScan& what, const std::function<void(const EventView&)>& fn);
  // One event; its texts valid until the next call (a store's: while the store lives).
  std::optional<EventView> event(int64_t uid);
  // launch_link's (runtime uid, GPU event uid) pairs, sorted.
  std::vector<std::pair<int64_t, int64_t>> launch_links();
  // `sql` with `{s}` standing for the schema ("SELECT ... FROM {s}.launch_link"; a literal brace
  // is written twice), prepared on the connection: the schema is quoted by src/sql_names.h, never
  // spliced by the caller. Values go in as bound parameters.
  std::unique_ptr<Statement> statement(std::string_view sql);

  bool ok() const { return error_.empty(); }
  // The in-memory store the rows come from, or nullptr (a saved database: SQL).
  const EventStore* store() const { return store_; }
  const std::string& error() const { return error_; }

  std::optional<TreeRow> row(int64_t uid);
  std::vector<int64_t> children(int64_t uid);  // by start time, then uid
  // Whole subtree below uid in depth-first pre-order: (uid, distance from uid).
  std::vector<std::pair<int64_t, int>> descendants(int64_t uid, int max_distance = INT32_MAX);
  std::vector<std::pair<int64_t, int>> ancestors(int64_t uid);  // parent first
  // Text of args member `key` (e.g. "Input Dims"), minified JSON; empty if absent.
  std::string arg(int64_t uid, const char* key);
  // A walk that meets a parent cycle (a database tlsql did not write, or one edited by hand) or an
  // interrupt (Ctrl-C) stops early and says why here, until taken: callers report it as an error.
  std::string take_walk_error() { return std::exchange(walk_error_, {}); }
  // For scalar functions: sets the error result and returns true when the last walks stopped early.
  bool report_walk_error(sqlite3_context* ctx, const char* fn, int64_t uid);

 private:
  void step_failed(int rc);
  std::optional<TreeRow> store_row(int64_t uid) const;
  std::vector<int64_t> store_children(int64_t uid) const;
  void store_scan(const EventScan& what, const std::function<void(const EventView&)>& fn) const;
  void sql_scan(const EventScan& what, const std::function<void(const EventView&)>& fn);

  const EventStore* store_ = nullptr;  // the in-memory rows, when the schema has them
  sqlite3* db_;
  std::string schema_, error_, walk_error_;
  std::string event_name_, event_cat_;  // event()'s texts from a saved database's row
  std::unique_ptr<Statement> event_;    // event()'s statement there
  sqlite3_stmt *row_ = nullptr, *children_ = nullptr, *arg_ = nullptr;
};

using TreeAccess = EventSource;

bool is_gpu_work(const std::string& kind);

// What a walk says when the parent links loop through `uid`.
std::string cycle_at(int64_t uid);

// The TreeAccess for `schema`: the connection's cached one (connection_cache.h: a loaded trace's
// on every connection, a saved database's where statements are kept), else one made into `own`.
// Check ok() either way. `known`: the schema's identity taken earlier in this statement's run
// (schema_identity's), for a call made once a row.
TreeAccess* tree_for(sqlite3* db, const std::string& schema, std::unique_ptr<TreeAccess>& own,
                     const SchemaIdentity* known = nullptr);
// A loaded trace's tree as tree_for keeps it, shared; nullptr for a saved database or where the
// connection keeps nothing.
std::shared_ptr<TreeAccess> store_tree(sqlite3* db, const std::string& schema, const SchemaIdentity& id);
// What a statement's memo keeps of a schema argument (udf/statement_memo.h): the schema it named,
// what that schema held then (schema_identity), and a loaded trace's tree, shared (a saved
// database's holds statements: tree_for per call, where the connection's owner keeps them).
struct KeptSchema {
  std::string schema;
  SchemaIdentity id;
  std::shared_ptr<TreeAccess> tree;
};
// kept_for_call's parts: `arg` resolved anew (schema_arg, schema_identity, the tree; throws as
// schema_arg); whether `kept` still stands for what its schema holds; whether a memo may keep what
// `arg` resolved to for the statement's run (not a db:TOKEN: an ATTACH may make it name another).
KeptSchema keep_schema(sqlite3* db, sqlite3_value* arg);
bool still_holds(sqlite3* db, const KeptSchema& kept);
bool memo_may_keep(sqlite3_value* arg);

// What the statement's memo under `code` keeps for a function's schema argument `arg` (nullptr:
// "main") while its schema holds what it did, checked on every call (between two steps of a
// statement its host may DETACH, ATTACH or reload it); else `fresh`: the argument resolved anew
// into `fresh.at`, then add(fresh) for what the caller keeps beside it, kept for the calls after
// it where the memo may. `Kept` has a KeptSchema `at`. Throws as schema_arg.
template <class Kept, class Add>
const Kept& kept_in(ArgMemo<Kept>* memo, sqlite3* db, sqlite3_value* arg, Kept& fresh, Add&& add) {
  if (const Kept* kept = memo ? memo->find(arg) : nullptr; kept && still_holds(db, kept->at)) return *kept;
  fresh.at = keep_schema(db, arg);
  add(fresh);
  if (Kept* put = memo ? memo->put(arg, fresh) : nullptr) return *put;
  return fresh;
}
template <class Kept, class Add>
const Kept& kept_for_call(sqlite3_context* ctx, StatementMemoCode code, sqlite3_value* arg, Kept& fresh, Add&& add) {
  ArgMemo<Kept>* memo = memo_may_keep(arg) ? statement_memo<ArgMemo<Kept>>(ctx, code) : nullptr;
  return kept_in(memo, sqlite3_context_db_handle(ctx), arg, fresh, add);
}
// The same for a table function called once a row (a lateral join: xFilter per outer row), its
// memo in `run`, the slot its cursor keeps for the statement's run (TableCall::run); one Kept type
// per slot.
template <class Kept, class Add>
const Kept& kept_for_run(std::shared_ptr<void>* run, sqlite3* db, sqlite3_value* arg, Kept& fresh, Add&& add) {
  ArgMemo<Kept>* memo = nullptr;
  if (run && memo_may_keep(arg)) {
    if (!*run) *run = std::make_shared<ArgMemo<Kept>>();
    memo = static_cast<ArgMemo<Kept>*>(run->get());
  }
  return kept_in(memo, db, arg, fresh, add);
}

// The tree of the schema a scalar function's `schema` argument names (nullptr: "main"), for one
// call (kept_for_call); else made into `own` for the call. Throws as schema_arg; check ok().
TreeAccess* tree_arg(sqlite3_context* ctx, sqlite3_value* schema, std::unique_ptr<TreeAccess>& own);
// A function's EventSource: its schema argument (nullptr: "main") resolved once with schema_arg,
// then tree_for. Throws SchemaError / FunctionError naming what is wrong.
EventSource& event_source(sqlite3* db, sqlite3_value* schema, std::unique_ptr<EventSource>& own);
// The same for a scalar function's call (tree_arg): what a function called once per row uses.
EventSource& event_source(sqlite3_context* ctx, sqlite3_value* schema, std::unique_ptr<EventSource>& own);

// The schema a function's optional `schema` argument names: "main" when absent, else the name
// given, except "db:TOKEN" (what tlsql's own views pass, from their schema's tlsql_self table),
// which names whichever attached schema holds that database, so a view works under any name.
// `identity`: set to the schema's (schema_identity), as this call read it.
std::string schema_arg(sqlite3* db, sqlite3_value* v, SchemaIdentity* identity = nullptr);

// The uid argument of a tlsql scalar function. False when the result is already set: NULL for a
// NULL uid (NULL in, NULL out), an error naming `fn` for anything but an integer.
bool uid_arg(sqlite3_context* ctx, sqlite3_value* v, const char* fn, int64_t& uid);

}  // namespace tlsql
