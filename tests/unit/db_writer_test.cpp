// src/db_writer.h: create_schema skips its scripts only where running them would change nothing.
#include "src/db_writer.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "session/session.h"
#include "src/sql_assets.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"

using namespace tlsql;

namespace {

std::vector<std::string> column(sqlite3* db, const std::string& sql) {
  std::vector<std::string> out;
  Statement q(db, sql);
  while (q.step()) {
    const auto* text = (const char*)sqlite3_column_text(q.get(), 0);
    out.emplace_back(text ? text : "NULL");
  }
  return out;
}

// What a schema holds that create_schema's scripts could change: its objects (type, name, SQL) and
// every real table's rows.
std::vector<std::string> snapshot(sqlite3* db, const std::string& schema) {
  const std::string q = schema_sql(db, schema);
  std::vector<std::string> out =
      column(db, fmt::format("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM {}.sqlite_schema "
                             "ORDER BY type, name",
                             q));
  for (const std::string& table : column(db, fmt::format("SELECT name FROM {}.sqlite_schema WHERE type = 'table' "
                                                         "AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name",
                                                         q))) {
    Statement rows(db, fmt::format("SELECT rowid, * FROM {}.{} ORDER BY rowid", q, quote_identifier(table)));
    while (rows.step()) {
      std::string row = table;
      for (int c = 0; c < sqlite3_column_count(rows.get()); ++c) {
        const auto* text = (const char*)sqlite3_column_text(rows.get(), c);
        row += text ? fmt::format(" '{}'", text) : " NULL";
      }
      out.push_back(row);
    }
  }
  return out;
}

// The rule, run rather than read: the scripts change nothing on the schema.
bool scripts_change_nothing(sqlite3* db, const std::string& schema) {
  const std::vector<std::string> before = snapshot(db, schema);
  for (const char* name : {"schema", "gpu_spec", "kernel_rules"}) exec_sql(db, sql_for(name, schema));
  return snapshot(db, schema) == before;
}

}  // namespace

TEST_CASE("create_schema skips its scripts exactly where they would change nothing") {
  Session session;
  sqlite3* db = session.db();
  attach_database(db, ":memory:", "we\"ird -- name");
  for (const std::string schema : {"main", "we\"ird -- name"}) {
    CAPTURE(schema);
    CHECK_FALSE(schema_complete(db, schema));  // (nothing there yet)
    create_schema(db, schema);
    // (false here if a statement of the scripts were one the check cannot read: every load would
    // run them)
    REQUIRE(schema_complete(db, schema));
    CHECK(scripts_change_nothing(db, schema));
    // A rule the user added stays, and the schema is still complete.
    exec_sql(db, fmt::format("INSERT INTO {}.kernel_rule(pattern, class) VALUES ('*mine*', 'compute')",
                             schema_sql(db, schema)));
    CHECK(schema_complete(db, schema));
    // Each object the scripts make, dropped, and each table they fill, emptied: the check says
    // incomplete exactly where running the scripts changes the schema, and create_schema then
    // makes it complete again.
    const std::string q = schema_sql(db, schema);
    for (const std::string& entry :
         column(db, fmt::format("SELECT type || ' ' || name FROM {}.sqlite_schema WHERE type IN ('table', "
                                "'view') AND name NOT LIKE 'sqlite_%' ORDER BY name",
                                q))) {
      const std::string type = entry.substr(0, entry.find(' ')), name = entry.substr(entry.find(' ') + 1);
      CAPTURE(name);
      for (const bool drop : {false, true}) {
        CAPTURE(drop);
        if (drop)
          exec_sql(db, fmt::format("DROP {} {}.{}", type == "view" ? "VIEW" : "TABLE", q, quote_identifier(name)));
        else if (type == "table" &&
                 column(db, fmt::format("SELECT sql FROM {}.sqlite_schema WHERE name = {}", q, quote_literal(name)))[0]
                     .starts_with("CREATE TABLE"))
          exec_sql(db, fmt::format("DELETE FROM {}.{}", q, quote_identifier(name)));
        else
          continue;
        const bool complete = schema_complete(db, schema);
        CHECK(complete == scripts_change_nothing(db, schema));  // (this runs them: complete again)
        CHECK(schema_complete(db, schema));
      }
    }
  }
}
