// The one list of the SQL functions tlsql adds. Registration on a connection, the shell's .help
// and the queryable table tlsql_functions(name, arguments, kind, help) all read it, so a function
// cannot exist without its help line or be documented without existing.
#pragma once

#include <sqlite3.h>

#include <string>
#include <vector>

#include "src/sqlite_vtab.h"

namespace tlsql {

struct SqlFunction {
  enum Kind { scalar, aggregate, table };
  const char* name;
  const char* arguments;  // as the user writes them: "(uid [, schema])"
  const char* help;       // one line
  Kind kind = scalar;
  int min_args = 1, max_args = 1;                                // scalar and aggregate
  int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS;                    // without INNOCUOUS it is registered DIRECTONLY
  void (*fn)(sqlite3_context*, int, sqlite3_value**) = nullptr;  // scalar; aggregate: step
  void (*final)(sqlite3_context*) = nullptr;                     // aggregate
  const sqlite3_module* module = nullptr;                        // table (eponymous virtual table)
  void* user_data = nullptr;  // a callback reads it with function_data(ctx) (sql_function.h)
};

// Each family of functions, in the order .help lists them.
std::vector<SqlFunction> tree_functions();
std::vector<SqlFunction> perf_functions();
std::vector<SqlFunction> name_functions();
std::vector<SqlFunction> interval_functions();
std::vector<SqlFunction> stats_functions();
std::vector<SqlFunction> trace_kind_functions();
std::vector<SqlFunction> optimizable_functions();
std::vector<SqlFunction> critical_path_functions();
std::vector<SqlFunction> tree_diff_functions();
std::vector<SqlFunction> engine_step_functions();
std::vector<SqlFunction> replay_functions();
// A family's per-connection setup, run after its functions are registered: the perf family's
// temp table of the user's models and its triggers (perf/user_models.h).
void install_user_models(sqlite3* db);

const std::vector<SqlFunction>& sql_functions();

// xBestIndex of a table-valued function whose arguments are its hidden columns [first, first +
// count): each argument given (an = constraint) goes to xFilter, in column order, and idxNum has
// bit k set when argument k was given. A plan where an argument's value is not known yet (it comes
// from a table joined later) is refused, so that SQLite picks one where it is; without the first
// argument the plan costs more (xFilter then reports the mistake).
int hidden_args_best_index(sqlite3_index_info* info, int first, int count);

// Registers every function, and the tlsql_functions table, on `db`.
void register_sql_functions(sqlite3* db);

// Registers one function on `db`, its callbacks behind the exception barrier (sql_function.h).
// `f` must outlive the connection (it is the callbacks' user data).
void register_sql_function(sqlite3* db, const SqlFunction& f);

}  // namespace tlsql
