// The exception barrier (udf/sql_function.h, src/sqlite_vtab.h): whatever a scalar, an aggregate
// or a table-valued function throws becomes the statement's error, in the `fn(args): message`
// format, on a plain sqlite3 connection (as Python's sqlite3 or the sqlite3 shell opens one).
// Without the barrier these throws unwind through SQLite's C frames: the test process aborts.
#include "udf/sql_function.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <new>
#include <stdexcept>
#include <string>

#include "src/sqlite_util.h"
#include "src/sqlite_vtab.h"
#include "udf/registry.h"

namespace {

using namespace tlsql;

void throws_sql(sqlite3_context*, int, sqlite3_value**) { throw SqlError("no such table: t"); }
void throws_oom(sqlite3_context*, int, sqlite3_value**) { throw std::bad_alloc(); }
void throws_std(sqlite3_context*, int, sqlite3_value**) { throw std::out_of_range("vector::at"); }
void throws_int(int) { throw 7; }  // not a std::exception
void throws_other(sqlite3_context*, int, sqlite3_value**) { throws_int(0); }
// Reads its argument with the shared reader (a text throws FunctionError), else doubles it.
void twice(sqlite3_context* ctx, int, sqlite3_value** argv) { sqlite3_result_int64(ctx, 2 * int_arg(argv[0], "n")); }
// A message that already names the function keeps its own form.
void named(sqlite3_context*, int, sqlite3_value**) { throw FunctionError("named(7): no event has uid 7"); }
void data_fn(sqlite3_context* ctx, int, sqlite3_value**) {
  sqlite3_result_int64(ctx, (sqlite3_int64) reinterpret_cast<intptr_t>(function_data(ctx)));
}
void count_step(sqlite3_context* ctx, int, sqlite3_value**) {
  if (auto* n = static_cast<int*>(sqlite3_aggregate_context(ctx, sizeof(int)))) ++*n;
}
void final_throws(sqlite3_context*) { throw SqlError("database is locked"); }

SqlFunction scalar(const char* name, const char* args, void (*fn)(sqlite3_context*, int, sqlite3_value**)) {
  SqlFunction f{name, args, "test"};
  f.fn = fn;
  return f;
}

const SqlFunction kFunctions[] = {
    scalar("throws_sql", "(x)", throws_sql),
    scalar("throws_oom", "(x)", throws_oom),
    scalar("throws_std", "(x)", throws_std),
    scalar("throws_other", "(x)", throws_other),
    scalar("twice", "(n)", twice),
    scalar("named", "(uid)", named),
    [] {
      SqlFunction f = scalar("data_fn", "(x)", data_fn);
      f.user_data = reinterpret_cast<void*>(intptr_t{42});
      return f;
    }(),
    [] {
      SqlFunction f{"count_then_throw", "(x)", "test", SqlFunction::aggregate};
      f.fn = count_step, f.final = final_throws;
      return f;
    }(),
};

// A table-valued function whose scan throws what its one argument names.
struct ThrowingCursor : VtabCursor<ConnectionTable> {
  static std::string declaration() { return "CREATE TABLE x(v INTEGER, what HIDDEN)"; }
  static int best_index(ConnectionTable&, sqlite3_index_info* info) { return hidden_args_best_index(info, 1, 1); }
  int filter(int, int argc, sqlite3_value** argv) {
    const std::string what = argc > 0 && sqlite3_value_text(argv[0]) ? (const char*)sqlite3_value_text(argv[0]) : "";
    if (what == "oom") throw std::bad_alloc();
    if (what == "sql") throw SqlError("disk I/O error");
    return SQLITE_OK;
  }
  bool eof() const { return true; }
  void next() {}
  void column(sqlite3_context*, int) const {}
  sqlite3_int64 rowid() const { return 0; }
};

struct Db {
  sqlite3* db = nullptr;
  Db() {
    sqlite3_open(":memory:", &db);
    for (const SqlFunction& f : kFunctions) register_sql_function(db, f);
    sqlite3_create_module_v2(db, "throwing", vtab_module<ThrowingCursor>(), nullptr, nullptr);
  }
  ~Db() { sqlite3_close(db); }
  // (result code, the error message or the first column's text)
  std::pair<int, std::string> run(const char* sql) const {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    std::string out =
        rc == SQLITE_ROW && sqlite3_column_text(s, 0) ? (const char*)sqlite3_column_text(s, 0) : sqlite3_errmsg(db);
    sqlite3_finalize(s);
    return {rc, out};
  }
};

}  // namespace

TEST_CASE("a scalar's throw is the statement's error, as fn(args): message") {
  Db d;
  CHECK(d.run("SELECT throws_sql(1)") == std::pair<int, std::string>{SQLITE_ERROR, "throws_sql(x): no such table: t"});
  CHECK(d.run("SELECT throws_std(1)") == std::pair<int, std::string>{SQLITE_ERROR, "throws_std(x): vector::at"});
  CHECK(d.run("SELECT throws_other(1)") == std::pair<int, std::string>{SQLITE_ERROR, "throws_other(x): unknown error"});
  CHECK(d.run("SELECT throws_oom(1)").first == SQLITE_NOMEM);
  CHECK(d.run("SELECT named(7)") == std::pair<int, std::string>{SQLITE_ERROR, "named(7): no event has uid 7"});
  // The connection still works after each.
  CHECK(d.run("SELECT twice(21)") == std::pair<int, std::string>{SQLITE_ROW, "42"});
}

TEST_CASE("the shared argument readers name the argument") {
  Db d;
  CHECK(d.run("SELECT twice('x')") == std::pair<int, std::string>{SQLITE_ERROR, "twice(n): n must be an integer"});
  CHECK(d.run("SELECT twice(NULL)") ==
        std::pair<int, std::string>{SQLITE_ERROR, "twice(n): n must be an integer, not NULL"});
  CHECK(d.run("SELECT twice('12')") == std::pair<int, std::string>{SQLITE_ROW, "24"});  // (SQLite's numeric text)
}

TEST_CASE("a function's own user data reaches it through the barrier") {
  Db d;
  CHECK(d.run("SELECT data_fn(0)") == std::pair<int, std::string>{SQLITE_ROW, "42"});
}

TEST_CASE("an aggregate's final step throwing is the statement's error") {
  Db d;
  CHECK(d.run("SELECT count_then_throw(value) FROM json_each('[1,2,3]')") ==
        std::pair<int, std::string>{SQLITE_ERROR, "count_then_throw(x): database is locked"});
}

TEST_CASE("a table-valued function's throw is the statement's error") {
  Db d;
  CHECK(d.run("SELECT count(*) FROM throwing('none')") == std::pair<int, std::string>{SQLITE_ROW, "0"});
  CHECK(d.run("SELECT count(*) FROM throwing('sql')") == std::pair<int, std::string>{SQLITE_ERROR, "disk I/O error"});
  CHECK(d.run("SELECT count(*) FROM throwing('oom')").first == SQLITE_NOMEM);
}

TEST_CASE("every tlsql function registers behind the barrier on a plain connection") {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  register_sql_functions(db);
  sqlite3_stmt* s = nullptr;
  // No trace here: the function says so as an error (it reads an event table that is not there).
  REQUIRE(sqlite3_prepare_v2(db, "SELECT flops(1)", -1, &s, nullptr) == SQLITE_OK);
  CHECK(sqlite3_step(s) == SQLITE_ERROR);
  CHECK(std::string(sqlite3_errmsg(db)).rfind("flops", 0) == 0);
  sqlite3_finalize(s);
  CHECK(sqlite3_close(db) == SQLITE_OK);
}
