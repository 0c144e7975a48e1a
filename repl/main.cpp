// tlsql: load PyTorch profiler traces into SQLite and answer SQL about them.
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "input.h"
#include "shell.h"
#include "sqlite_util.h"
#include "tlsql.h"

namespace {

bool is_sqlite_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[16] = {};
  return f.read(magic, 16) && std::string_view(magic, 16) == std::string_view("SQLite format 3\0", 16);
}

std::string human_count(int64_t n) {  // 412331 -> "412,331"
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tlsql: SQL over PyTorch profiler traces (Kineto JSON, .json or .json.gz, or a saved .db)"};
  app.set_version_flag("--version", "tlsql 0.1.0");
  std::vector<std::string> traces, commands;
  std::string script, out_db;
  bool bail = false, quiet = false;
  std::string mode_flag;
  app.add_option("TRACE", traces, "trace files (.json, .json.gz) or one saved .db");
  app.add_option("-c", commands, "run SQL (statements and dot-commands) and exit; may be repeated")
      ->allow_extra_args(false);
  app.add_option("-f", script, "run a script file and exit")->check(CLI::ExistingFile);
  app.add_option("-o", out_db, "save the loaded database to FILE.db (reopen it later with `tlsql FILE.db`)");
  app.add_flag("--bail", bail, "stop at the first error");
  app.add_flag("-q", quiet, "no banner or load summary");
  for (const char* m : {"csv", "json", "box", "markdown", "table", "line"})
    app.add_flag_callback(
        fmt::format("--{}", m), [&mode_flag, m] { mode_flag = m; }, fmt::format("output mode {}", m));
  app.footer(
      "Default output: box on a terminal, csv when piped. With no -c/-f, SQL is read from stdin when it\n"
      "is not a terminal, else an interactive prompt opens. Exit code 1 if loading or any statement failed.");
  CLI11_PARSE(app, argc, argv);

  const bool tty_in = isatty(STDIN_FILENO), tty_out = isatty(STDOUT_FILENO), tty_err = isatty(STDERR_FILENO);

  tlsql::EventStore store;  // outlives the connection, which reads it through the event table
  sqlite3* db = nullptr;
  bool open_saved = traces.size() == 1 && is_sqlite_file(traces[0]);
  for (size_t i = 0; i < traces.size() && !open_saved; ++i)
    if (is_sqlite_file(traces[i])) {
      fmt::print(stderr, "tlsql: error: {}: a saved database can only be opened on its own, not with traces\n",
                 traces[i]);
      return 1;
    }
  if (sqlite3_open_v2(open_saved ? traces[0].c_str() : ":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    fmt::print(stderr, "tlsql: error: {}: {}\n", open_saved ? traces[0] : ":memory:", sqlite3_errmsg(db));
    return 1;
  }
  tlsql::register_sql(db, &store);
  try {
    if (!open_saved) {
      for (const std::string& path : traces) {
        tlsql::LoadStats st = tlsql::load_trace_file(db, store, path);
        if (!quiet && tty_err) {
          fmt::print(stderr, "loaded {}: {} events in {:.2f} s ({:.0f} MB/s)\n", path, human_count(st.events),
                     st.total_s, st.json_bytes / 1e6 / std::max(st.total_s, 1e-9));
          if (!st.health.empty()) {
            std::string h;
            for (auto& [check, n] : st.health)
              h += fmt::format("{}{} {}", h.empty() ? "" : ", ", check, human_count(n));
            fmt::print(stderr, "  health: {} (SELECT * FROM health)\n", h);
          }
        }
      }
    }
    tlsql::finish_load(db, store);
    if (!out_db.empty()) tlsql::save_database(db, out_db);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tlsql: error: {}\n", e.what());
    sqlite3_close(db);
    return 1;
  }

  tlsql::Shell shell(db);
  shell.mode = tty_out ? tlsql::OutputMode::box : tlsql::OutputMode::csv;
  if (!mode_flag.empty()) shell.mode = *tlsql::parse_mode(mode_flag);
  shell.bail = bail;

  bool batch = !commands.empty() || !script.empty();
  for (const std::string& c : commands) {
    if (shell.stop() || !shell.run_script(c, "-c")) break;
  }
  if (!script.empty() && !shell.stop()) {
    std::ifstream f(script, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    shell.run_script(ss.str(), script);
  }
  if (!batch) {
    if (tty_in) {
      shell.interactive();
    } else if (!out_db.empty() && traces.size() > 0 && std::cin.peek() == EOF) {
      // `tlsql trace.json -o trace.db < /dev/null`: nothing to run.
    } else {
      std::stringstream ss;
      ss << std::cin.rdbuf();
      shell.run_script(ss.str(), "-");
    }
  }
  sqlite3_close(db);
  return shell.failed() ? 1 : 0;
}
