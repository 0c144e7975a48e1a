#include "session/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "session/session.h"
#include "session/suggest.h"
#include "src/report_fallback.h"
#include "src/sql_assets.h"
#include "udf/connection_cache.h"

namespace tlsql {

namespace {

// A number as a person writes one in decimal: [+-]digits[.digits][e[+-]digits], at least one
// digit before the exponent. strtod alone would also take "0x10", "NaN", "inf" and leading blanks.
bool decimal_number(const std::string& s) {
  size_t i = 0, digits = 0;
  auto run = [&] {
    size_t n = 0;
    while (i < s.size() && std::isdigit((unsigned char)s[i])) ++i, ++n;
    return n;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  digits += run();
  if (i < s.size() && s[i] == '.') ++i, digits += run();
  if (!digits) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!run()) return false;
  }
  return i == s.size();
}

bool whole_int(const std::string& s, int64_t& v) {
  if (!decimal_number(s)) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtoll(s.c_str(), &end, 10);
  return *end == 0 && errno == 0;
}

std::string_view report_text(const std::string& name) { return sql_asset("report_" + name); }

}  // namespace

bool schema_attached(sqlite3* db, const char* name) {
  sqlite3_stmt* s = nullptr;
  bool found = false;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_database_list WHERE name = ?", -1, &s, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    found = sqlite3_step(s) == SQLITE_ROW;
  }
  sqlite3_finalize(s);
  return found;
}

void bind_parameter(sqlite3_stmt* stmt, int index, const std::string& v) {
  int64_t iv;
  const double dv = decimal_number(v) ? std::strtod(v.c_str(), nullptr) : NAN;
  if (whole_int(v, iv))
    sqlite3_bind_int64(stmt, index, iv);
  else if (std::isfinite(dv))  // (1e999 is no number SQLite can hold: the text)
    sqlite3_bind_double(stmt, index, dv);
  else
    sqlite3_bind_text(stmt, index, v.c_str(), (int)v.size(), SQLITE_TRANSIENT);
}

void bind_parameters(sqlite3_stmt* stmt, const Parameters& params) {
  for (int i = 1; i <= sqlite3_bind_parameter_count(stmt); ++i) {
    const char* name = sqlite3_bind_parameter_name(stmt, i);
    if (!name) continue;
    if (auto it = params.find(name); it != params.end()) bind_parameter(stmt, i, it->second);
  }
}

std::string report_statement_error(sqlite3* db, sqlite3_stmt* stmt, const Parameters& params, int rc) {
  if (rc == SQLITE_INTERRUPT) return "interrupted";
  const std::string msg = sqlite3_errmsg(db);
  if ((rc & 0xff) != SQLITE_MISMATCH) return msg;
  std::string named;
  for (int i = 1; i <= sqlite3_bind_parameter_count(stmt); ++i) {
    const char* name = sqlite3_bind_parameter_name(stmt, i);
    int64_t v;
    if (auto it = name ? params.find(name) : params.end(); it != params.end() && !whole_int(it->second, v))
      named += fmt::format("{}{} is '{}'", named.empty() ? "" : ", ", it->first, it->second);
  }
  return named.empty() ? msg : fmt::format("{} where a whole number goes ({})", named, msg);
}

const std::vector<std::string>& report_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const SqlAsset& a : sql_assets())
      if (a.name.starts_with("report_")) v.emplace_back(a.name.substr(7));
    return v;
  }();
  return names;
}

bool is_report(const std::string& name) { return !name.empty() && !report_text(name).empty(); }

std::string report_summary(const std::string& name) {
  std::string_view doc = report_text(name);
  doc = doc.substr(0, doc.find('\n'));
  if (doc.starts_with("-- ")) doc.remove_prefix(3);
  return std::string(doc);
}

std::vector<std::string> report_parameters(const std::string& name) {
  // Only the SQL counts: a comment may name a parameter the statement does not read (or name them
  // in another order), and a string literal may hold an '@'.
  std::vector<std::string> out;
  const std::string_view text = report_text(name);
  for (size_t at = 0; at < text.size();) {
    if (text.substr(at, 2) == "--") {
      at = text.find('\n', at);
    } else if (text.substr(at, 2) == "/*") {
      at = text.find("*/", at + 2);
      if (at != std::string_view::npos) at += 2;
    } else if (text[at] == '\'' || text[at] == '"') {  // '' / "" inside one: two literals in a row
      at = text.find(text[at], at + 1);
      if (at != std::string_view::npos) ++at;
    } else if (text[at] == '@') {
      size_t end = at + 1;
      while (end < text.size() && (std::isalnum((unsigned char)text[end]) || text[end] == '_')) ++end;
      const std::string p(text.substr(at, end - at));
      if (p.size() > 1 && p != "@schema" && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
      at = end;
    } else {
      ++at;
    }
  }
  return out;
}

std::string report_error(const std::string& name, const std::string& msg) {
  std::string_view m = msg;
  if (m.starts_with(name + ": ")) m.remove_prefix(name.size() + 2);
  return fmt::format("report {}: {}", name, m);
}

const ReportHints& shell_report_hints() {
  static const ReportHints h{".reports (--report list) lists them", "--diff OTHER, or .attach FILE AS other"};
  return h;
}

const ReportHints& extension_report_hints() {
  static const ReportHints h{"SELECT * FROM tlsql_reports lists them",
                             "SELECT tlsql_load(path, 'other'), or ATTACH a database tlsql saved AS other"};
  return h;
}

ReportPlan plan_report(sqlite3* db, const std::string& asked, const ReportHints& hints) {
  if (!is_report(asked)) {
    const auto m = did_you_mean(asked, report_names());
    throw ReportError(
        fmt::format("no report '{}': {}{}", asked, m ? fmt::format("did you mean {}? ", *m) : "", hints.list));
  }
  // A fleet database (tlsql fleet) holds per-rank summaries and no events, and the reports written
  // for it (their summary starts "fleet.db: ") read only its tables: each kind runs on its own kind
  // of database, and the other gets one line that says which to open, not "no such table".
  const bool fleet_db = is_fleet_database(db), fleet_report = report_summary(asked).starts_with("fleet.db: ");
  if (fleet_report && !fleet_db)
    throw ReportError(
        fmt::format("{} reads a fleet database: tlsql fleet RANKS -o fleet.db, then "
                    "tlsql fleet.db --report {} (docs/fleet.md)",
                    asked, asked));
  if (fleet_db && !fleet_report) {
    std::string names;
    for (const std::string& n : report_names())
      if (report_summary(n).starts_with("fleet.db: ")) names += (names.empty() ? "" : ", ") + n;
    throw ReportError(
        fmt::format("{} reads traces; this fleet database holds per-rank summaries: its reports are {}", asked, names));
  }
  // Every diff report reads the schema `other` (sql/report_diff*.sql).
  if (asked.starts_with("diff") && !schema_attached(db, "other"))
    throw ReportError(fmt::format("{} needs a second trace: {}", asked, hints.attach));
  ReportPlan plan{asked, asked, ""};
  if (auto f = report_fallback(db, asked)) plan.name = f->report, plan.why = f->why;
  return plan;
}

std::optional<std::string> report_note(sqlite3* db, const char* asset, const std::string& name,
                                       const Parameters& params) {
  // The asset's statements in order, the first text wins; one that cannot run says nothing (a
  // note that reads `other` when no trace is attached there).
  const std::string sql(sql_asset(asset));
  for (const char* p = sql.c_str(); *p;) {
    sqlite3_stmt* s = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, p, -1, &s, &tail) != SQLITE_OK) {
      sqlite3_finalize(s);
      if (!tail || tail == p) break;  // (SQLite sets no tail on an error: the rest is skipped)
      p = tail;
      continue;
    }
    p = tail;
    if (!s) continue;
    std::optional<std::string> text;
    bind_parameters(s, params);
    sqlite3_bind_text(s, sqlite3_bind_parameter_index(s, "@report"), name.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
      text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    if (text) return text;
  }
  return std::nullopt;
}

namespace {

// The connection's notes (report.h): a part of its tlsql state, so every host has one, and it
// goes with the connection. (A temp table would be a write inside a report table's read, and
// would travel into a database saved with -o.)
struct NoteStore {
  std::mutex lock;
  std::vector<ReportNote> rows;
};

NoteStore* note_store(sqlite3* db) { return connection_part<NoteStore>(db, "report_notes"); }

}  // namespace

void set_report_notes(sqlite3* db, const ReportPlan& plan, const std::vector<ReportNote>& notes) {
  NoteStore* store = note_store(db);
  if (!store) return;
  std::lock_guard<std::mutex> hold(store->lock);
  std::erase_if(store->rows, [&](const ReportNote& n) { return n.report == plan.asked || n.report == plan.name; });
  store->rows.insert(store->rows.end(), notes.begin(), notes.end());
}

void add_report_note(sqlite3* db, const ReportNote& note) {
  if (NoteStore* store = note_store(db)) {
    std::lock_guard<std::mutex> hold(store->lock);
    store->rows.push_back(note);
  }
}

std::vector<ReportNote> report_notes(sqlite3* db) {
  NoteStore* store = note_store(db);
  if (!store) return {};
  std::lock_guard<std::mutex> hold(store->lock);
  return store->rows;
}

std::vector<ReportNote> report_run_notes(sqlite3* db, const ReportPlan& plan, const Parameters& params) {
  std::vector<ReportNote> notes;
  if (!plan.why.empty()) notes.push_back({plan.asked, plan.why});
  // What the report covers (sql/about_report.sql): a line, or nothing.
  if (auto about = report_note(db, "about_report", plan.name, params)) notes.push_back({plan.name, *about});
  set_report_notes(db, plan, notes);
  return notes;
}

ReportNote report_empty_note(sqlite3* db, const ReportPlan& plan, const Parameters& params) {
  const auto why = report_note(db, "empty_report", plan.name, params);
  ReportNote note{plan.name, why ? "no rows: " + *why : "no rows"};
  add_report_note(db, note);
  return note;
}

void run_report(sqlite3* db, const ReportPlan& plan, const Parameters& params, ReportOutput& output) {
  const std::string& name = plan.name;
  // The stand-in's why and what the report covers, first: each a line, or nothing.
  for (const ReportNote& n : report_run_notes(db, plan, params)) output.note(fmt::format("{}: {}", n.report, n.note));
  const std::string sql = sql_for("report_" + name, "main");
  int64_t rows = 0;
  std::vector<std::string> columns;  // of its first result: the shape of an empty report
  for (const char* p = sql.c_str(); *p;) {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, p, -1, &stmt, &tail) != SQLITE_OK)
      throw ReportError(report_error(name, sqlite3_errmsg(db)));
    p = tail;
    if (!stmt) continue;  // whitespace or a comment
    bind_parameters(stmt, params);
    if (columns.empty())
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) columns.emplace_back(sqlite3_column_name(stmt, i));
    int64_t n = 0;
    const int rc = output.statement(stmt, n);
    const std::string msg = report_statement_error(db, stmt, params, rc);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) throw ReportError(report_error(name, msg));
    rows += n;
  }
  if (rows) return;
  output.empty(columns);
  // Nothing printed and no error: say why (sql/empty_report.sql), one line.
  const ReportNote why = report_empty_note(db, plan, params);
  output.note(fmt::format("{}: {}", why.report, why.note));
}

std::vector<ResultSet> query_all(sqlite3* db, const std::string& sql, const Parameters& params) {
  std::vector<ResultSet> out;
  for (const char* p = sql.c_str(); *p;) {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db, p, -1, &stmt, &tail) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db));
    p = tail;
    if (!stmt) continue;  // whitespace or a comment
    bind_parameters(stmt, params);
    ResultSet rs;
    const int rc = collect_rows(stmt, rs);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
    if (!rs.columns.empty()) out.push_back(std::move(rs));  // not CREATE / DROP / INSERT
  }
  return out;
}

}  // namespace tlsql
