// The sqlite3 shell's dot-commands, as tlsql has them: one row each (repl/dot_commands.h) beside
// its handler.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "repl/dot_commands.h"
#include "repl/shell.h"
#include "src/input.h"
#include "src/output_file.h"
#include "src/sqlite_util.h"
#include "udf/registry.h"

namespace tlsql {

namespace {

// A main-schema table's ordinary columns, as SQL names, each with its declared type after it when
// `with_types` (a virtual table's CREATE statement names only its module: .schema shows these,
// .dump writes them as a plain table). Hidden and generated columns are left out: .dump's INSERTs
// give values to these columns only.
std::vector<std::string> column_definitions(sqlite3* db, const std::string& table, bool with_types = true) {
  Statement cols(db, "SELECT name, type FROM pragma_table_xinfo(?1, 'main') WHERE hidden = 0 ORDER BY cid");
  sqlite3_bind_text(cols.get(), 1, table.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<std::string> list;
  while (cols.step()) {
    const std::string type = with_types ? (const char*)sqlite3_column_text(cols.get(), 1) : "";
    list.push_back(sql_identifier((const char*)sqlite3_column_text(cols.get(), 0)) + (type.empty() ? "" : " " + type));
  }
  return list;
}

void print_tables(Shell& sh, const std::string& like) {
  Statement s(sh.db(),
              "SELECT CASE WHEN d.name = 'main' THEN '' ELSE d.name || '.' END || m.name "
              "FROM pragma_database_list d JOIN pragma_table_list m ON m.schema = d.name "
              "WHERE m.type IN ('table', 'view', 'virtual') AND m.name NOT LIKE 'sqlite_%' AND d.name <> 'temp' "
              "AND (?1 IS NULL OR m.name LIKE ?1) ORDER BY d.seq, m.name");
  if (!like.empty()) sqlite3_bind_text(s.get(), 1, like.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<std::string> names;
  while (s.step()) names.emplace_back((const char*)sqlite3_column_text(s.get(), 0));
  size_t w = 0;
  for (auto& n : names) w = std::max(w, n.size());
  size_t per_line = std::max<size_t>(1, 80 / (w + 2));
  for (size_t i = 0; i < names.size(); ++i)
    sh.emit(fmt::format("{:<{}}{}", names[i], w + 2, (i + 1) % per_line == 0 || i + 1 == names.size() ? "\n" : ""));
}

void print_schema(Shell& sh, const std::string& like) {
  // A virtual table's CREATE statement names only its module (event over a loaded trace is one):
  // its columns come from table_xinfo, as a CREATE TABLE a reader can use.
  Statement s(sh.db(),
              "SELECT m.name, m.sql, m.sql LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_schema m "
              "WHERE m.sql IS NOT NULL AND m.name NOT LIKE 'sqlite_%' AND (?1 IS NULL OR m.name LIKE ?1) "
              "ORDER BY m.type DESC, m.name");
  if (!like.empty()) sqlite3_bind_text(s.get(), 1, like.c_str(), -1, SQLITE_TRANSIENT);
  while (s.step()) {
    const std::string name = (const char*)sqlite3_column_text(s.get(), 0);
    sh.emit(fmt::format("{};\n", (const char*)sqlite3_column_text(s.get(), 1)));
    if (sqlite3_column_int(s.get(), 2))
      sh.emit(fmt::format("/* {} columns:\n  {}\n*/\n", name, fmt::join(column_definitions(sh.db(), name), ",\n  ")));
  }
}

void print_settings(Shell& sh) {
  auto on = [](bool b) { return b ? "on" : "off"; };
  std::string widths;
  const OutputOptions& output = sh.output;
  for (int w : output.widths) widths += std::to_string(w) + " ";
  sh.emit(
      fmt::format("        echo: {}\n         eqp: {}\n     changes: {}\n     headers: {}\n        mode: {}{}\n"
                  "   nullvalue: \"{}\"\n      output: {}\n   separator: \"{}\"\n       timer: {}\n        bail: {}\n"
                  "       width: {}\n",
                  on(sh.echo), on(sh.eqp), on(sh.changes), on(output.headers), mode_name(output.mode),
                  output.wrap ? fmt::format(" --wrap {}", output.wrap) : "", output.nullvalue,
                  sh.redirected() ? sh.output_name() : "stdout", output.separator, on(sh.timer), on(sh.bail), widths));
}

void dump(Shell& sh, const std::string& like) {
  // As sqlite3's .dump: the main database as SQL that rebuilds it. A loaded trace's event (a
  // virtual table over the loader's memory) is written as the plain table a saved database has.
  // (The schema's text goes through emit: a table or view named with ESC sequences is shown, not
  // obeyed, on a terminal; the rows are print_statement's, which does the same per cell.)
  FILE* f = sh.out();
  sh.emit("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n");
  std::vector<std::pair<std::string, std::string>> tables, later;  // (name, CREATE)
  {
    Statement s(sh.db(),
                "SELECT m.name, m.type, m.sql, m.sql LIKE 'CREATE VIRTUAL TABLE%' FROM main.sqlite_schema m "
                "WHERE m.sql IS NOT NULL AND m.name NOT LIKE 'sqlite_%' AND (?1 IS NULL OR m.tbl_name LIKE ?1) "
                "ORDER BY m.type = 'table' DESC, m.type = 'index', m.rowid");
    if (!like.empty()) sqlite3_bind_text(s.get(), 1, like.c_str(), -1, SQLITE_TRANSIENT);
    while (s.step()) {
      std::string name = (const char*)sqlite3_column_text(s.get(), 0),
                  type = (const char*)sqlite3_column_text(s.get(), 1);
      std::string sql = (const char*)sqlite3_column_text(s.get(), 2);
      if (sqlite3_column_int(s.get(), 3))
        sql = fmt::format("CREATE TABLE {}({})", sql_identifier(name),
                          fmt::join(column_definitions(sh.db(), name), ", "));
      (type == "table" ? tables : later).emplace_back(name, sql);
    }
  }
  OutputOptions insert;
  insert.mode = OutputMode::insert;
  insert.headers = false;
  for (const auto& [name, sql] : tables) {
    sh.emit(fmt::format("{};\n", sql));
    insert.table = name;
    // (A saved event's generated columns, input_dims ..., take no values.)
    Statement rows(sh.db(),
                   fmt::format("SELECT {} FROM main.{}", fmt::join(column_definitions(sh.db(), name, false), ", "),
                               sql_identifier(name)));
    if (print_statement(f, rows.get(), insert) != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(sh.db()));
  }
  for (const auto& [name, sql] : later) sh.emit(fmt::format("{};\n", sql));
  sh.emit("COMMIT;\n");
}

void import_csv(Shell& sh, const std::string& path, const std::string& table) {
  std::ifstream f = open_input_file(path);
  // RFC 4180 fields: quoted fields may hold commas, doubled quotes and newlines.
  auto next_record = [&](std::vector<std::string>& fields) {
    fields.clear();
    std::string field;
    bool quoted = false, any = false;
    char c;
    while (f.get(c)) {
      any = true;
      if (quoted) {
        if (c == '"') {
          if (f.peek() == '"')
            field += '"', f.get();
          else
            quoted = false;
        } else {
          field += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        fields.push_back(std::move(field)), field.clear();
      } else if (c == '\n') {
        break;
      } else if (c != '\r') {
        field += c;
      }
    }
    if (any) fields.push_back(std::move(field));
    return any;
  };
  std::vector<std::string> header, row;
  if (!next_record(header)) throw std::runtime_error(fmt::format(".import: '{}' is empty", path));
  Statement exists(sh.db(), "SELECT count(*) FROM pragma_table_list WHERE name = ?1");
  sqlite3_bind_text(exists.get(), 1, table.c_str(), -1, SQLITE_TRANSIENT);
  exists.step();
  const bool fresh = sqlite3_column_int(exists.get(), 0) == 0;
  std::string cols, marks;
  for (size_t i = 0; i < header.size(); ++i) {
    if (i) cols += ", ", marks += ", ";
    cols += sql_identifier(header[i]);
    marks += '?';
  }
  // A new table takes the header as its column names (sqlite3's .import); an existing one gets
  // every line, the first included, as rows.
  if (fresh) exec_sql(sh.db(), fmt::format("CREATE TABLE {}({})", sql_identifier(table), cols));
  exec_sql(sh.db(), "SAVEPOINT tlsql_import");
  try {
    Statement insert(sh.db(), fmt::format("INSERT INTO {} VALUES({})", sql_identifier(table), marks));
    int64_t line = 1, rows = 0;
    auto add = [&](const std::vector<std::string>& r) {
      if (r.size() != header.size())
        throw std::runtime_error(
            fmt::format(".import: {}: record {}: {} fields, expected {}", path, line, r.size(), header.size()));
      for (size_t i = 0; i < r.size(); ++i)
        sqlite3_bind_text(insert.get(), (int)i + 1, r[i].c_str(), (int)r[i].size(), SQLITE_TRANSIENT);
      insert.step();
      sqlite3_reset(insert.get());
      ++rows;
    };
    if (!fresh) add(header);
    while (next_record(row)) {
      ++line;
      if (row.size() == 1 && row[0].empty()) continue;  // a blank line
      add(row);
    }
    exec_sql(sh.db(), "RELEASE tlsql_import");
    if (!sh.quiet) say(stderr, fmt::format("imported {} rows into {}\n", rows, table));
  } catch (...) {
    exec_sql(sh.db(), "ROLLBACK TO tlsql_import; RELEASE tlsql_import");
    throw;
  }
}

void print_help(Shell& sh, const std::string& topic) {
  // On a terminal every entry wraps at its width under its text column (a hanging indent); else
  // the text is printed as written (a pipe's reader wraps, or greps whole lines).
  const size_t cols = sh.terminal_width();
  auto entry = [&](const std::string& lead, const std::string& text, size_t indent) {
    return wrap_hanging(lead, text, indent, cols);
  };
  if (!topic.empty()) {  // .help TOPIC: the dot-commands and functions whose name starts with it
    const std::string t = topic[0] == '.' ? topic.substr(1) : topic;
    bool any = false;
    if (cols) {
      for (const auto& [command, text] : dot_command_help_entries("." + t))
        sh.emit(entry(command, text, kHelpIndent)), any = true;
    } else if (const std::string text = dot_command_help_text("." + t); !text.empty()) {
      sh.emit(text), any = true;
    }
    for (const SqlFunction& f : sql_functions())
      if (std::string_view(f.name).rfind(t, 0) == 0)
        sh.emit(entry(fmt::format("{}{}", f.name, f.arguments), f.help, 0)), any = true;
    if (!any) sh.emit(fmt::format("nothing matches '{}': .help lists everything\n", topic));
    return;
  }
  // The help column starts after the longest signature (gpu_class(uid [, rule [, schema]]) ran into it).
  size_t width = 0;
  for (const SqlFunction& f : sql_functions()) width = std::max(width, std::strlen(f.name) + std::strlen(f.arguments));
  std::string commands, functions;
  if (cols)
    for (const auto& [command, text] : dot_command_help_entries()) commands += entry(command, text, kHelpIndent);
  else
    commands = dot_command_help_text();
  // On a terminal, at most a third of it (a longer signature's text starts after it).
  if (cols) width = std::min(width, cols / 3);
  for (const SqlFunction& f : sql_functions())
    functions += entry(fmt::format("{}{}", f.name, f.arguments), f.help, width + 2);
  sh.emit(fmt::format("Dot-commands:\n{}\nSQL functions (besides SQLite's; also SELECT * FROM tlsql_functions):\n{}",
                      commands, functions));
  const char* tables =
      "Tables: trace, device, event, health, launch_link. Views: op, kernel, gpu, runtime, python, annotation, "
      "launch, thread, process. Columns and units: docs/schema.md.";
  const char* reports =
      "Every report is a table too: report_NAME([params]), such as SELECT * FROM report_ops('{\"top\": 5}'), in "
      "tlsql and in every host of the extension; tlsql_reports lists them (docs/reports.md).";
  sh.emit(fmt::format(
      "\n{}{}",
      cols ? entry("", tables, 0)
           : "Tables: trace, device, event, health, launch_link. Views: op, kernel, gpu, runtime, python,\n"
             "annotation, launch, thread, process. Columns and units: docs/schema.md.\n",
      cols ? entry("", reports, 0)
           : "Every report is a table too: report_NAME([params]), such as SELECT * FROM "
             "report_ops('{\"top\": 5}'),\nin tlsql and in every host of the extension; tlsql_reports lists "
             "them (docs/reports.md).\n"));
}

// TraceLens's traverse_subtree_and_print: box-drawing branches, "UID: n, Category: c, Name: x"

// .bail .changes .echo .eqp .headers .timer: on or off.
void flag(Shell& sh, const DotCall& c) {
  const std::string& cmd = c.words[0];
  bool& flag = cmd == ".headers"   ? sh.output.headers
               : cmd == ".timer"   ? sh.timer
               : cmd == ".echo"    ? sh.echo
               : cmd == ".changes" ? sh.changes
               : cmd == ".eqp"     ? sh.eqp
                                   : sh.bail;
  if (c.arg(1) != "on" && c.arg(1) != "off") throw UsageError{};
  flag = c.arg(1) == "on";
}

void mode(Shell& sh, const DotCall& c) {
  // .mode [MODE [TABLE]] [--wrap N]: no MODE prints the current one (as sqlite3).
  const auto& w = c.words;
  if (w.size() == 1)
    return sh.emit(fmt::format("current output mode: {}{}\n", mode_name(sh.output.mode),
                               sh.output.wrap ? fmt::format(" --wrap {}", sh.output.wrap) : ""));
  OutputOptions next = sh.output;
  for (size_t i = 1; i < w.size(); ++i) {
    int64_t n;
    if (w[i] == "--wrap" && i + 1 < w.size() && parse_int(w[i + 1], n) && n >= 0) {
      next.wrap = (int)n, ++i;
    } else if (auto m = parse_mode(w[i]); m && i == 1) {
      next.mode = *m;
    } else if (i == 2 && next.mode == OutputMode::insert) {
      next.table = w[i];
    } else {
      throw std::runtime_error(fmt::format("unknown mode '{}': {}use {} (and --wrap N)", w[i],
                                           maybe_meant(w[i], mode_names()), fmt::join(mode_names(), ", ")));
    }
  }
  sh.output = next;
}

void width(Shell& sh, const DotCall& c) {
  std::vector<int> widths;
  for (size_t i = 1; i < c.words.size(); ++i) {
    int64_t n;
    if (!parse_int(c.words[i], n) || n < -10000 || n > 10000)  // (a cell is padded to its width)
      throw std::runtime_error(
          ".width N1 N2 ...: numbers from -10000 to 10000 (0 = as wide as needed, < 0 = right-aligned)");
    widths.push_back((int)n);
  }
  sh.output.widths = widths;
}

void quit_command(Shell& sh, const DotCall& c) {
  int64_t code = 0;
  if (c.words.size() > 1 && !parse_int(c.arg(1), code)) throw UsageError{};
  sh.quit(c.words.size() > 1 ? std::optional<int>((int)code) : std::nullopt);
}

void databases(Shell& sh, const DotCall&) {
  Statement s(sh.db(), "SELECT name, coalesce(nullif(file, ''), '(in memory)') FROM pragma_database_list ORDER BY seq");
  while (s.step())
    sh.emit(fmt::format("{}: {}\n", (const char*)sqlite3_column_text(s.get(), 0),
                        (const char*)sqlite3_column_text(s.get(), 1)));
}

void indexes(Shell& sh, const DotCall& c) {
  Statement s(sh.db(),
              "SELECT d.name, l.name FROM pragma_database_list d JOIN pragma_table_list t ON t.schema = d.name, "
              "pragma_index_list(t.name, d.name) l WHERE (?1 IS NULL OR t.name LIKE ?1) AND d.name <> 'temp' "
              "ORDER BY d.seq, l.name");
  if (c.words.size() > 1) sqlite3_bind_text(s.get(), 1, c.arg(1).c_str(), -1, SQLITE_TRANSIENT);
  while (s.step()) {
    std::string schema = (const char*)sqlite3_column_text(s.get(), 0);
    sh.emit(fmt::format("{}{}\n", schema == "main" ? "" : schema + ".", (const char*)sqlite3_column_text(s.get(), 1)));
  }
}

void shell_command(Shell& sh, const DotCall& c) {
  const std::string& cmd = c.words[0];
  const std::string command = c.line.substr(std::min(c.line.size(), c.line.find(cmd) + cmd.size()));
  if (command.find_first_not_of(" \t") == std::string::npos) throw UsageError{};
  fflush(sh.out());
  const int rc = std::system(command.c_str());
  if (rc != 0) throw std::runtime_error(fmt::format("{} exited with {}", cmd, WIFEXITED(rc) ? WEXITSTATUS(rc) : rc));
}

void open_command(Shell& sh, const DotCall& c) {
  const std::string& file = c.words[1];
  const bool saved = is_sqlite_file(file);
  auto next = std::make_unique<Session>(saved ? file : "");
  std::swap(sh.session, next);
  try {
    if (!saved) sh.load(file);
    sh.session->finish();
  } catch (...) {
    std::swap(sh.session, next);  // keep the database we had
    throw;
  }
}

void attach(Shell& sh, const DotCall& c) {
  const auto& w = c.words;
  if (w[2] != "AS") throw UsageError{};
  if (is_sqlite_file(w[1])) {
    sh.session->attach(w[1], w[3]);
  } else {
    LoadOptions opt;
    sh.session->attach(w[1], w[3], opt);
  }
}

void parameter(Shell& sh, const DotCall& c) {
  const auto& w = c.words;
  if (c.arg(1) == "set" && w.size() == 4)
    sh.parameters[w[2]] = w[3];
  else if (c.arg(1) == "list" && w.size() == 2)
    for (auto& [k, v] : sh.parameters) sh.emit(fmt::format("{} {}\n", k, v));
  else if (c.arg(1) == "clear" && w.size() == 2)
    sh.parameters.clear();
  else
    throw UsageError{};
}

void print_command(Shell& sh, const DotCall& c) {
  std::string text;
  for (size_t i = 1; i < c.words.size(); ++i) text += (i > 1 ? " " : "") + c.words[i];
  sh.emit(fmt::format("{}\n", text));
}

void cd(Shell&, const DotCall& c) {
  if (chdir(c.words[1].c_str()) != 0)
    throw std::runtime_error(fmt::format("cannot change to {}: {}", c.words[1], strerror(errno)));
}

}  // namespace

std::vector<DotCommand> sqlite3_command_rows() {
  using C = DotCommand::Complete;
  // clang-format off
  return {
    {{".attach"}, {{"FILE AS NAME", "open a saved .db, or load a trace, as schema NAME (SQL: NAME.event ...)"}},
     attach, 3, 3, C::files},
    {{".bail"}, {{"on|off", "stop at the first error"}}, flag, 1, 1},
    {{".cd"}, {{"DIRECTORY", "change the working directory (file names after it are relative to DIRECTORY)"}},
     cd, 1, 1, C::files},
    {{".changes"}, {{"on|off", "after each statement that writes, print the rows it changed"}}, flag, 1, 1},
    {{".databases"}, {{"", "the attached databases and their files"}}, databases, 0, 0},
    {{".dump"}, {{"[TABLE]", "the main database (or the tables matching TABLE) as SQL that rebuilds it"}},
     [](Shell& sh, const DotCall& c) { dump(sh, c.arg(1)); }, 0, 1},
    {{".echo"}, {{"on|off", "print each statement before running it"}}, flag, 1, 1},
    {{".eqp"}, {{"on|off", "print each statement's query plan before running it"}}, flag, 1, 1},
    {{".exit", ".quit"}, {{"[CODE]", "leave tlsql (exit code CODE)"}}, quit_command, 0, 1},
    {{".headers"}, {{"on|off", "show column names (default on)"}}, flag, 1, 1},
    {{".help"}, {{"[TOPIC]", "this text, or the dot-commands and functions whose name starts with TOPIC"}},
     [](Shell& sh, const DotCall& c) { print_help(sh, c.arg(1)); }, 0, 1},
    {{".import"}, {{"FILE.csv TABLE", "the CSV rows into TABLE (a new table takes the header line as column names)"}},
     [](Shell& sh, const DotCall& c) { import_csv(sh, c.words[1], c.words[2]); }, 2, 2, C::files},
    {{".indexes"}, {{"[TABLE]", "the indexes (of the tables matching TABLE)"}}, indexes, 0, 1, C::words, ".indices"},
    {{".mode"}, {{"[MODE] [--wrap N]", "box, table, markdown, column, csv, json, line, list, tabs, html, insert [TABLE]\n"
                  "or quote; no MODE: print the mode. --wrap N: aligned cells wrap at N columns.\n"
                  "On a terminal tables fit its width: long text is cut to 3 lines ending in\n"
                  "an ellipsis (.mode line, --wrap or .width show it whole), numbers are never\n"
                  "cut, and a table too wide even so drops its rules, then prints rows as lines"}},
     mode, 0, -1, C::modes},
    {{".nullvalue"}, {{"TEXT", "print TEXT for NULL (text modes)"}},
     [](Shell& sh, const DotCall& c) { sh.output.nullvalue = c.arg(1); }, 0, 1},
    {{".once"}, {{"FILE", "send the next result to FILE"}},
     [](Shell& sh, const DotCall& c) { sh.redirect(c.words.size() > 1 ? c.words[1] : "stdout", true); }, 0, 1,
     C::files},
    {{".open"}, {{"FILE", "close this database; open a saved .db or load a trace instead"}}, open_command, 1, 1, C::files},
    {{".output"}, {{"[FILE]", "send results to FILE (no FILE: back to stdout)"}},
     // (no FILE is stdout, as in sqlite3; `.output ''` names no file: an error)
     [](Shell& sh, const DotCall& c) { sh.redirect(c.words.size() > 1 ? c.words[1] : "stdout", false); }, 0, 1,
     C::files},
    {{".parameter"}, {{"set @K V", "bind V to @K in later statements; .parameter list / clear"}}, parameter, 1, 3},
    {{".print"}, {{"TEXT...", "print TEXT"}}, print_command},
    {{".read"}, {{"FILE", "run the SQL and dot-commands in FILE"}},
     [](Shell& sh, const DotCall& c) { sh.read_script(c.arg(1)); }, 0, -1, C::files},
    {{".save"}, {{"FILE.db", "save the main database (reopen with `tlsql FILE.db`)"}},
     [](Shell& sh, const DotCall& c) { sh.save(c.words[1]); }, 1, 1, C::files},
    {{".schema"}, {{"[PATTERN]", "CREATE statements of tables and views (matching PATTERN); a virtual table's columns"}},
     [](Shell& sh, const DotCall& c) { print_schema(sh, c.arg(1)); }, 0, 1},
    {{".separator"}, {{"TEXT", "list mode's column separator (default |)"}},
     [](Shell& sh, const DotCall& c) { sh.output.separator = c.words[1]; }, 1, -1},
    {{".shell", ".system"}, {{"CMD", "run CMD in the shell"}}, shell_command, 0, -1, C::files},
    {{".show"}, {{"", "the current settings"}}, [](Shell& sh, const DotCall&) { print_settings(sh); }, 0, 0},
    {{".tables"}, {{"[PATTERN]", "list tables and views (matching PATTERN, LIKE)"}},
     [](Shell& sh, const DotCall& c) { print_tables(sh, c.arg(1)); }, 0, 1},
    {{".timer"}, {{"on|off", "print the time each statement takes"}}, flag, 1, 1},
    {{".version"}, {{"", "tlsql's and SQLite's versions"}},
     [](Shell& sh, const DotCall&) { sh.emit(fmt::format("tlsql {} (SQLite {})\n", TLSQL_VERSION, sqlite3_libversion())); },
     0, 0},
    {{".width"}, {{"N1 N2 ...", "aligned modes: column widths (0: as needed, < 0: right-aligned); longer cells wrap"}},
     width},
  };
  // clang-format on
}

}  // namespace tlsql
