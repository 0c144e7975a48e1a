// Result formatting for the shell, with the sqlite3 shell's modes: box / table / markdown /
// column (aligned), csv, json, line, list, tabs, html, insert, quote.
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/terminal.h"

namespace tlsql {

enum class OutputMode { box, table, markdown, column, csv, json, line, list, tabs, html, insert, quote };
std::optional<OutputMode> parse_mode(const std::string& name);
const char* mode_name(OutputMode m);
// Every mode's name, as .mode and --help list them.
const std::vector<std::string>& mode_names();

// How results are printed (the shell's .mode, .headers, .nullvalue, .separator, .width settings).
struct OutputOptions {
  OutputMode mode = OutputMode::box;
  bool headers = true;
  std::string nullvalue;        // shown for NULL in the text modes (not json, insert, quote)
  std::string separator = "|";  // list mode's column separator (tabs mode uses a tab)
  std::vector<int> widths;      // .width: per column, 0 = as wide as needed, < 0 = right-aligned
  int wrap = 0;                 // aligned modes: cells wider than this wrap onto more lines (0: never)
  int fit = 0;                  // aligned modes: wrap the widest columns so rows fit this many columns
  std::string table = "table";  // insert mode's table name (sqlite3's default)
  // Aligned modes are for reading: REALs show 3 decimals (3 significant digits below 1) with
  // thousands separators. Every other mode keeps SQLite's full text.
  bool readable_numbers = true;
};

// One result set: column names and rows of (text or NULL) cells.
struct ResultSet {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::vector<bool> numeric;               // per column: every non-NULL cell was INTEGER or REAL
  std::vector<std::vector<bool>> is_real;  // per row and column: the cell was a REAL
};

// Steps `stmt` to the end, collecting rows. Returns SQLite's final code (SQLITE_DONE or error).
int collect_rows(sqlite3_stmt* stmt, ResultSet& out);

void print_result(FILE* out, const ResultSet& rs, const OutputOptions& opt);

// Steps `stmt` to the end and prints its rows: the streaming modes as each row comes (memory stays
// flat however large the result), the aligned modes once all rows are in (column widths need
// them). No rows, no output, as the sqlite3 shell. Returns SQLite's final code; `rows`, when
// given, receives the number of rows printed.
int print_statement(FILE* out, sqlite3_stmt* stmt, const OutputOptions& opt, int64_t* rows = nullptr);

// The shape of a table with no rows, for a canned report that found nothing: a CSV header line,
// JSON `[]` (so that pandas and json.load read an empty table); nothing in the other modes.
void print_empty(FILE* out, const std::vector<std::string>& columns, const OutputOptions& opt);

// A REAL as the aligned modes show it: "13,214.179", "0.000038", "7.861".
std::string readable_real(double v);

// A REAL's text as SQLite gives it (sqlite3_column_text: printf "%!.15g"): "6601.0", "0.5",
// "1.0e+15", "1.0e-05". What the streaming modes print and the aligned ones read.
std::string sqlite_real_text(double v);

// Whether an aligned cell reads as a number ("8,663.617", "-12", "1.5e-05", "42%"): the aligned
// modes never wrap or cut one (a column is at least as wide as its widest number).
bool looks_numeric(std::string_view s);

// `s` in pieces of at most `width` terminal columns (0: whole), never inside a UTF-8 character:
// after a blank or separator (, _ / : ; ( < | - .) in the second half of a piece, else at the
// width. With `max_lines`, at most that many, the last ending in an ellipsis when text is left out.
std::vector<std::string> wrap_cell(const std::string& s, size_t width, size_t max_lines = 0);

// show_controls, is_terminal, say: text for a terminal (src/terminal.h).

// `lead` (a command or name) and its `text`, for a listing such as .help: `text` starts at column
// `indent` (two columns after a longer `lead`), and with `width` wraps at word breaks onto lines
// indented by `indent` (a hanging indent), none wider than `width` unless one word is. width 0:
// one line. Each line ends in a newline.
std::string wrap_hanging(const std::string& lead, const std::string& text, size_t indent, size_t width);

// Whether a TEXT value is written by json mode as the JSON it holds rather than as a string: a
// JSON array or object (input_dims, the summary's events, a diff's kernel_names, args). SQLite's
// JSON subtype does not outlive a view, a table or a subquery, so the value decides.
bool json_value(std::string_view text);

// Text for HTML: & < > " ' as entities (the html mode, the HTML report).
std::string html_escape(const std::string& s);

// A table or column name as SQL: as it is when plain, else in double quotes (insert mode, .dump,
// .import).
std::string sql_identifier(const std::string& name);

}  // namespace tlsql
