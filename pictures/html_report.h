// `tlsql trace --html report.html` / `.html FILE`: one self-contained HTML page (no network
// resources, no script) with the summary, timeline, ops and kernels reports as tables, the roofline
// and GPU timeline pictures inline, and, when a second trace is attached as `other`, the diff.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <string>
#include <vector>

#include "pictures/chart.h"
#include "session/output.h"

namespace tlsql {

// Runs an SQL script (several statements) with the shell's parameters; one ResultSet each.
using Query = std::function<std::vector<ResultSet>(const std::string& sql)>;

struct HtmlReport {
  std::string html;
  int problems = 0;  // sections that could not be produced (each says why on the page)
};

// `twin`, when not null: a second connection onto the same main schema (Session::Twin) and
// `twin_query` runs SQL on it; the ops and kernels sections are then made there, on another
// thread, while `db` makes the rest (the same page either way).
HtmlReport html_report(sqlite3* db, const Query& query, const Binder& bind, sqlite3* twin = nullptr,
                       const Query& twin_query = {});

}  // namespace tlsql
