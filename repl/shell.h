// The tlsql shell: runs SQL and dot-commands from -c, files, stdin or the interactive prompt,
// with the sqlite3 shell's conventions (statements span lines, "error: near line N", exit 1).
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "session/output.h"
#include "session/tlsql.h"

namespace tlsql {

class Shell {
 public:
  std::unique_ptr<Session> session;
  OutputOptions output;  // .mode, .headers, .nullvalue, .separator, .width
  // .bail, .timer, -q, .echo (print each statement first), .changes (rows changed after each),
  // .eqp (each statement's query plan first)
  bool bail = false, timer = false, quiet = false, echo = false, changes = false, eqp = false;

  // Loads a trace into `schema`, with the one-line summary and, on a terminal, a progress bar.
  void load(const std::string& path, const std::string& schema = "main");
  // Loads a trace into a new in-memory schema `name` (with the same feedback as load).
  void attach_trace(const std::string& path, const std::string& name);
  // Saves the loaded database to `path` and says so on stderr ("saved t.db (412 MB)") unless quiet.
  void save(const std::string& path);
  // Runs a script (SQL statements and dot-commands, one per line). `source` names it in errors.
  // Returns false if the script asked to quit.
  bool run_script(const std::string& text, const std::string& source);
  // Interactive loop: line editing, history in ~/.tlsql_history, tab completion, Ctrl-C
  // interrupts the running statement.
  void interactive();
  // .html FILE / --html FILE: the self-contained HTML report. Throws if it cannot be written.
  void html_command(const std::string& path);
  void overlay_command(const std::string& path);  // overlay_command.cpp
  bool failed() const { return errors_ > 0; }
  // The process's exit code: .exit N's, else 1 after any error, else 0.
  int exit_code() const { return exit_code_ ? *exit_code_ : failed() ? 1 : 0; }
  // Closes the .output file and flushes stdout; a write error there (full disk) is reported and
  // counts as a failure.
  void close_output();
  bool stop() const { return quit_ || (bail && errors_ > 0); }
  // Whether canned report `name` ran and failed (--overlay does not say the same error again).
  bool report_failed(const std::string& name) const { return failed_reports_.count(name) > 0; }

 private:
  sqlite3* db() const { return session->db(); }
  bool dot_command(const std::string& line, const std::string& source, int lineno);  // false to quit
  void run_sql(const std::string& sql, const std::string& source, int first_line);
  // A canned report: its SQL, then, when it printed no rows, why on stderr.
  void run_report(const std::string& name, const std::string& text);
  void error(const std::string& source, int lineno, const std::string& msg);
  // The first column of sql/ASSET.sql's first row with @report bound to `name` (and the
  // .parameter values): the notes about_report and empty_report; nullopt for NULL or an error.
  std::optional<std::string> report_text(const char* asset, const std::string& name);
  FILE* out() { return out_ ? out_ : stdout; }
  // Writes text that holds what a file said (names, schema text) to out(): on a terminal its
  // control characters are shown, not obeyed (show_controls).
  void emit(const std::string& text);
  void print_tables(const std::string& like);
  void print_schema(const std::string& like);
  void print_help(const std::string& topic);
  // The terminal's width in columns when results go to one (no .output), else 0: aligned tables
  // fit it, .help and .reports wrap at it.
  size_t terminal_width() const;
  void print_settings();
  void print_plan(sqlite3_stmt* stmt);
  // .import FILE TABLE: the CSV file's rows into TABLE (created from the header line when new).
  void import_csv(const std::string& path, const std::string& table);
  // .dump [TABLE]: the main database as SQL (sqlite3's .dump).
  void dump(const std::string& like);
  void print_tree(int64_t uid, int max_depth, bool all);
  void print_stack(int64_t uid);
  void replay_command(int64_t uid, const std::string& device, int iters, int warmup);
  void export_replay(const std::string& path, const std::string& where);
  void bind_parameters(sqlite3_stmt* stmt);
  // Runs every statement of `sql` with the .parameter values: the result of each one that returns
  // columns. Throws on an error. On the session's connection, or on `on` (a Session::Twin's).
  std::vector<ResultSet> query_all(const std::string& sql, sqlite3* on = nullptr);
  void plot_command(const std::vector<std::string>& w, const std::string& where);

  FILE* out_ = nullptr;
  std::string out_name_;  // the .output / .once file, for error messages
  bool once_ = false, quit_ = false;
  int errors_ = 0, read_depth_ = 0;
  std::optional<int> exit_code_;
  // While a canned report runs: its empty results keep their shape, and the rows it printed.
  bool in_report_ = false;
  int64_t report_rows_ = 0;
  std::vector<std::string> report_columns_;        // of its first result
  std::set<std::string> failed_reports_;           // reports that ran and failed
  std::map<std::string, std::string> parameters_;  // .parameter set @k v
};

}  // namespace tlsql
