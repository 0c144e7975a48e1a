// The report runner's decisions (session/report.h): how a parameter's text is bound, how a
// report's error reads, which @parameters a report takes, and which report runs for a name on the
// loaded traces (the stand-ins of sql/fallback_report.sql, which fix a report table's columns).
#include "session/report.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

#include "src/sqlite_util.h"

namespace {

// The type and text SQLite holds for `text` bound by bind_parameter.
std::pair<int, std::string> bound(const std::string& text) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT typeof(@v), CAST(@v AS TEXT)", -1, &s, nullptr);
  tlsql::bind_parameter(s, 1, text);
  sqlite3_step(s);
  const std::string type = (const char*)sqlite3_column_text(s, 0);
  const std::string value = sqlite3_column_text(s, 1) ? (const char*)sqlite3_column_text(s, 1) : "";
  sqlite3_finalize(s);
  sqlite3_close(db);
  return {type == "integer" ? SQLITE_INTEGER : type == "real" ? SQLITE_FLOAT : SQLITE_TEXT, value};
}

}  // namespace

TEST_CASE("bind_parameter: an integer when the whole text is one, else a real, else the text") {
  CHECK(bound("3") == std::pair<int, std::string>{SQLITE_INTEGER, "3"});
  CHECK(bound("-12") == std::pair<int, std::string>{SQLITE_INTEGER, "-12"});
  CHECK(bound("007") == std::pair<int, std::string>{SQLITE_INTEGER, "7"});  // .parameter set @step 007 is step 7
  CHECK(bound("0.5") == std::pair<int, std::string>{SQLITE_FLOAT, "0.5"});
  CHECK(bound("1e-05") == std::pair<int, std::string>{SQLITE_FLOAT, "1.0e-05"});
  CHECK(bound("all") == std::pair<int, std::string>{SQLITE_TEXT, "all"});
  CHECK(bound("3 ") == std::pair<int, std::string>{SQLITE_TEXT, "3 "});  // not a whole number
  CHECK(bound("") == std::pair<int, std::string>{SQLITE_TEXT, ""});
  // Past int64 it is no integer: the real (it was bound as 9223372036854775807 before).
  CHECK(bound("99999999999999999999").first == SQLITE_FLOAT);
  // Decimal numbers only: what strtod also takes stays text (issue 45.10).
  for (const char* text : {"0x10", "NaN", "nan", "inf", "-Infinity", " 3", "+", ".", "1e", "1e999", "0x1p3"})
    CHECK(bound(text) == std::pair<int, std::string>{SQLITE_TEXT, text});
  CHECK(bound("+2.5e+1") == std::pair<int, std::string>{SQLITE_FLOAT, "25.0"});
  CHECK(bound(".5") == std::pair<int, std::string>{SQLITE_FLOAT, "0.5"});
}

TEST_CASE("report_error: 'report NAME: MSG', the name said once") {
  CHECK(tlsql::report_error("ops", "no such table: op") == "report ops: no such table: op");
  CHECK(tlsql::report_error("critical_path", "critical_path: trace must be a trace id") ==
        "report critical_path: trace must be a trace id");
  CHECK(tlsql::report_error("diff", "diff_kernels: x") == "report diff: diff_kernels: x");  // another name stays
}

TEST_CASE("report_parameters: the @names a report's SQL reads, once each, not the views' @schema") {
  const auto p = tlsql::report_parameters("overlap");
  CHECK(p == std::vector<std::string>{"@rank", "@steps", "@gpus_per_node"});
  CHECK(tlsql::report_parameters("no_such_report").empty());
  CHECK(tlsql::is_report("timeline_ranks"));
  CHECK(!tlsql::is_report(""));
}

TEST_CASE("plan_report: the stand-ins depend on the traces alone") {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  // The two tables sql/fallback_report.sql reads, by hand: one trace with a kernel.
  tlsql::exec_sql(db,
                  "CREATE TABLE trace(id); CREATE TABLE event(kind); INSERT INTO trace VALUES (0);"
                  "INSERT INTO event VALUES ('cpu_op'), ('kernel')");
  const tlsql::ReportHints hints{"LIST", "ATTACH"};
  auto runs = [&](const char* name) { return tlsql::plan_report(db, name, hints).name; };
  CHECK(runs("timeline") == "timeline");
  CHECK(runs("ops") == "ops");
  tlsql::exec_sql(db, "INSERT INTO trace VALUES (1)");  // a second rank
  CHECK(runs("timeline") == "timeline_ranks");
  CHECK(tlsql::plan_report(db, "timeline", hints).why.empty());    // nothing to say: the rank column says it
  tlsql::exec_sql(db, "DELETE FROM event WHERE kind = 'kernel'");  // no GPU work
  CHECK(runs("ops") == "cpu_ops");
  CHECK(tlsql::plan_report(db, "ops", hints).why.starts_with("no GPU events"));
  CHECK_THROWS_WITH_AS(tlsql::plan_report(db, "opps", hints), "no report 'opps': did you mean ops? LIST",
                       tlsql::ReportError);
  CHECK_THROWS_WITH_AS(tlsql::plan_report(db, "diff_kernels", hints), "diff_kernels needs a second trace: ATTACH",
                       tlsql::ReportError);
  sqlite3_close(db);
}
