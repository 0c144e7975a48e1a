// The tlsql shell: runs SQL and dot-commands from -c, files, stdin or the interactive prompt,
// with the sqlite3 shell's conventions (statements span lines, "error: near line N", exit 1).
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "output.h"

namespace tlsql {

class Shell {
 public:
  explicit Shell(sqlite3* db) : db_(db) {}
  OutputMode mode = OutputMode::box;
  bool headers = true;
  bool bail = false;
  bool timer = false;

  // Runs a script (SQL statements and dot-commands, one per line). `source` names it in errors.
  // Returns false if the script asked to quit.
  bool run_script(const std::string& text, const std::string& source);
  // Interactive loop with line editing.
  void interactive();
  bool failed() const { return errors_ > 0; }
  bool stop() const { return quit_ || (bail && errors_ > 0); }

 private:
  // Returns false to quit.
  bool dot_command(const std::string& line, const std::string& source, int lineno);
  void run_sql(const std::string& sql, const std::string& source, int first_line);
  void error(const std::string& source, int lineno, const std::string& msg);
  FILE* out() { return out_ ? out_ : stdout; }
  void print_tables();
  void print_schema(const std::string& like);

  sqlite3* db_;
  FILE* out_ = nullptr;
  bool once_ = false;
  int errors_ = 0;
  bool quit_ = false;
  int read_depth_ = 0;
};

}  // namespace tlsql
