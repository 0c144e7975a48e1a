#include "udf/registry.h"

#include "udf/connection_cache.h"
#include "udf/sql_function.h"
#include "udf/user_models.h"

namespace tlsql {

const std::vector<SqlFunction>& sql_functions() {
  static const std::vector<SqlFunction> all = [] {
    std::vector<SqlFunction> v;
    for (auto family : {tree_functions, perf_functions, interval_functions, stats_functions, optimizable_functions,
                        critical_path_functions, tree_diff_functions, engine_step_functions, replay_functions})
      for (SqlFunction& f : family()) v.push_back(f);
    return v;
  }();
  return all;
}

int hidden_args_best_index(sqlite3_index_info* info, int first, int count) {
  int given[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.op != SQLITE_INDEX_CONSTRAINT_EQ || c.iColumn < first || c.iColumn >= first + count) continue;
    if (!c.usable) return SQLITE_CONSTRAINT;
    given[c.iColumn - first] = i;
  }
  int plan = 0, arg = 0;
  for (int k = 0; k < count && k < 8; ++k)
    if (given[k] >= 0) {
      plan |= 1 << k;
      info->aConstraintUsage[given[k]].argvIndex = ++arg;
      info->aConstraintUsage[given[k]].omit = 1;
    }
  info->idxNum = plan;
  info->estimatedCost = given[0] >= 0 ? 1e3 : 1e12;
  info->estimatedRows = 1000;
  return SQLITE_OK;
}

namespace {

// tlsql_functions: the registry as an eponymous table.
struct FunctionsCursor : VtabCursor<ConnectionTable> {
  size_t at = 0;
  static std::string declaration() { return "CREATE TABLE x(name TEXT, arguments TEXT, kind TEXT, help TEXT)"; }
  static int best_index(ConnectionTable&, sqlite3_index_info* info) {
    info->estimatedCost = (double)sql_functions().size();
    return SQLITE_OK;
  }
  int filter(int, int, sqlite3_value**) { return at = 0, SQLITE_OK; }
  bool eof() const { return at >= sql_functions().size(); }
  void next() { ++at; }
  void column(sqlite3_context* ctx, int col) const {
    const SqlFunction& f = sql_functions()[at];
    static const char* const kinds[] = {"scalar", "aggregate", "table"};
    const char* v = col == 0 ? f.name : col == 1 ? f.arguments : col == 2 ? kinds[f.kind] : f.help;
    sqlite3_result_text(ctx, v, -1, SQLITE_STATIC);
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

// Every scalar and aggregate callback runs behind the barrier (sql_function.h): SQLite calls
// these, with the function's registry entry as its user data.
void scalar_barrier(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const SqlFunction& f = called_function(ctx);
  function_barrier(ctx, f, [&] { f.fn(ctx, argc, argv); });
}
void final_barrier(sqlite3_context* ctx) {
  const SqlFunction& f = called_function(ctx);
  function_barrier(ctx, f, [&] { f.final(ctx); });
}

}  // namespace

void register_sql_function(sqlite3* db, const SqlFunction& f) {
  if (f.kind == SqlFunction::table) {
    sqlite3_create_module_v2(db, f.name, f.module, f.user_data, nullptr);
    return;
  }
  // A function that is not innocuous (it starts a process, changes the connection's state or
  // opens files) runs only from SQL the user typed, never from a view or trigger in a file.
  const int flags = (f.flags & SQLITE_INNOCUOUS) ? f.flags : f.flags | SQLITE_DIRECTONLY;
  for (int argc = f.min_args; argc <= f.max_args; ++argc)
    sqlite3_create_function_v2(db, f.name, argc, flags, const_cast<SqlFunction*>(&f),
                               f.kind == SqlFunction::scalar ? scalar_barrier : nullptr,
                               f.kind == SqlFunction::aggregate ? scalar_barrier : nullptr,
                               f.kind == SqlFunction::aggregate ? final_barrier : nullptr, nullptr);
}

void register_sql_functions(sqlite3* db) {
  for (const SqlFunction& f : sql_functions()) register_sql_function(db, f);
  // The connection's state (connection_cache.h: computed data, perf tables, the user's models)
  // goes when the connection closes: SQLite then calls this module's destructor, whoever opened
  // the connection (the tlsql session or a host that loaded the extension).
  sqlite3_create_module_v2(db, "tlsql_functions", vtab_module<FunctionsCursor>(), open_connection_state(db),
                           close_connection_state);
  install_user_models(db);
}

}  // namespace tlsql
