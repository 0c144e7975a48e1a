#include "udf/registry.h"

#include "udf/perf_table.h"
#include "udf/user_models.h"

namespace tlsql {

const std::vector<SqlFunction>& sql_functions() {
  static const std::vector<SqlFunction> all = [] {
    std::vector<SqlFunction> v;
    for (auto family : {tree_functions, perf_functions, interval_functions, stats_functions, optimizable_functions,
                        critical_path_functions, tree_diff_functions, replay_functions})
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
struct Cursor {
  sqlite3_vtab_cursor base{};
  size_t at = 0;
};

int x_connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char**) {
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(name TEXT, arguments TEXT, kind TEXT, help TEXT)");
  if (rc != SQLITE_OK) return rc;
  *out = new sqlite3_vtab{};
  return SQLITE_OK;
}
int x_disconnect(sqlite3_vtab* v) {
  delete v;
  return SQLITE_OK;
}
int x_best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  info->estimatedCost = (double)sql_functions().size();
  return SQLITE_OK;
}
int x_open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  *out = &(new Cursor)->base;
  return SQLITE_OK;
}
int x_close(sqlite3_vtab_cursor* c) {
  delete reinterpret_cast<Cursor*>(c);
  return SQLITE_OK;
}
int x_filter(sqlite3_vtab_cursor* c, int, const char*, int, sqlite3_value**) {
  reinterpret_cast<Cursor*>(c)->at = 0;
  return SQLITE_OK;
}
int x_next(sqlite3_vtab_cursor* c) {
  ++reinterpret_cast<Cursor*>(c)->at;
  return SQLITE_OK;
}
int x_eof(sqlite3_vtab_cursor* c) { return reinterpret_cast<Cursor*>(c)->at >= sql_functions().size(); }
int x_column(sqlite3_vtab_cursor* c, sqlite3_context* ctx, int col) {
  const SqlFunction& f = sql_functions()[reinterpret_cast<Cursor*>(c)->at];
  static const char* const kinds[] = {"scalar", "aggregate", "table"};
  const char* v = col == 0 ? f.name : col == 1 ? f.arguments : col == 2 ? kinds[f.kind] : f.help;
  sqlite3_result_text(ctx, v, -1, SQLITE_STATIC);
  return SQLITE_OK;
}
int x_rowid(sqlite3_vtab_cursor* c, sqlite3_int64* rowid) {
  *rowid = (sqlite3_int64) reinterpret_cast<Cursor*>(c)->at;
  return SQLITE_OK;
}
const sqlite3_module kFunctionsModule = {0,       nullptr, x_connect, x_best_index, x_disconnect, nullptr,
                                         x_open,  x_close, x_filter,  x_next,       x_eof,        x_column,
                                         x_rowid, nullptr, nullptr,   nullptr,      nullptr,      nullptr,
                                         nullptr, nullptr, nullptr,   nullptr,      nullptr,      nullptr};

}  // namespace

void register_sql_functions(sqlite3* db) {
  for (const SqlFunction& f : sql_functions()) {
    if (f.kind == SqlFunction::table) {
      sqlite3_create_module_v2(db, f.name, f.module, f.user_data, nullptr);
      continue;
    }
    for (int argc = f.min_args; argc <= f.max_args; ++argc)
      sqlite3_create_function_v2(db, f.name, argc, f.flags, f.user_data, f.kind == SqlFunction::scalar ? f.fn : nullptr,
                                 f.kind == SqlFunction::aggregate ? f.fn : nullptr, f.final, nullptr);
  }
  // The perf tables computed for `db` (perf_table.h) go when the connection closes: SQLite then
  // calls this module's destructor, whoever opened the connection (the tlsql session or a host
  // that loaded the extension).
  install_user_models(db);
  sqlite3_create_module_v2(db, "tlsql_functions", &kFunctionsModule, db, [](void* closing) {
    drop_perf_tables(closing);
    drop_user_models(static_cast<sqlite3*>(closing));
  });
}

}  // namespace tlsql
