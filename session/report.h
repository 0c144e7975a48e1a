// The canned reports (sql/report_NAME.sql) as every host runs them: the tlsql shell (.report,
// --report), the HTML page, and the report_NAME tables of the loadable extension (report_table.h).
// One place decides what runs for a name (the report, or the one that stands in for it), how its
// @parameters are bound, what is said before it and when it is empty, and how its errors read.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "session/output.h"

namespace tlsql {

// @parameters as the user gave them: "@name" -> the value's text (.parameter set @name value).
using Parameters = std::map<std::string, std::string>;

// Binds a value's text the way `.parameter set` has always bound it: an integer when the whole
// text is one, else a real when it is one, else the text. Numbers are decimal only
// ([+-]digits[.digits][e[+-]digits]): "0x10", "NaN", "inf" and " 3" stay text. A report's parameters given as a JSON
// object (report_NAME(params)) go through the same rule, so one value means one thing everywhere.
void bind_parameter(sqlite3_stmt* stmt, int index, const std::string& value);
// Binds each of `stmt`'s named parameters that `params` holds (the others stay NULL).
void bind_parameters(sqlite3_stmt* stmt, const Parameters& params);
// What went wrong in a report's statement that ended with `rc`, before report_error names the
// report. A datatype mismatch in a report's own SQL comes from a parameter of the wrong type
// (LIMIT @top given 'abc' or 2.5): the message names each @parameter the statement reads that is
// not a whole number, and what goes there ("@top is 'abc' where a whole number goes (datatype
// mismatch)"), instead of SQLite's bare "datatype mismatch".
std::string report_statement_error(sqlite3* db, sqlite3_stmt* stmt, const Parameters& params, int rc);

// Whether a schema of that name is attached (`other`: the diff's test trace).
bool schema_attached(sqlite3* db, const char* name);

// The reports' names, in file-name order.
const std::vector<std::string>& report_names();
bool is_report(const std::string& name);
// The report's one-line summary (the first comment line of its file).
std::string report_summary(const std::string& name);
// The @parameters its SQL reads, each once, in order of first use ("@schema", the views'
// placeholder, is none).
std::vector<std::string> report_parameters(const std::string& name);

// A report's error as every host says it: "report NAME: MSG", the name once when MSG starts with
// it (critical_path's errors do).
std::string report_error(const std::string& name, const std::string& msg);

struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the host tells the user to do, in its own terms.
struct ReportHints {
  std::string list;    // where the names are listed: ".reports (--report list) lists them"
  std::string attach;  // how to attach a second trace as `other`
};

// The tlsql binary's (its shell's .report and --report, and its report_NAME tables), and the
// loadable extension's, whose host has neither.
const ReportHints& shell_report_hints();
const ReportHints& extension_report_hints();

// What runs when report `asked` is asked for on `db`: itself, or the report that stands in for it
// on these traces (sql/fallback_report.sql) with why (empty: nothing to say).
struct ReportPlan {
  std::string asked, name, why;
};
// Throws ReportError for a name that is no report ("no report 'x': did you mean ...") and for a
// diff report without a trace attached as `other`.
ReportPlan plan_report(sqlite3* db, const std::string& asked, const ReportHints& hints);

// The first column of sql/ASSET.sql's first row with @report bound to `name` and the parameters:
// the notes about_report (what the report covers) and empty_report (why it printed nothing).
// nullopt for NULL or an error.
std::optional<std::string> report_note(sqlite3* db, const char* asset, const std::string& name,
                                       const Parameters& params);

// How a host shows a report that runs.
class ReportOutput {
 public:
  virtual ~ReportOutput() = default;
  // A line for the user beside the rows ("NAME: note"; the shell prints it on stderr).
  virtual void note(const std::string& line) = 0;
  // One statement of the report, its parameters bound: step it to its end and count its rows.
  // Returns SQLite's final code.
  virtual int statement(sqlite3_stmt* stmt, int64_t& rows) = 0;
  // The report printed no rows: the columns of its first result, for an empty table's shape.
  virtual void empty(const std::vector<std::string>& columns) { (void)columns; }
};

// The lines a report run says beside its rows, as a table every host can read: `notes` (report,
// note). The shell prints them on stderr ("REPORT: NOTE"), the HTML page under the report's
// section, and a report_NAME table, which has no place for them, leaves them in `notes` for its
// caller (SELECT * FROM notes after SELECT * FROM report_ops). Kept per connection and keyed by
// report: a run of a report replaces the notes of that report (and of its stand-in); the others'
// stay until their own next run, and all go with the connection. Nothing is written to a database.
struct ReportNote {
  std::string report, note;
};
// Replaces the notes of `plan` (its asked and its running report) with `notes`.
void set_report_notes(sqlite3* db, const ReportPlan& plan, const std::vector<ReportNote>& notes);
// Adds one to them (the empty note, known once the rows are read).
void add_report_note(sqlite3* db, const ReportNote& note);
// Every note of the connection, oldest run first.
std::vector<ReportNote> report_notes(sqlite3* db);

// What a run of `plan` says before its rows, recorded as its notes: the stand-in's why (under the
// name asked) and the about note (sql/about_report.sql, under the name that runs).
std::vector<ReportNote> report_run_notes(sqlite3* db, const ReportPlan& plan, const Parameters& params);
// Why the run printed no rows (sql/empty_report.sql), recorded with them: "no rows[: WHY]".
ReportNote report_empty_note(sqlite3* db, const ReportPlan& plan, const Parameters& params);

// Runs report `plan` on `db` with `params`: the stand-in's why, the about note, every statement
// in order, and when no row came, the empty shape and why (each note also in `notes`). Throws
// ReportError (report_error's text) at the first statement that fails.
void run_report(sqlite3* db, const ReportPlan& plan, const Parameters& params, ReportOutput& output);

// Runs every statement of `sql` with `params` bound: the result of each one that returns columns.
// Throws std::runtime_error with SQLite's message.
std::vector<ResultSet> query_all(sqlite3* db, const std::string& sql, const Parameters& params);

}  // namespace tlsql
