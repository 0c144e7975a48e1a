// Every canned report as a table in every host: `SELECT * FROM report_ops` (Python, pandas, the
// sqlite3 shell with the extension, tlsql itself) gives the rows `tlsql --report ops` prints, with
// the same columns; parameters as a JSON object, `report_ops('{"top": 5}')`. tlsql_reports lists
// them (name, summary, parameters).
//
// One table per report, not one report(name) function: SQLite fixes a table's columns before any
// row is read, and each report has columns of its own. So report_NAME takes its columns, when
// first used on a connection, from its report's statement prepared there, for the report that
// runs on the loaded traces (sql/fallback_report.sql: `ops` on a trace without GPU work is
// cpu_ops; `timeline` with several traces is timeline_ranks). That choice depends on the traces
// alone, never on the parameters, so the columns hold; a table whose traces changed underneath
// it says so rather than give another report's rows. docs/reports.md, "Reports in every host".
#pragma once

#include <sqlite3.h>

#include "session/report.h"

namespace tlsql {

// Registers report_NAME for every report, and tlsql_reports, on `db`. `hints`: how this host
// attaches a second trace (in the error of a diff report without one).
void register_report_tables(sqlite3* db, const ReportHints& hints);

}  // namespace tlsql
