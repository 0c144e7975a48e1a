// src/db_writer.h: create_schema skips its scripts only where running them would change nothing.
#include "src/db_writer.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
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

// The statements `f` runs on `db` that create or insert (sqlite3_trace_v2).
template <class F>
int statements_run(sqlite3* db, F&& f) {
  int n = 0;
  sqlite3_trace_v2(
      db, SQLITE_TRACE_STMT,
      [](unsigned, void* count, void* stmt, void*) {
        const std::string sql = sqlite3_sql(static_cast<sqlite3_stmt*>(stmt));
        if (sql.find("CREATE") != std::string::npos || sql.find("INSERT") != std::string::npos)
          ++*static_cast<int*>(count);
        return 0;
      },
      &n);
  f();
  sqlite3_trace_v2(db, 0, nullptr, nullptr);
  return n;
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
    // On a complete schema create_schema runs none of the scripts' statements (their CREATEs and
    // INSERTs are no-ops there, so only a trace of what runs tells).
    CHECK(statements_run(db, [&] { create_schema(db, schema); }) == 0);
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

namespace {

// A Kineto trace of `launches` ops each launching one kernel, with `metadata` (top-level keys).
std::string trace_text(int launches, const std::string& metadata) {
  std::string events;
  for (int i = 0; i < launches; ++i) {
    const int ts = 100 * i;
    events += fmt::format(
        R"({}{{"ph":"X","cat":"cpu_op","name":"aten::op{}","pid":1,"tid":1,"ts":{},"dur":20}},)"
        R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"correlation":{}}}}},)"
        R"({{"ph":"X","cat":"kernel","name":"k{}","pid":0,"tid":7,"ts":{},"dur":30,"args":{{"correlation":{},"device":0,"stream":7}}}})",
        i ? "," : "", i % 3, ts, ts + 2, i + 1, i % 2, ts + 10, i + 1);
  }
  return fmt::format(R"({{"traceEvents":[{}]{}}})", events, metadata);
}

// Per trace: what the writer put in each small table, uids relative to the trace's first.
std::string written(sqlite3* db, int64_t trace) {
  std::string out;
  auto add = [&](const std::string& sql) {
    Statement q(db, sql);
    sqlite3_bind_int64(q.get(), 1, trace);
    while (q.step()) {
      for (int c = 0; c < sqlite3_column_count(q.get()); ++c) {
        const auto* text = (const char*)sqlite3_column_text(q.get(), c);
        out += text ? text : "NULL";
        out += '|';
      }
      out += '\n';
    }
  };
  add("SELECT rank, world_size, events, bytes, metadata, schema_version, load_ms > 0 FROM trace WHERE id = ?1");
  add("SELECT id, name, vendor, sm_count, properties FROM device WHERE trace = ?1 ORDER BY id");
  add("SELECT \"check\", count, example_uid - (SELECT uid_base FROM trace WHERE id = ?1), detail, "
      "gpu_events_affected FROM health WHERE trace = ?1 ORDER BY 1");
  add("SELECT gpu - t.uid_base, runtime - t.uid_base, launcher - t.uid_base FROM launch_link, trace t WHERE t.id = ?1 "
      "AND gpu BETWEEN t.uid_base AND t.uid_base + t.events - 1 ORDER BY gpu");
  return out;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = fmt::format("/tmp/tlsql-db-writer-{}-{}", getpid(), name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("A session's loads into one schema share its writer: each trace's rows as when loaded alone") {
  // 70 launches: a batch statement's 64 rows and 6 single ones; none; other metadata each.
  const std::vector<std::string> files = {
      write_file("a.json",
                 trace_text(70, R"(,"distributedInfo":{"rank":3,"world_size":8},"schemaVersion":1,)"
                                R"("deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","numSms":132}])")),
      write_file("b.json", trace_text(0, "")),
      write_file("c.json", trace_text(5, R"(,"deviceProperties":[1,{"id":0,"name":"AMD Instinct MI300X"}])")),
      write_file("d.json", trace_text(64, R"(,"distributedInfo":{"rank":5})"))};
  std::vector<std::string> alone;
  for (const std::string& f : files) {
    Session s;
    s.load(f);
    alone.push_back(written(s.db(), 0));
    if (f == files[0]) CHECK(column(s.db(), "SELECT count(*) FROM launch_link")[0] == "70");  // (links read)
  }
  Session together;
  // The connection's prepared statements: the writer's stay from the first load on, the same ones.
  auto prepared = [&] {
    std::vector<sqlite3_stmt*> out;
    for (sqlite3_stmt* p = sqlite3_next_stmt(together.db(), nullptr); p; p = sqlite3_next_stmt(together.db(), p))
      out.push_back(p);
    return out;
  };
  const size_t before = prepared().size();
  std::vector<sqlite3_stmt*> after_first;
  for (size_t k = 0; k < files.size(); ++k) {
    together.load(files[k]);
    if (k == 0) after_first = prepared();
    if (k == 1) exec_sql(together.db(), "DROP VIEW device_gpu");  // (the next load makes it again)
  }
  CHECK(after_first.size() > before);
  CHECK(prepared() == after_first);
  for (size_t k = 0; k < files.size(); ++k) {
    CAPTURE(files[k]);
    CHECK(written(together.db(), (int64_t)k) == alone[k]);
  }
  CHECK(column(together.db(), "SELECT count(*) FROM sqlite_schema WHERE name = 'device_gpu'")[0] == "1");
  // (The comparison reads something: post_load's columns, and the last link, past the batch of 64:
  // launch i's op, call and kernel are uids 3i, 3i + 1 and 3i + 2.)
  CHECK(alone[0].starts_with("3|8|210|"));
  CHECK(alone[0].find("NVIDIA H100 80GB HBM3") != std::string::npos);
  CHECK(alone[0].find("\n209|208|207|\n") != std::string::npos);
  CHECK(alone[2].find("odd_metadata") != std::string::npos);
  for (const std::string& f : files) std::remove(f.c_str());
}
