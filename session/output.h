// Result formatting for the shell: box / table / markdown (column-aligned), csv, json, line.
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace tlsql {

enum class OutputMode { box, table, markdown, csv, json, line };
std::optional<OutputMode> parse_mode(const std::string& name);
const char* mode_name(OutputMode m);

// One result set: column names and rows of (text or NULL) cells.
struct ResultSet {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::vector<bool> numeric;  // per column: every non-NULL cell was INTEGER or REAL
};

// Steps `stmt` to the end, collecting rows. Returns SQLite's final code (SQLITE_DONE or error).
int collect_rows(sqlite3_stmt* stmt, ResultSet& out);

void print_result(FILE* out, const ResultSet& rs, OutputMode mode, bool headers);

// Steps `stmt` to the end and prints its rows: csv, json and line as each row comes (memory stays
// flat however large the result), the aligned modes once all rows are in (column widths need
// them). No rows, no output, as the sqlite3 shell, unless `shape_when_empty` (a canned report: a
// CSV still gets its header line and JSON `[]`, so that pandas and json.load read it). Returns
// SQLite's final code; `rows`, when given, receives the number of rows printed.
int print_statement(FILE* out, sqlite3_stmt* stmt, OutputMode mode, bool headers, bool shape_when_empty = false,
                    int64_t* rows = nullptr);

}  // namespace tlsql
