// Reads the call tree of `SCHEMA.event`: straight from the loader's columnar store and children
// index when the schema holds a freshly loaded trace (no SQL per node), else through SQL on the
// saved database's table (index on parent). Both give the same rows in the same order; every walk
// costs O(rows it returns).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tlsql {

struct EventStore;

struct TreeRow {
  int64_t uid = 0, parent = -1, depth = 0, ts = 0, end = 0;
  bool has_parent = false, has_time = false;
  std::string kind, name, cat;
};

class TreeAccess {
 public:
  TreeAccess(sqlite3* db, const std::string& schema);
  ~TreeAccess();
  TreeAccess(const TreeAccess&) = delete;
  TreeAccess& operator=(const TreeAccess&) = delete;
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

  const EventStore* store_ = nullptr;  // the in-memory rows, when the schema has them
  sqlite3* db_;
  std::string schema_, error_, walk_error_;
  sqlite3_stmt *row_ = nullptr, *children_ = nullptr, *arg_ = nullptr;
};

bool is_gpu_work(const std::string& kind);

// What a walk says when the parent links loop through `uid`.
std::string cycle_at(int64_t uid);

// The TreeAccess for `schema`: the connection's cached one (connection_cache.h: a loaded trace's
// on every connection, a saved database's where statements are kept), else one made into `own`.
// Check ok() either way.
TreeAccess* tree_for(sqlite3* db, const std::string& schema, std::unique_ptr<TreeAccess>& own);

// The schema a function's optional `schema` argument names: "main" when absent, else the name
// given, except "db:TOKEN" (what tlsql's own views pass, from their schema's tlsql_self table),
// which names whichever attached schema holds that database, so a view works under any name.
std::string schema_arg(sqlite3* db, sqlite3_value* v);

// The uid argument of a tlsql scalar function. False when the result is already set: NULL for a
// NULL uid (NULL in, NULL out), an error naming `fn` for anything but an integer.
bool uid_arg(sqlite3_context* ctx, sqlite3_value* v, const char* fn, int64_t& uid);

}  // namespace tlsql
