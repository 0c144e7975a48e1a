#include "session/report_table.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "session/session.h"
#include "session/suggest.h"
#include "src/sql_assets.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"
#include "src/sqlite_vtab.h"
#include "udf/registry.h"

namespace tlsql {

namespace {

struct ReportModule {
  std::string name;
  ReportHints hints;
};

bool main_has_events(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  bool found =
      sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_schema WHERE name = 'event'", -1, &s, nullptr) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  return found;
}

// The report's one statement prepared on `db` (nullptr never: throws). A report table streams the
// rows of one statement while its host's statement runs, so the report must be one read-only
// statement: SQLite refuses DDL (a DROP TABLE) while other statements read, and a table must not
// write. Every shipped report is (tests/extension/check_extension.py runs each as a table).
sqlite3_stmt* prepare_report(sqlite3* db, const std::string& name) {
  const std::string sql = sql_for("report_" + name, "main");
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, &tail) != SQLITE_OK || !stmt) {
    std::string msg = stmt ? "" : sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    throw ReportError(report_error(name, msg.empty() ? "no statement" : msg));
  }
  sqlite3_stmt* more = nullptr;
  const bool one = sqlite3_prepare_v2(db, tail, -1, &more, nullptr) == SQLITE_OK && !more;
  sqlite3_finalize(more);
  if (!one || !sqlite3_stmt_readonly(stmt) || sqlite3_column_count(stmt) == 0) {
    sqlite3_finalize(stmt);
    throw ReportError(report_error(name, "a report table runs one read-only SELECT, and this report is not one"));
  }
  return stmt;
}

struct ReportTable : sqlite3_vtab {
  static constexpr bool direct_only = true;  // it runs SQL of its own, some of it DIRECTONLY
  ReportTable(sqlite3* connection, void* aux, int, const char* const*)
      : sqlite3_vtab{}, db(connection), module(static_cast<const ReportModule*>(aux)) {
    const std::string& asked = module->name;
    if (!main_has_events(db) && !is_fleet_database(db))  // (a fleet.db's reports read its own tables)
      throw ReportError(
          fmt::format("report_{}: no trace in main: SELECT tlsql_load(path) first, or open a database "
                      "tlsql saved",
                      asked));
    runs = plan_report(db, asked, module->hints).name;
    sqlite3_stmt* stmt = prepare_report(db, runs);
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) columns.emplace_back(sqlite3_column_name(stmt, i));
    sqlite3_finalize(stmt);
    for (size_t i = 0; i < columns.size(); ++i)
      for (size_t j = 0; j <= i; ++j)
        if (strcasecmp(columns[i].c_str(), j < i ? columns[j].c_str() : "params") == 0)
          throw ReportError(report_error(runs, fmt::format("two columns named '{}'", columns[i])));
  }
  std::string declaration() const {
    std::string d = "CREATE TABLE x(";
    for (const std::string& c : columns) d += quote_identifier(c) + ", ";
    return d + "params HIDDEN)";
  }
  sqlite3* db;
  const ReportModule* module;
  std::string runs;                  // the report that runs (the one asked for, or its stand-in)
  std::vector<std::string> columns;  // its columns: this table's, less the hidden params
};

// The parameters of report_NAME(params): a JSON object of names (with or without '@') and values,
// each value bound as `.parameter set` binds its text (session/report.h). A name the report does
// not read is an error: a misspelt parameter would otherwise be silently ignored.
Parameters parse_parameters(sqlite3* db, const ReportTable& t, sqlite3_value* arg) {
  Parameters out;
  if (!arg || sqlite3_value_type(arg) == SQLITE_NULL) return out;
  const std::string fn = fmt::format("report_{}(params)", t.module->name);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT key, CASE type WHEN 'true' THEN '1' WHEN 'false' THEN '0' WHEN 'text' THEN value "
                     "ELSE json_quote(value) END, type FROM json_each(?1) WHERE json_type(?1) = 'object'",
                     -1, &s, nullptr);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(s, sqlite3_finalize);
  sqlite3_bind_value(s, 1, arg);
  std::vector<std::string> known = report_parameters(t.module->name);
  for (const std::string& p : report_parameters(t.runs))
    if (std::find(known.begin(), known.end(), p) == known.end()) known.push_back(p);
  int rc;
  bool object = false;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    object = true;
    std::string_view given = (const char*)sqlite3_column_text(s, 0);
    if (!given.empty() && (given[0] == '@' || given[0] == ':' || given[0] == '$')) given.remove_prefix(1);
    std::string key = "@";
    key += given;
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      const auto m = did_you_mean(key, known);
      throw std::runtime_error(fmt::format("{}: no parameter {}: {}it reads {}", fn, key,
                                           m ? fmt::format("did you mean {}? ", *m) : "",
                                           known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    if (std::string_view((const char*)sqlite3_column_text(s, 2)) == "null") continue;  // NULL: as if not given
    out[key] = (const char*)sqlite3_column_text(s, 1);
  }
  if (rc != SQLITE_DONE) throw std::runtime_error(fmt::format("{}: {}", fn, sqlite3_errmsg(db)));
  if (!object) {  // no row: not an object, or an empty one
    Statement check(db, "SELECT json_type(?1) = 'object'");
    sqlite3_bind_value(check.get(), 1, arg);
    if (!check.step() || !sqlite3_column_int(check.get(), 0))
      throw std::runtime_error(fmt::format("{}: params must be a JSON object, such as '{{\"top\": 5}}'", fn));
  }
  return out;
}

struct ReportCursor : VtabCursor<ReportTable> {
  sqlite3_stmt* stmt = nullptr;
  bool done = true;
  int64_t row = 0;
  std::string params;
  ReportPlan report_plan;  // what runs (for its notes)
  Parameters parameters;   // as bound: its notes read them, its errors name a parameter of the wrong type
  ~ReportCursor() { sqlite3_finalize(stmt); }
  static int best_index(ReportTable& t, sqlite3_index_info* info) {
    return hidden_args_best_index(info, (int)t.columns.size(), 1);
  }
  int filter(int plan, int argc, sqlite3_value** argv) {
    ReportTable& t = table();
    sqlite3_finalize(stmt), stmt = nullptr;
    sqlite3_value* arg = (plan & 1) && argc > 0 ? argv[0] : nullptr;
    params = arg && sqlite3_value_text(arg) ? (const char*)sqlite3_value_text(arg) : "";
    const Parameters p = parse_parameters(t.db, t, arg);
    // The report that runs must still be the one whose columns this table took.
    report_plan = plan_report(t.db, t.module->name, t.module->hints);
    const std::string& runs = report_plan.name;
    if (runs != t.runs)
      return error(
          fmt::format("report_{}: the loaded traces changed since this connection gave it the columns of {}; "
                      "on them it is {}: use a new connection",
                      t.module->name, t.runs, runs));
    stmt = prepare_report(t.db, runs);
    bind_parameters(stmt, p);
    // What the shell would print beside the rows goes to the connection's notes table, where
    // the caller can read it (report.h): the stand-in's why and the about note now, why it is
    // empty once the rows are read.
    parameters = p;
    report_run_notes(t.db, report_plan, parameters);
    row = 0;
    done = false;
    step();
    return SQLITE_OK;
  }
  void step() {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) return void(++row);
    done = true;
    if (rc == SQLITE_DONE && row == 0) report_empty_note(table().db, report_plan, parameters);
    if (rc != SQLITE_DONE)
      throw std::runtime_error(report_error(table().runs, report_statement_error(table().db, stmt, parameters, rc)));
  }
  bool eof() const { return done; }
  void next() { step(); }
  void column(sqlite3_context* ctx, int col) const {
    if (col < (int)table().columns.size())
      sqlite3_result_value(ctx, sqlite3_column_value(stmt, col));
    else
      sqlite3_result_text(ctx, params.c_str(), (int)params.size(), SQLITE_TRANSIENT);
  }
  sqlite3_int64 rowid() const { return row; }
};

std::string parameter_list(const std::string& report) {  // ["top", "steps"]
  std::vector<std::string> names;
  for (const std::string& p : report_parameters(report)) names.push_back(fmt::format("\"{}\"", p.substr(1)));
  return fmt::format("[{}]", fmt::join(names, ", "));
}

// tlsql_reports: name, summary, parameters (a JSON array of the names report_NAME(params) takes).
struct ReportsCursor : VtabCursor<ConnectionTable> {
  size_t at = 0;
  static std::string declaration() { return "CREATE TABLE x(name TEXT, summary TEXT, parameters TEXT)"; }
  static int best_index(ConnectionTable&, sqlite3_index_info* info) {
    info->estimatedCost = (double)report_names().size();
    return SQLITE_OK;
  }
  int filter(int, int, sqlite3_value**) { return at = 0, SQLITE_OK; }
  bool eof() const { return at >= report_names().size(); }
  void next() { ++at; }
  void column(sqlite3_context* ctx, int col) const {
    const std::string& name = report_names()[at];
    const std::string v = col == 0 ? name : col == 1 ? report_summary(name) : parameter_list(name);
    sqlite3_result_text(ctx, v.c_str(), (int)v.size(), SQLITE_TRANSIENT);
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

// notes: report, note: what the last run of each report said beside its rows (report.h), read
// after the report: SELECT * FROM report_gemm; SELECT * FROM notes.
struct NotesCursor : VtabCursor<ConnectionTable> {
  std::vector<ReportNote> rows;
  size_t at = 0;
  static std::string declaration() { return "CREATE TABLE x(report TEXT, note TEXT)"; }
  static int best_index(ConnectionTable&, sqlite3_index_info* info) {
    info->estimatedCost = 10;
    return SQLITE_OK;
  }
  int filter(int, int, sqlite3_value**) {
    rows = report_notes(table().db);
    return at = 0, SQLITE_OK;
  }
  bool eof() const { return at >= rows.size(); }
  void next() { ++at; }
  void column(sqlite3_context* ctx, int col) const {
    const std::string& v = col == 0 ? rows[at].report : rows[at].note;
    sqlite3_result_text(ctx, v.c_str(), (int)v.size(), SQLITE_TRANSIENT);
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

}  // namespace

void register_report_tables(sqlite3* db, const ReportHints& hints) {
  for (const std::string& name : report_names())
    sqlite3_create_module_v2(db, ("report_" + name).c_str(), vtab_module<ReportCursor>(), new ReportModule{name, hints},
                             [](void* m) { delete static_cast<ReportModule*>(m); });
  sqlite3_create_module_v2(db, "tlsql_reports", vtab_module<ReportsCursor>(), nullptr, nullptr);
  sqlite3_create_module_v2(db, "notes", vtab_module<NotesCursor>(), nullptr, nullptr);
}

}  // namespace tlsql
