// src/sql_names.h: the one place a name becomes SQL text.
#include "src/sql_names.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

using namespace tlsql;

TEST_CASE("quote_identifier and quote_literal double their quote, whatever the text") {
  CHECK(quote_identifier("main") == "\"main\"");
  CHECK(quote_identifier("a\"b") == "\"a\"\"b\"");
  CHECK(quote_identifier("main\".\"tlsql_self\" AS t0, (SELECT 1) AS z, \"main") ==
        "\"main\"\".\"\"tlsql_self\"\" AS t0, (SELECT 1) AS z, \"\"main\"");
  CHECK(quote_identifier("") == "\"\"");
  CHECK(quote_literal("it's") == "'it''s'");
}

TEST_CASE("glob_containing matches what instr finds: every text with the text in it, metacharacters literal") {
  // The rule it stands for, written here: instr(name, text) > 0 (a byte search: for valid UTF-8
  // the same as SQLite's character search).
  const char* texts[] = {"ProfilerStep", "*", "?", "[", "]", "a*b", "x?y", "[0]", "[!a]", "é", "", "ab[c-d]*"};
  const char* names[] = {
      "ProfilerStep#3", "profilerstep", "a*b", "axb", "x?y", "xzy", "[0]",          "0", "[!a]", "b", "é", "e", "",
      "ab[c-d]*x",      "abc",          "*",   "?",   "[",   "]",   "Profiler Step"};
  for (const char* t : texts)
    for (const char* n : names) {
      CAPTURE(t);
      CAPTURE(n);
      CHECK((sqlite3_strglob(glob_containing(t).c_str(), n) == 0) == (std::string(n).find(t) != std::string::npos));
    }
  CHECK(glob_containing("a*b?[") == "*a[*]b[?][[]*");
}

TEST_CASE("a schema is one the connection has attached, as SQLite spells it, or none") {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
  attach_database(db, ":memory:", "other");
  attach_database(db, ":memory:", "we\"ird -- name");
  CHECK(attached_schema(db, "main") == std::optional<std::string>("main"));
  CHECK(attached_schema(db, "MAIN") == std::optional<std::string>("main"));  // SQLite ignores ASCII case
  CHECK(attached_schema(db, "Other") == std::optional<std::string>("other"));
  CHECK(attached_schema(db, "temp") == std::optional<std::string>("temp"));
  CHECK(attached_schema(db, "we\"ird -- name") == std::optional<std::string>("we\"ird -- name"));
  CHECK_FALSE(attached_schema(db, "nowhere"));
  CHECK_FALSE(attached_schema(db, "main\".\"x"));
  CHECK_FALSE(attached_schema(db, std::string("main\0x", 6)));
  CHECK(schema_sql(db, "we\"ird -- name") == "\"we\"\"ird -- name\"");
  CHECK_THROWS_AS(schema_sql(db, "main\" AS a, (SELECT 1) AS \"b"), SchemaError);
  // The quoted name works in SQL: a table made through it is found under the name.
  exec_sql(db, "CREATE TABLE " + schema_sql(db, "we\"ird -- name") + ".t(x)");
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_list WHERE schema = ?1 AND name = 't'", -1, &s,
                             nullptr) == SQLITE_OK);
  sqlite3_bind_text(s, 1, "we\"ird -- name", -1, SQLITE_STATIC);
  REQUIRE(sqlite3_step(s) == SQLITE_ROW);
  CHECK(sqlite3_column_int(s, 0) == 1);
  sqlite3_finalize(s);
  detach_quietly(db, "we\"ird -- name");
  CHECK_FALSE(attached_schema(db, "we\"ird -- name"));
  sqlite3_close(db);
}
