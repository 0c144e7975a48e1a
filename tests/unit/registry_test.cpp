// Self-registration (udf/registry.h TLSQL_FUNCTIONS): every file of a udf/ family folder that
// registers functions is in the registry, and each of its functions is on a connection after
// register_sql_functions. The expected files are found by the build (tests/CMakeLists.txt greps
// udf/*/*.cpp for the macro at configure), not by the registry, so an object file the link
// dropped, or a registrar that never ran, fails here. A registrar in this file (another binary's
// object, initialized after libtlsql.so's) shows the mechanism does not depend on the order of
// static initialization across files.
#include "udf/registry.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace tlsql;

void answer(sqlite3_context* ctx, int, sqlite3_value**) { sqlite3_result_int64(ctx, 42); }
std::vector<SqlFunction> test_functions() {
  SqlFunction f{"registry_test_answer", "()", "test: 42"};
  f.min_args = f.max_args = 0;
  f.fn = answer;
  return {f};
}
const RegisterFunctions registered_here{"tests", __FILE__, test_functions};

std::set<std::string> names_on(sqlite3* db, const char* list) {
  std::set<std::string> names;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, (std::string("SELECT name FROM ") + list).c_str(), -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) names.insert((const char*)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return names;
}

}  // namespace

TEST_CASE("every udf file that registers functions is in the registry, and its functions on a connection") {
  std::set<std::string> registered;
  for (const FunctionRegistration& r : function_registrations()) registered.insert(r.file);
  std::string_view expected = TLSQL_REGISTERING_FILES;  // "stats/trace_kinds.cpp,tree/..."
  int files = 0;
  for (size_t at = 0; at < expected.size();) {
    size_t comma = std::min(expected.find(',', at), expected.size());
    std::string file(expected.substr(at, comma - at));
    CHECK_MESSAGE(registered.count(file), "udf/" << file << " registers functions but is not in the registry");
    ++files, at = comma + 1;
  }
  CHECK(files >= 11);  // the families' files when registration became self-registration
  CHECK(registered.count("tests/registry_test.cpp"));

  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
  register_sql_functions(db);
  const auto functions = names_on(db, "pragma_function_list"), modules = names_on(db, "pragma_module_list");
  size_t listed = 0;
  for (const FunctionRegistration& r : function_registrations())
    for (const SqlFunction& f : r.list()) {
      ++listed;
      CHECK_MESSAGE((f.kind == SqlFunction::table ? modules : functions).count(f.name),
                    f.name << " (udf/" << r.file << ") is registered on the connection");
    }
  CHECK(listed == sql_functions().size());
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db,
                             "SELECT registry_test_answer(), count(*) FROM tlsql_functions WHERE name IN "
                             "('registry_test_answer', 'trace_kinds', 'descendants', 'flops')",
                             -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(sqlite3_column_int64(st, 0) == 42);
  CHECK(sqlite3_column_int64(st, 1) == 4);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_CASE("the registry lists families in the build's order, files by name within one") {
  const auto& r = function_registrations();
  REQUIRE(r.size() >= 2);
  CHECK(std::string_view(r.front().file).starts_with("tree/"));  // the first family of TLSQL_UDF_FAMILIES
  CHECK(r.back().file == "tests/registry_test.cpp");             // no family of the build: last
  std::vector<std::string> stats;
  for (const auto& x : r)
    if (x.file.starts_with("stats/")) stats.push_back(x.file);
  CHECK(stats == std::vector<std::string>{"stats/interval_functions.cpp", "stats/kernel_totals.cpp",
                                          "stats/name_totals.cpp", "stats/sql_round.cpp", "stats/stats_functions.cpp",
                                          "stats/step_busy.cpp", "stats/trace_kinds.cpp"});
}
