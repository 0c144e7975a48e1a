// The tlsql shell: runs SQL and dot-commands from -c, files, stdin or the interactive prompt,
// with the sqlite3 shell's conventions (statements span lines, "error: near line N", exit 1).
// This is the runner; the dot-commands are a table (repl/dot_commands.h) whose handlers use the
// public part below.
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "session/output.h"
#include "session/report.h"
#include "session/session.h"

namespace tlsql {

class Shell {
 public:
  std::unique_ptr<Session> session;
  OutputOptions output;  // .mode, .headers, .nullvalue, .separator, .width
  // .bail, .timer, -q, .echo (print each statement first), .changes (rows changed after each),
  // .eqp (each statement's query plan first)
  bool bail = false, timer = false, quiet = false, echo = false, changes = false, eqp = false;
  Parameters parameters;  // .parameter set @k v

  // Loads a trace into `schema`, with the one-line summary and, on a terminal, a progress bar.
  // Loads of several files share `reuse` (src/readers/reader.h's ReadBuffers; a folder's files share one
  // of their own), which the caller drops after the last.
  void load(const std::string& path, const std::string& schema = "main", ReadBuffers* reuse = nullptr);
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
  // A canned report (session/report.h) with the .parameter values, printed in the output mode;
  // its notes and errors on stderr.
  void run_report(const std::string& name);
  // .html FILE / --html FILE: the self-contained HTML report. Throws if it cannot be written.
  void html_command(const std::string& path);
  // .overlay FILE / --overlay FILE (session/overlay.h). Throws if it cannot be written.
  void overlay_command(const std::string& path);
  bool failed() const { return errors_ > 0; }
  // The process's exit code: .exit N's, else 1 after any error, else 0.
  int exit_code() const { return exit_code_ ? *exit_code_ : failed() ? 1 : 0; }
  // Closes the .output file and flushes stdout; a write error there (full disk) is reported and
  // counts as a failure.
  void close_output();
  bool stop() const { return quit_ || (bail && errors_ > 0); }
  // Whether canned report `name` ran and failed (--overlay does not say the same error again).
  bool report_failed(const std::string& name) const { return failed_reports_.count(name) > 0; }

  // For the dot-commands' handlers.
  sqlite3* db() const { return session->db(); }
  FILE* out() { return out_ ? out_ : stdout; }
  // Writes text that holds what a file said (names, schema text) to out(): on a terminal its
  // control characters are shown, not obeyed (show_controls).
  void emit(const std::string& text);
  // "error: MSG" on stderr, counted as a failure; the command goes on.
  void complain(const std::string& msg);
  // The terminal's width in columns when results go to one (no .output), else 0: aligned tables
  // fit it, .help and .reports wrap at it.
  size_t terminal_width() const;
  // .exit: stop after this command, with exit code `code` when given.
  void quit(std::optional<int> code);
  // .output / .once: results to `file` ("stdout": back to stdout; "" is an error); `once`: the next
  // result only. Throws when the file cannot be written.
  void redirect(const std::string& file, bool once);
  const std::string& output_name() const { return out_name_; }
  bool redirected() const { return out_ != nullptr; }
  // .read FILE: runs it as a script (at most 16 deep). Returns false if it asked to quit.
  bool read_script(const std::string& path);
  void replay_command(int64_t uid, const std::string& device, int iters, int warmup);  // replay_commands.cpp
  void export_replay(const std::string& path, const std::string& where);               // replay_commands.cpp
  void plot_command(const std::vector<std::string>& w, const std::string& where);      // plot_commands.cpp

 private:
  class ReportPrinter;
  bool dot_command(const std::string& line, const std::string& source, int lineno);  // false to quit
  void run_sql(const std::string& sql, const std::string& source, int first_line);
  // One prepared statement of run_sql or a report: .echo, .eqp, its rows printed, .changes, .timer.
  // Returns SQLite's final code (the caller reports an error); `rows` receives the rows printed.
  int run_statement(sqlite3_stmt* stmt, const std::string& source, int line, int64_t& rows);
  void error(const std::string& source, int lineno, const std::string& msg);
  void print_plan(sqlite3_stmt* stmt);

  FILE* out_ = nullptr;
  std::string out_name_;  // the .output / .once file, for error messages
  bool once_ = false, quit_ = false;
  int errors_ = 0, read_depth_ = 0;
  std::optional<int> exit_code_;
  std::set<std::string> failed_reports_;  // reports that ran and failed
};

}  // namespace tlsql
