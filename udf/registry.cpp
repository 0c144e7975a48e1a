#include "udf/registry.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "udf/connection_cache.h"
#include "udf/sql_function.h"
#include "udf/table_function.h"

namespace tlsql {

namespace {

// The registrations in the order the static initializers ran (unspecified across files); a
// function-local static, so it exists before the first registrar needs it.
std::vector<FunctionRegistration>& registrations() {
  static std::vector<FunctionRegistration> all;
  return all;
}

// The family folders in .help order: the build's list (CMakeLists.txt TLSQL_UDF_FAMILIES).
size_t family_rank(std::string_view file) {
  std::string_view families = TLSQL_UDF_FAMILIES, family = file.substr(0, file.find('/'));
  size_t rank = 0;
  for (size_t at = 0; at <= families.size(); ++rank) {
    size_t comma = std::min(families.find(',', at), families.size());
    if (families.substr(at, comma - at) == family) return rank;
    at = comma + 1;
  }
  return rank;
}

}  // namespace

RegisterFunctions::RegisterFunctions(const char* family, const char* file, std::vector<SqlFunction> (*list)(),
                                     void (*setup)(sqlite3*)) noexcept {
  std::string_view path(file);  // __FILE__: absolute or relative to the build folder
  path.remove_prefix(path.find_last_of('/') + 1);
  registrations().push_back({std::string(family) + "/" + std::string(path), list, setup});
}

const std::vector<FunctionRegistration>& function_registrations() {
  static const std::vector<FunctionRegistration> sorted = [] {
    std::vector<FunctionRegistration> v = registrations();
    std::stable_sort(v.begin(), v.end(), [](const FunctionRegistration& a, const FunctionRegistration& b) {
      return std::pair(family_rank(a.file), a.file) < std::pair(family_rank(b.file), b.file);
    });
    return v;
  }();
  return sorted;
}

const std::vector<SqlFunction>& sql_functions() {
  static const std::vector<SqlFunction> all = [] {
    std::vector<SqlFunction> v;
    for (const FunctionRegistration& r : function_registrations())
      for (SqlFunction& f : r.list()) v.push_back(f);
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
struct Functions {
  using Row = const SqlFunction*;
  static constexpr std::array<TableArgument, 0> arguments{};
  static constexpr double cost = 100;
  std::vector<Row> rows(const TableCall&) {
    std::vector<Row> out;
    for (const SqlFunction& f : sql_functions()) out.push_back(&f);
    return out;
  }
  static auto columns() {
    using C = TableColumn<Functions, Row>;
    static const char* const kinds[] = {"scalar", "aggregate", "table"};
    return std::to_array<C>({
        {"name", "TEXT", [](sqlite3_context* c, Functions&, const Row& f) { result(c, f->name); }},
        {"arguments", "TEXT", [](sqlite3_context* c, Functions&, const Row& f) { result(c, f->arguments); }},
        {"kind", "TEXT", [](sqlite3_context* c, Functions&, const Row& f) { result(c, kinds[f->kind]); }},
        {"help", "TEXT", [](sqlite3_context* c, Functions&, const Row& f) { result(c, f->help); }},
    });
  }
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
  sqlite3_create_module_v2(db, "tlsql_functions", table_module<Functions>(),
                           new TableInfo{"tlsql_functions", open_connection_state(db)}, [](void* p) {
                             auto* info = static_cast<TableInfo*>(p);
                             close_connection_state(info->data);
                             delete info;
                           });
  for (const FunctionRegistration& r : function_registrations())
    if (r.setup) r.setup(db);
}

}  // namespace tlsql
