#include "repl/shell.h"

#include <editline/readline.h>
#include <fmt/format.h>
#include <signal.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <clocale>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "repl/dot_commands.h"
#include "session/overlay.h"
#include "src/input.h"
#include "src/output_file.h"
#include "src/sqlite_util.h"

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

// Blank for statement splitting: whitespace, ';' or a "--" comment line (as the sqlite3 shell).
bool only_space(const std::string& s) {
  size_t p = s.find_first_not_of(" \t\r\n;");
  return p == std::string::npos || (s.compare(p, 2, "--") == 0 && s.find('\n', p) == std::string::npos);
}

std::string human_count(int64_t n) {  // 412331 -> "412,331"
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Ctrl-C: interrupt the statement or dot-command that is running, never the session. Loops of
// our own (.tree) poll interrupted(); SQLite statements stop through sqlite3_interrupt.
std::atomic<sqlite3*> g_running{nullptr};
std::atomic<bool> g_interrupted{false};
void on_sigint(int) {
  g_interrupted = true;
  if (sqlite3* db = g_running.load()) sqlite3_interrupt(db);
}

// The prompt's input, read by us rather than by libedit, so that a Ctrl-C at the prompt ends
// readline() whatever libedit makes of an interrupted read (twice the prompt did not come back
// within 10 s in a loaded test run): an interrupted read ends the line when the interrupt was
// ours and is retried otherwise (a resize). UTF-8 sequences are decoded (libedit takes one
// character per call).
int read_prompt_char(FILE* in) {
  auto byte = [&]() -> int {
    for (;;) {
      unsigned char c;
      ssize_t n = ::read(fileno(in), &c, 1);
      if (n == 1) return c;
      if (n < 0 && errno == EINTR && !g_interrupted) continue;
      return EOF;
    }
  };
  int c = byte();
  if (c == EOF || c < 0x80) return c;
  const int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  int cp = more == 3 ? c & 0x07 : more == 2 ? c & 0x0F : c & 0x1F;
  for (int i = 0; i < more; ++i) {
    int b = byte();
    if (b == EOF) return EOF;
    if ((b & 0xC0) != 0x80) return 0xFFFD;  // not UTF-8: a replacement character, as the loader does
    cp = (cp << 6) | (b & 0x3F);
  }
  return more ? cp : 0xFFFD;
}

// While a dot-command runs, Ctrl-C reaches it (and the statements it runs).
struct DotCommandScope {
  sqlite3* before;
  explicit DotCommandScope(sqlite3* db) : before(g_running.exchange(db)) { g_interrupted = false; }
  ~DotCommandScope() { g_running = before; }
};

// Tab completion candidates, refreshed from the database before each prompt: SQL words, tables,
// columns, functions and dot-commands (g_words); report names, mode names and @parameters for
// the places they go (the dot-command table's `complete`). After a dot-command that takes a file,
// file names (libedit's). A candidate holding a control character (a table named with OSC 52,
// which writes the clipboard, or ESC[2J; a file so named) is never offered: libedit would print
// it raw in the list of matches and put it on the line (has_controls, src/terminal.h).
std::vector<std::string> g_words, g_reports, g_parameters;
const std::vector<std::string>* g_candidates = &g_words;
char* complete_next(const char* text, int state) {
  static size_t i;
  static size_t len;
  if (!state) i = 0, len = std::strlen(text);
  while (i < g_candidates->size()) {
    const std::string& w = (*g_candidates)[i++];
    if (w.compare(0, len, text) == 0 && !has_controls(w)) return strdup(w.c_str());
  }
  return nullptr;
}
// libedit's file names, less those holding control characters.
char* complete_file(const char* text, int state) {
  for (char* name = rl_filename_completion_function(text, state); name;
       name = rl_filename_completion_function(text, 1)) {
    if (!has_controls(name)) return name;
    free(name);
  }
  return nullptr;
}
char** complete(const char* text, int start, int) {
  const std::string before(rl_line_buffer, (size_t)std::max(0, start));
  const std::string first = before.substr(0, before.find_first_of(" \t"));
  const bool first_word = before.find_first_not_of(" \t") == std::string::npos;
  const DotCommand* command = first_word ? nullptr : find_dot_command(first);
  const auto wants = command ? command->complete : DotCommand::Complete::words;
  rl_attempted_completion_over = 1;
  if (wants == DotCommand::Complete::files && text[0] != '@') return rl_completion_matches(text, complete_file);
  g_candidates = text[0] == '@'                           ? &g_parameters
                 : wants == DotCommand::Complete::reports ? &g_reports
                 : wants == DotCommand::Complete::modes   ? &mode_names()
                                                          : &g_words;
  return rl_completion_matches(text, complete_next);
}

std::string history_path() {
  const char* home = getenv("HOME");
  return home ? std::string(home) + "/.tlsql_history" : std::string();
}

}  // namespace

bool interrupted() { return g_interrupted; }

void Shell::load(const std::string& path, const std::string& schema, ReadBuffers* reuse) {
  std::vector<std::string> links_skipped;
  if (const auto files = trace_files(path, &links_skipped); files.size() != 1 || files[0] != path) {
    // A directory: its traces (one level, no deeper). A file in it that is no trace at all (a
    // PyTorch execution trace beside its Kineto trace, a config) is skipped, said on stderr and
    // in health; the load fails only when none is a trace. A broken trace fails it as always.
    size_t loaded = 0;
    std::string first_skip;
    ReadBuffers own;  // (dropped after the folder's last file: a load after it need not hold them)
    if (!reuse) reuse = &own;
    for (const std::string& why : links_skipped) {
      say(stderr, fmt::format("tlsql: warning: {}: skipped\n", why));
      session->skip_file(schema, "folder_link_skipped", why);
    }
    for (const std::string& f : files) try {
        load(f, schema, reuse);
        ++loaded;
      } catch (const NotATrace& e) {
        say(stderr, fmt::format("tlsql: warning: {}: skipped\n", e.what()));
        session->skip_file(schema, "file_not_a_trace", e.what());
        if (first_skip.empty()) first_skip = e.what();
      }
    if (!loaded) throw LoadError(fmt::format("{}: no file in the directory is a trace ({})", path, first_skip));
    return;
  }
  // A progress bar on a terminal for loads that last over a second.
  const bool bar = !quiet && isatty(STDERR_FILENO);
  std::atomic<size_t> done{0}, total{0};
  std::atomic<bool> parsed{false};
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::thread painter;
  if (bar)
    painter = std::thread([&] {
      try {
        std::unique_lock<std::mutex> l(mu);
        if (cv.wait_for(l, std::chrono::seconds(1), [&] { return finished; })) return;
        bool drawn = false;
        while (!finished) {
          size_t t = total.load(), d = parsed ? t : done.load();
          if (t) {
            int pct = (int)(100.0 * d / t), w = pct / 4;
            std::fputs("\r", stderr);  // (the bar's own control character; the path goes through say)
            say(stderr,
                fmt::format("loading {} {:3}% [{}{}] {} of {} MB{}", path, pct, std::string(w, '='),
                            std::string(25 - w, ' '), d >> 20, t >> 20, parsed ? ", linking the call tree" : ""));
            drawn = true;
          }
          cv.wait_for(l, std::chrono::milliseconds(100), [&] { return finished; });
        }
        if (drawn) fmt::print(stderr, "\r\033[K");
      } catch (const std::exception&) {  // (bad_alloc, a write error) the bar stops; the load goes on
      }
    });
  LoadOptions opt;
  opt.schema = schema;
  opt.reuse = reuse;
  opt.progress = [&](size_t d, size_t t) { done = d, total = t; };
  opt.stage_done = [&](const char* stage) { parsed = parsed || std::string_view(stage) == "parse"; };
  auto stop_bar = [&] {
    if (!bar) return;
    {
      std::lock_guard<std::mutex> l(mu);
      finished = true;
    }
    cv.notify_all();
    painter.join();
  };
  LoadStats st;
  try {
    st = session->load(path, opt);
  } catch (...) {
    stop_bar();
    throw;
  }
  stop_bar();
  if (quiet || !isatty(STDERR_FILENO)) return;
  say(stderr, fmt::format("loaded {}: {} events in {:.2f} s ({:.0f} MB/s)\n", path, human_count(st.events), st.total_s,
                          st.json_bytes / 1e6 / std::max(st.total_s, 1e-9)));
  if (!st.health.empty()) {
    std::string h;
    for (auto& [check, n] : st.health) h += fmt::format("{}{} {}", h.empty() ? "" : ", ", check, human_count(n));
    say(stderr, fmt::format("  health: {} (SELECT * FROM health)\n", h));
  }
}

void Shell::save(const std::string& path) {
  session->save(path);
  if (quiet) return;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) return say(stderr, fmt::format("saved {}\n", path));
  say(stderr, fmt::format("saved {} ({:.1f} MB)\n", path, (double)bytes / 1e6));
}

void Shell::attach_trace(const std::string& path, const std::string& name) {
  session->begin_attach(name);
  try {
    load(path, name);
    session->finish(name);
  } catch (...) {
    session->abandon_attach(name);
    throw;
  }
}

void Shell::error(const std::string& source, int lineno, const std::string& text) {
  ++errors_;
  if (source.empty())
    say(stderr, fmt::format("error: {}\n", text));
  else if (source.starts_with("report "))  // a canned report's lines are not the user's to fix: no line number
    say(stderr, fmt::format("error: {}\n", report_error(source.substr(7), text)));
  else
    say(stderr, fmt::format("error: {}near line {}: {}\n", source == "-" ? "" : source + ": ", lineno, text));
}

void Shell::emit(const std::string& text) { say(out(), text); }

void Shell::complain(const std::string& msg) {
  ++errors_;
  say(stderr, fmt::format("error: {}\n", msg));
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
    if (sqlite3_prepare_v2(db(), p, -1, &stmt, &tail) != SQLITE_OK) {
      error(source, line, sqlite3_errmsg(db()));
      return;  // the rest of this statement group cannot be split reliably
    }
    if (stmt) {
      if (echo) emit(fmt::format("{}\n", std::string_view(p, tail - p)));
      bind_parameters(stmt, parameters);
      int64_t rows = 0;
      const int rc = run_statement(stmt, source, line, rows);
      if (rc != SQLITE_DONE) error(source, line, rc == SQLITE_INTERRUPT ? "interrupted" : sqlite3_errmsg(db()));
      sqlite3_finalize(stmt);
    }
    for (const char* c = p; c < tail; ++c) line += *c == '\n';
    p = tail;
  }
}

int Shell::run_statement(sqlite3_stmt* stmt, const std::string& source, int line, int64_t& rows) {
  const auto t0 = std::chrono::steady_clock::now();
  if (eqp) print_plan(stmt);
  const int64_t changed_before = sqlite3_total_changes64(db());
  g_running = db();
  OutputOptions opt = output;
  // On a terminal, wide tables fit it (kernel names run to 700 characters): session/output.h;
  // --wrap / .mode MODE --wrap N / .width set widths of their own.
  opt.fit = (int)terminal_width();
  const int rc = print_statement(out(), stmt, opt, &rows);
  g_running = nullptr;
  // A full disk or a closed pipe is an error like any other, not a silent exit 0.
  if (fflush(out()) != 0 || ferror(out())) {
    error(source, line, fmt::format("{}: cannot write: {}", out_ ? out_name_ : "stdout", std::strerror(errno)));
    clearerr(out());
  }
  if (once_) {
    fclose(out_);
    out_ = nullptr;
    once_ = false;
  }
  if (changes && rc == SQLITE_DONE && !sqlite3_stmt_readonly(stmt))
    emit(fmt::format("changes: {}   total_changes: {}\n", sqlite3_total_changes64(db()) - changed_before,
                     sqlite3_total_changes64(db())));
  if (timer)
    say(stderr, fmt::format("Run Time: {:.3f} s\n",
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  return rc;
}

// A report's rows in the shell's output mode, as any statement's; its notes on stderr.
class Shell::ReportPrinter : public ReportOutput {
 public:
  ReportPrinter(Shell& shell, std::string source) : shell_(shell), source_(std::move(source)) {}
  void note(const std::string& line) override { say(stderr, line + "\n"); }  // (notes quote op and step names)
  int statement(sqlite3_stmt* stmt, int64_t& rows) override {
    if (shell_.echo) shell_.emit(fmt::format("{}\n", sqlite3_sql(stmt)));
    return shell_.run_statement(stmt, source_, 0, rows);
  }
  void empty(const std::vector<std::string>& columns) override { print_empty(shell_.out(), columns, shell_.output); }

 private:
  Shell& shell_;
  std::string source_;
};

void Shell::run_report(const std::string& asked) {
  const ReportPlan plan = plan_report(db(), asked, shell_report_hints());
  ReportPrinter printer(*this, "report " + plan.name);
  const int errors = errors_;
  try {
    tlsql::run_report(db(), plan, parameters, printer);
  } catch (const ReportError& e) {
    complain(e.what());
  }
  if (errors_ != errors) failed_reports_.insert(asked);
}

bool Shell::run_script(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  std::string line, buf;
  int lineno = 0, start = 0;
  while (!stop() && std::getline(in, line)) {
    ++lineno;
    size_t first = line.find_first_not_of(" \t");
    if (buf.empty() && first != std::string::npos && line[first] == '.') {
      if (!dot_command(line.substr(first), source, lineno)) return false;
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

void Shell::print_plan(sqlite3_stmt* stmt) {
  const char* sql = sqlite3_sql(stmt);
  if (!sql || std::string_view(sql).find_first_not_of(" \t\n") == std::string_view::npos) return;
  sqlite3_stmt* plan = nullptr;
  if (sqlite3_prepare_v2(db(), fmt::format("EXPLAIN QUERY PLAN {}", sql).c_str(), -1, &plan, nullptr) != SQLITE_OK)
    return;
  bind_parameters(plan, parameters);
  emit("QUERY PLAN\n");
  std::map<int, int> depth;  // node id -> depth
  while (sqlite3_step(plan) == SQLITE_ROW) {
    const int id = sqlite3_column_int(plan, 0), parent = sqlite3_column_int(plan, 1);
    depth[id] = parent && depth.count(parent) ? depth[parent] + 1 : 0;
    emit(fmt::format("{}`--{}\n", std::string(3 * depth[id], ' '), (const char*)sqlite3_column_text(plan, 3)));
  }
  sqlite3_finalize(plan);
}

size_t Shell::terminal_width() const {
  winsize ws{};
  if (out_ || !isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col <= 20) return 0;
  return ws.ws_col;
}

void Shell::quit(std::optional<int> code) {
  if (code) exit_code_ = *code & 255;
  quit_ = true;
}

void Shell::redirect(const std::string& file, bool once) {
  if (out_ && fclose(out_) != 0) complain(fmt::format("{}: cannot write: {}", out_name_, strerror(errno)));
  out_ = nullptr;
  once_ = false;
  if (file == "stdout") return;  // (an empty name is refuse_input's error, as for every output)
  refuse_input(file);            // (fopen "w" empties the file at once)
  out_ = fopen(file.c_str(), "w");
  out_name_ = file;
  if (!out_) throw std::runtime_error(fmt::format("cannot write {}: {}", file, strerror(errno)));
  once_ = once;
}

bool Shell::read_script(const std::string& path) {
  if (read_depth_ > 16) throw std::runtime_error(".read nested too deeply");
  const std::string text = read_input_file(path);
  ++read_depth_;
  const bool go_on = run_script(text, path);
  --read_depth_;
  return go_on;
}

void Shell::overlay_command(const std::string& path) {
  const std::string said = write_overlay(db(), parameters, path);
  if (!quiet) say(stderr, said + "\n");
}

bool Shell::dot_command(const std::string& line, const std::string& source, int lineno) {
  const auto words = split_words(line);
  const std::string& name = words[0];
  DotCommandScope scope(db());
  const DotCommand* command = find_dot_command(name);
  try {
    if (!command)
      throw std::runtime_error(
          fmt::format("unknown command '{}': {}.help lists them", name, maybe_meant(name, dot_command_names())));
    const int args = (int)words.size() - 1;
    if (args < command->min_args || (command->max_args >= 0 && args > command->max_args)) throw UsageError{};
    command->run(*this, DotCall{line, words});
  } catch (const UsageError&) {
    error(source, lineno, dot_command_usage(*command, name));
  } catch (const std::bad_alloc&) {  // (what() would say "std::bad_alloc")
    error(source, lineno, fmt::format("out of memory while running {}", name));
  } catch (const std::exception& e) {
    error(source, lineno, e.what());
  }
  return !quit_;
}

void Shell::interactive() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  rl_getc_function = read_prompt_char;  // before anything initialises libedit
  // libedit turns the typed characters back into bytes with the C library's multibyte functions:
  // in the "C" locale every non-ASCII character was dropped ('µs' became 's').
  if (!std::setlocale(LC_CTYPE, "C.UTF-8")) std::setlocale(LC_CTYPE, "");
  const std::string hist = history_path();
  using_history();
  if (!hist.empty()) read_history(hist.c_str());
  rl_attempted_completion_function = complete;
  fmt::print("tlsql — SQL over PyTorch profiler traces. \".help\" lists commands; statements end with ';'.\n");
  std::string buf;
  std::set<std::string> report_params;
  auto refresh_words = [&] {
    std::set<std::string> words;
    for (const std::string& c : listed_dot_command_names()) words.insert(c);
    for (const char* c : {"SELECT", "FROM", "WHERE", "GROUP", "ORDER", "BY", "LIMIT", "JOIN", "ON", "WITH", "RECURSIVE",
                          "HAVING", "DISTINCT", "COUNT"})
      words.insert(c);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db(),
                       "SELECT name FROM pragma_table_list "
                       "UNION SELECT p.name FROM pragma_table_list m, pragma_table_xinfo(m.name, m.schema) p "
                       "WHERE p.hidden = 0 "
                       "UNION SELECT name FROM pragma_function_list UNION SELECT name FROM pragma_module_list",
                       -1, &s, nullptr);
    while (s && sqlite3_step(s) == SQLITE_ROW)
      if (auto t = sqlite3_column_text(s, 0)) words.insert((const char*)t);
    sqlite3_finalize(s);
    g_words.assign(words.begin(), words.end());
    // The @parameters the canned reports read (collected once, below), and any the user set.
    std::set<std::string> params = report_params;
    for (const auto& [k, v] : parameters) params.insert(k);
    g_parameters.assign(params.begin(), params.end());
  };
  // Report names and the @parameters their SQL reads (report_parameters: not the ones a comment
  // names, nor the loader's own @trace / @report): fixed for the session.
  g_reports = report_names();
  for (const std::string& r : g_reports)
    for (std::string& p : report_parameters(r)) report_params.insert(std::move(p));
  refresh_words();
  while (!quit_) {
    g_interrupted = false;
    char* raw = readline(buf.empty() ? "tlsql> " : "  ...> ");
    if (!raw && g_interrupted) {
      // Ctrl-C at the prompt (readline returns as for end of input): as sqlite3, drop the line
      // and any half-typed statement, and stay.
      fmt::print("^C\n");
      std::fflush(stdout);
      buf.clear();
      continue;
    }
    if (!raw) break;
    std::string line = raw;
    free(raw);
    size_t first = line.find_first_not_of(" \t");
    if (buf.empty() && first != std::string::npos && line[first] == '.') {
      add_history(line.c_str());
      if (!hist.empty()) write_history(hist.c_str());
      if (!dot_command(line.substr(first), "", 0)) break;
      refresh_words();
      continue;
    }
    if (buf.empty() && only_space(line)) continue;
    buf += line + "\n";
    if (sqlite3_complete(buf.c_str())) {
      std::string entry = buf.substr(0, buf.size() - 1);
      add_history(entry.c_str());
      if (!hist.empty()) write_history(hist.c_str());
      run_sql(buf, "", 1);
      buf.clear();
    }
  }
  if (out_) fclose(out_), out_ = nullptr;
}

void Shell::close_output() {
  if (out_ && fclose(out_) != 0) {
    ++errors_;
    say(stderr, fmt::format("tlsql: error: {}: cannot write: {}\n", out_name_, strerror(errno)));
  }
  out_ = nullptr;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    ++errors_;
    say(stderr, fmt::format("tlsql: error: stdout: cannot write: {}\n", strerror(errno ? errno : EIO)));
  }
}

}  // namespace tlsql
