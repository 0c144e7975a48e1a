// The report that stands in for another on the loaded traces (sql/fallback_report.sql), for the
// shell's .report and the HTML page alike.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>

#include "src/sql_assets.h"

namespace tlsql {

struct ReportFallback {
  std::string report;  // the report to run instead
  std::string why;     // one line, for stderr or the page
};

// nullopt: run `report` itself (also when the question cannot be asked: no event table).
inline std::optional<ReportFallback> report_fallback(sqlite3* db, const std::string& report) {
  std::optional<ReportFallback> f;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, std::string(sql_asset("fallback_report")).c_str(), -1, &s, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(s, sqlite3_bind_parameter_index(s, "@report"), report.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
      f = ReportFallback{reinterpret_cast<const char*>(sqlite3_column_text(s, 0)),
                         sqlite3_column_text(s, 1) ? reinterpret_cast<const char*>(sqlite3_column_text(s, 1)) : ""};
  }
  sqlite3_finalize(s);
  return f;
}

}  // namespace tlsql
