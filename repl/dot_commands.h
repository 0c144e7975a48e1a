// The shell's dot-commands as one table (the DuckDB shell's shape): a row holds a command's names,
// arguments, help, handler, how many arguments it takes and what the tab key offers after it.
// `.help`, `.help TOPIC`, the usage errors, "did you mean", and tab completion are all made from
// the table, so a command cannot exist without its help or be documented without existing.
//
// Adding a dot-command: one row, with its handler beside it, in sqlite3_commands.cpp (a command
// of the sqlite3 shell's) or tlsql_commands.cpp (tlsql's own). Nothing else changes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tlsql {

class Shell;

// One dot-command line as typed: its words (quotes removed; words[0] is the command as typed).
struct DotCall {
  const std::string& line;
  const std::vector<std::string>& words;
  std::string arg(size_t i) const { return i < words.size() ? words[i] : std::string(); }
};

// Thrown by a handler whose arguments are wrong: the shell says "usage: " and the command's
// arguments as `.help` shows them.
struct UsageError {};

struct DotCommand {
  // What the tab key offers for its arguments: SQL words (tables, columns, functions), file names,
  // report names, output modes.
  enum class Complete { words, files, reports, modes };
  // A form of the command as `.help` shows it: arguments, and help text ('\n' continues it on the
  // next line, in the help column). Most commands have one form; .plot has one per kind.
  struct Form {
    std::string_view arguments, help;
  };
  std::vector<std::string_view> names;  // ".exit", ".quit": one command, shown ".exit / .quit"
  std::vector<Form> forms;
  void (*run)(Shell&, const DotCall&);
  int min_args = 0, max_args = -1;  // words after the command (-1: any number); else a usage error
  Complete complete = Complete::words;
  std::string_view unlisted_alias = {};  // a name that works but .help and completion leave out
};

// Every dot-command, in name order (as .help lists them).
const std::vector<DotCommand>& dot_command_table();
// The row named `name` (an unlisted alias too), or nullptr.
const DotCommand* find_dot_command(std::string_view name);
// Every name a command answers to (for "did you mean"), and those tab completion offers.
const std::vector<std::string>& dot_command_names();
std::vector<std::string> listed_dot_command_names();
// "usage: .attach FILE AS NAME" for the command as typed.
std::string dot_command_usage(const DotCommand& c, std::string_view typed);

// The help: the non-terminal text (one line a form, continuations indented to column 24), and
// the entries (lead, whole text) that a terminal's width wraps.
constexpr size_t kHelpIndent = 24;
std::string dot_command_help_text(std::string_view prefix = "");
std::vector<std::pair<std::string, std::string>> dot_command_help_entries(std::string_view prefix = "");

// For handlers: a whole decimal integer; "did you mean X? " when a known name is close to what was
// typed (session/suggest.h), else ""; the SQL condition after the first `words` words of a line
// ("" when nothing follows, nullopt when what follows is not "WHERE ..."); whether Ctrl-C was
// pressed while this command runs (loops of its own poll it; SQL statements stop by themselves).
bool parse_int(const std::string& s, int64_t& v);
std::string maybe_meant(const std::string& typed, const std::vector<std::string>& known);
std::optional<std::string> where_after(const std::string& line, size_t words);
bool interrupted();

// The rows, by file: the sqlite3 shell's commands (sqlite3_commands.cpp) and tlsql's own
// (tlsql_commands.cpp), each row beside its handler. The table is both, in name order.
std::vector<DotCommand> sqlite3_command_rows();
std::vector<DotCommand> tlsql_command_rows();

}  // namespace tlsql
