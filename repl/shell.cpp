#include "shell.h"

#include <editline/readline.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

namespace tlsql {

namespace {

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool quoted = false, any = false;
  char q = 0;
  for (char c : line) {
    if (quoted) {
      if (c == q)
        quoted = false;
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quoted = true, q = c, any = true;
    } else if (c == ' ' || c == '\t') {
      if (any || !cur.empty()) words.push_back(cur), cur.clear(), any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) words.push_back(cur);
  return words;
}

bool only_space(const std::string& s) { return s.find_first_not_of(" \t\r\n;") == std::string::npos; }

constexpr const char* kHelp = R"(.exit / .quit          leave tlsql
.headers on|off        show column names (default on)
.help                  this text
.mode MODE             box, table, markdown, csv, json or line
.once FILE             send the next result to FILE
.output [FILE]         send results to FILE (no FILE: back to stdout)
.read FILE             run the SQL and dot-commands in FILE
.schema [PATTERN]      CREATE statements of tables and views (matching PATTERN)
.tables                list tables and views
.timer on|off          print the time each statement takes
)";

}  // namespace

void Shell::error(const std::string& source, int lineno, const std::string& msg) {
  ++errors_;
  if (source.empty())
    fmt::print(stderr, "error: {}\n", msg);
  else
    fmt::print(stderr, "error: {}near line {}: {}\n", source == "-" ? "" : source + ": ", lineno, msg);
}

void Shell::run_sql(const std::string& sql, const std::string& source, int first_line) {
  const char* p = sql.c_str();
  int line = first_line;
  while (*p && !stop()) {
    // Count lines of the leading whitespace so errors point at the statement itself.
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') line += *p++ == '\n';
    if (!*p) break;
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    int rc = sqlite3_prepare_v2(db_, p, -1, &stmt, &tail);
    if (rc != SQLITE_OK) {
      error(source, line, sqlite3_errmsg(db_));
      return;  // the rest of this statement group cannot be split reliably
    }
    if (stmt) {
      ResultSet rs;
      rc = collect_rows(stmt, rs);
      if (rc != SQLITE_DONE) {
        error(source, line, sqlite3_errmsg(db_));
      } else {
        print_result(out(), rs, mode, headers);
        if (once_) {
          fclose(out_);
          out_ = nullptr;
          once_ = false;
        }
      }
      sqlite3_finalize(stmt);
      if (timer)
        fmt::print(stderr, "Run Time: {:.3f} s\n",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    for (const char* c = p; c < tail; ++c) line += *c == '\n';
    p = tail;
  }
}

bool Shell::run_script(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  std::string line, buf;
  int lineno = 0, start = 0;
  while (!stop() && std::getline(in, line)) {
    ++lineno;
    if (buf.empty() && !line.empty() && line.find_first_not_of(" \t") != std::string::npos &&
        line[line.find_first_not_of(" \t")] == '.') {
      if (!dot_command(line.substr(line.find_first_not_of(" \t")), source, lineno)) return false;
      continue;
    }
    if (buf.empty()) {
      if (only_space(line)) continue;
      start = lineno;
    }
    buf += line;
    buf += '\n';
    if (sqlite3_complete(buf.c_str())) {
      run_sql(buf, source, start);
      buf.clear();
    }
  }
  if (!buf.empty() && !only_space(buf) && !stop()) run_sql(buf, source, start);  // last statement without ';'
  return !quit_;
}

void Shell::print_tables() {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db_,
                     "SELECT name FROM sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' "
                     "ORDER BY name",
                     -1, &s, nullptr);
  std::vector<std::string> names;
  while (sqlite3_step(s) == SQLITE_ROW) names.emplace_back((const char*)sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  size_t w = 0;
  for (auto& n : names) w = std::max(w, n.size());
  size_t per_line = std::max<size_t>(1, 80 / (w + 2));
  for (size_t i = 0; i < names.size(); ++i)
    fmt::print(out(), "{:<{}}{}", names[i], w + 2, (i + 1) % per_line == 0 || i + 1 == names.size() ? "\n" : "");
}

void Shell::print_schema(const std::string& like) {
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db_,
                     "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                     "AND (?1 IS NULL OR name LIKE ?1) ORDER BY type DESC, name",
                     -1, &s, nullptr);
  if (!like.empty()) sqlite3_bind_text(s, 1, like.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(s) == SQLITE_ROW) fmt::print(out(), "{};\n", (const char*)sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
}

bool Shell::dot_command(const std::string& line, const std::string& source, int lineno) {
  auto w = split_words(line);
  const std::string& cmd = w[0];
  auto arg = [&](size_t i) { return i < w.size() ? w[i] : std::string(); };
  if (cmd == ".quit" || cmd == ".exit") {
    quit_ = true;
    return false;
  } else if (cmd == ".help") {
    fmt::print(out(), "{}", kHelp);
  } else if (cmd == ".tables") {
    print_tables();
  } else if (cmd == ".schema") {
    print_schema(arg(1));
  } else if (cmd == ".mode") {
    auto m = parse_mode(arg(1));
    if (!m)
      error(source, lineno, fmt::format("unknown mode '{}': use box, table, markdown, csv, json or line", arg(1)));
    else
      mode = *m;
  } else if (cmd == ".headers" || cmd == ".timer") {
    bool& flag = cmd == ".headers" ? headers : timer;
    if (arg(1) == "on" || arg(1) == "off")
      flag = arg(1) == "on";
    else
      error(source, lineno, fmt::format("{} takes on or off", cmd));
  } else if (cmd == ".output" || cmd == ".once") {
    if (out_) fclose(out_), out_ = nullptr;
    once_ = false;
    if (!arg(1).empty() && arg(1) != "stdout") {
      out_ = fopen(arg(1).c_str(), "w");
      if (!out_)
        error(source, lineno, fmt::format("cannot write {}: {}", arg(1), strerror(errno)));
      else
        once_ = cmd == ".once";
    }
  } else if (cmd == ".read") {
    std::ifstream f(arg(1), std::ios::binary);
    if (arg(1).empty() || !f) {
      error(source, lineno, fmt::format("cannot open '{}'", arg(1)));
    } else if (read_depth_ > 16) {
      error(source, lineno, ".read nested too deeply");
    } else {
      std::stringstream ss;
      ss << f.rdbuf();
      ++read_depth_;
      bool go_on = run_script(ss.str(), arg(1));
      --read_depth_;
      return go_on;
    }
  } else {
    error(source, lineno, fmt::format("unknown command '{}': .help lists them", cmd));
  }
  return true;
}

void Shell::interactive() {
  fmt::print("tlsql — SQL over PyTorch profiler traces. \".help\" lists commands; statements end with ';'.\n");
  std::string buf;
  int lineno = 0;
  while (true) {
    char* raw = readline(buf.empty() ? "tlsql> " : "  ...> ");
    if (!raw) break;
    std::string line = raw;
    free(raw);
    ++lineno;
    if (!only_space(line)) add_history(line.c_str());
    if (buf.empty() && !line.empty() &&
        line[line.find_first_not_of(" \t") == std::string::npos ? 0 : line.find_first_not_of(" \t")] == '.') {
      if (!dot_command(line.substr(line.find_first_not_of(" \t")), "", lineno)) break;
      continue;
    }
    if (buf.empty() && only_space(line)) continue;
    buf += line + "\n";
    if (sqlite3_complete(buf.c_str())) {
      run_sql(buf, "", 1);
      buf.clear();
    }
  }
  if (out_) fclose(out_), out_ = nullptr;
}

}  // namespace tlsql
