#include "repl/shell.h"

#include <editline/readline.h>
#include <fmt/format.h>
#include <signal.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <clocale>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "pictures/chart.h"
#include "session/suggest.h"
#include "src/input.h"
#include "src/output_file.h"
#include "src/report_fallback.h"
#include "src/sql_assets.h"
#include "src/sqlite_util.h"
#include "udf/registry.h"
#include "udf/tree_access.h"
#include "udf/tree_diff_sql.h"

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

bool parse_int(const std::string& s, int64_t& v) {
  char* end = nullptr;
  if (s.empty()) return false;
  v = std::strtoll(s.c_str(), &end, 10);
  return *end == 0;
}

std::string human_count(int64_t n) {  // 412331 -> "412,331"
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// ns -> µs the way a trace writes them: 45063 -> "45.063", 101200 -> "101.2", 45000 -> "45".
std::string micros(int64_t ns) {
  std::string s = fmt::format("{}.{:03}", ns / 1000, std::abs(ns % 1000));
  if (ns < 0 && ns > -1000) s = "-" + s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// JSON as TraceLens prints its Python lists: ", " between items, strings unquoted.
std::string python_list(const std::string& json) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\' && i + 1 < json.size())
        out += json[++i];
      else if (c == '"')
        in_string = false;
      else
        out += c;
    } else if (c == '"') {
      in_string = true;
    } else {
      out += c;
      if (c == ',') out += ' ';
    }
  }
  return out;
}

constexpr const char* kHelp =
    R"(.attach FILE AS NAME    open a saved .db, or load a trace, as schema NAME (SQL: NAME.event ...)
.bail on|off            stop at the first error
.changes on|off         after each statement that writes, print the rows it changed
.databases              the attached databases and their files
.dump [TABLE]           the main database (or the tables matching TABLE) as SQL that rebuilds it
.echo on|off            print each statement before running it
.eqp on|off             print each statement's query plan before running it
.exit / .quit [CODE]    leave tlsql (exit code CODE)
.headers on|off         show column names (default on)
.help [TOPIC]           this text, or the dot-commands and functions whose name starts with TOPIC
.import FILE.csv TABLE  the CSV rows into TABLE (a new table takes the header line as column names)
.indexes [TABLE]        the indexes (of the tables matching TABLE)
.html FILE.html         write a self-contained HTML report: summary, timeline, ops, kernels, roofline
                        and GPU timeline pictures (and the diff when a trace is attached as other)
.overlay FILE.json      write the trace with its critical path marked, for Perfetto (@annotation,
                        @instance, @rank as the critical_path report)
.mode [MODE] [--wrap N] box, table, markdown, column, csv, json, line, list, tabs, html, insert [TABLE]
                        or quote; no MODE: print the mode. --wrap N: aligned cells wrap at N columns.
                        On a terminal tables fit its width: long text is cut to 3 lines ending in
                        an ellipsis (.mode line, --wrap or .width show it whole), numbers are never
                        cut, and a table too wide even so drops its rules, then prints rows as lines
.nullvalue TEXT         print TEXT for NULL (text modes)
.once FILE              send the next result to FILE
.open FILE              close this database; open a saved .db or load a trace instead
.output [FILE]          send results to FILE (no FILE: back to stdout)
.parameter set @K V     bind V to @K in later statements; .parameter list / clear
.plot roofline FILE [kernels] [WHERE ...]  ops (or kernels) against the GPU's roofline
.plot timeline FILE [STEP | START..END]     GPU streams over time (END, START: ms from the first GPU event)
.plot memory FILE                          allocated / reserved bytes over time per device ([memory] events)
.plot diff FILE [counts|duration] [TOP]     control vs test per name (needs a trace attached as other)
                        FILE: .svg or .png picture, or .csv with the numbers behind it
.print TEXT...          print TEXT
.read FILE              run the SQL and dot-commands in FILE
.replay UID [cuda|cpu] [N [W]]  re-run op UID alone through LibTorch (N iterations after W warm-up;
                        100 and 10): its arguments, mean / median / min µs, the traced time of the op
.export-replay FILE [WHERE ...]  write the replay IR of the ops (default: counted_op) to FILE.json,
                        identical IRs merged with a count; FILE.zip adds a README (tlsql-replay FILE)
.report NAME            run a canned report (.reports lists them)
.reports                list the canned reports
.save FILE.db           save the main database (reopen with `tlsql FILE.db`)
.schema [PATTERN]       CREATE statements of tables and views (matching PATTERN); a virtual table's columns
.separator TEXT         list mode's column separator (default |)
.shell / .system CMD    run CMD in the shell
.show                   the current settings
.stack UID              the chain from UID up to its root, with op shapes (TraceLens style)
.tables [PATTERN]       list tables and views (matching PATTERN, LIKE)
.timer on|off           print the time each statement takes
.tree UID [DEPTH] [all] the subtree under UID (TraceLens style); branches without GPU work are
                        left out unless `all` is given or UID itself launches none
.version                tlsql's and SQLite's versions
.width N1 N2 ...        aligned modes: column widths (0: as needed, < 0: right-aligned); longer cells wrap
)";

// Ctrl-C: interrupt the statement or dot-command that is running, never the session. Loops of
// our own (.tree) poll interrupted(); SQLite statements stop through sqlite3_interrupt.
std::atomic<sqlite3*> g_running{nullptr};
std::atomic<bool> g_interrupted{false};
void on_sigint(int) {
  g_interrupted = true;
  if (sqlite3* db = g_running.load()) sqlite3_interrupt(db);
}
bool interrupted() { return g_interrupted; }

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
// the places they go. After a dot-command that takes a file, file names (libedit's own).
std::vector<std::string> g_words, g_reports, g_parameters;
const std::vector<std::string>* g_candidates = &g_words;
char* complete_next(const char* text, int state) {
  static size_t i;
  static size_t len;
  if (!state) i = 0, len = std::strlen(text);
  while (i < g_candidates->size()) {
    const std::string& w = (*g_candidates)[i++];
    if (w.compare(0, len, text) == 0) return strdup(w.c_str());
  }
  return nullptr;
}
char** complete(const char* text, int start, int) {
  const std::string before(rl_line_buffer, (size_t)std::max(0, start));
  const std::string first = before.substr(0, before.find_first_of(" \t"));
  const bool first_word = before.find_first_not_of(" \t") == std::string::npos;
  static const std::set<std::string> file_commands = {".read",          ".open",   ".attach", ".save",    ".output",
                                                      ".once",          ".import", ".html",   ".overlay", ".plot",
                                                      ".export-replay", ".shell",  ".system"};
  if (!first_word && file_commands.count(first) && text[0] != '@') {
    rl_attempted_completion_over = 0;  // libedit completes the file name
    return nullptr;
  }
  rl_attempted_completion_over = 1;
  g_candidates = text[0] == '@'                      ? &g_parameters
                 : !first_word && first == ".report" ? &g_reports
                 : !first_word && first == ".mode"   ? &mode_names()
                                                     : &g_words;
  return rl_completion_matches(text, complete_next);
}

// The SQL condition after the first `words` words of a dot-command line: "" when there is
// nothing more, nullopt when what follows is not "WHERE ...".
std::optional<std::string> where_after(const std::string& line, size_t words) {
  size_t p = 0;
  for (size_t i = 0; i < words; ++i) {
    p = line.find_first_not_of(" \t", p);
    if (p == std::string::npos) return "";
    p = line.find_first_of(" \t", p);
    if (p == std::string::npos) return "";
  }
  p = line.find_first_not_of(" \t", p);
  if (p == std::string::npos) return "";
  if (line.size() - p < 6 || strncasecmp(line.c_str() + p, "WHERE", 5) != 0 || !isspace((unsigned char)line[p + 5]))
    return std::nullopt;
  return line.substr(p + 6);
}

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

std::string history_path() {
  const char* home = getenv("HOME");
  return home ? std::string(home) + "/.tlsql_history" : std::string();
}

}  // namespace

void Shell::load(const std::string& path, const std::string& schema) {
  if (const auto files = trace_files(path); files.size() != 1 || files[0] != path) {
    // A directory: its traces (one level, no deeper). A file in it that is no trace at all (a
    // PyTorch execution trace beside its Kineto trace, a config) is skipped, said on stderr and
    // in health; the load fails only when none is a trace. A broken trace fails it as always.
    size_t loaded = 0;
    std::string first_skip;
    for (const std::string& f : files) try {
        load(f, schema);
        ++loaded;
      } catch (const NotATrace& e) {
        fmt::print(stderr, "tlsql: warning: {}: skipped\n", e.what());
        session->skip_file(schema, e.what());
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
      std::unique_lock<std::mutex> l(mu);
      if (cv.wait_for(l, std::chrono::seconds(1), [&] { return finished; })) return;
      bool drawn = false;
      while (!finished) {
        size_t t = total.load(), d = parsed ? t : done.load();
        if (t) {
          int pct = (int)(100.0 * d / t), w = pct / 4;
          fmt::print(stderr, "\rloading {} {:3}% [{}{}] {} of {} MB{}", path, pct, std::string(w, '='),
                     std::string(25 - w, ' '), d >> 20, t >> 20, parsed ? ", linking the call tree" : "");
          drawn = true;
        }
        cv.wait_for(l, std::chrono::milliseconds(100), [&] { return finished; });
      }
      if (drawn) fmt::print(stderr, "\r\033[K");
    });
  LoadOptions opt;
  opt.schema = schema;
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
  fmt::print(stderr, "loaded {}: {} events in {:.2f} s ({:.0f} MB/s)\n", path, human_count(st.events), st.total_s,
             st.json_bytes / 1e6 / std::max(st.total_s, 1e-9));
  if (!st.health.empty()) {
    std::string h;
    for (auto& [check, n] : st.health) h += fmt::format("{}{} {}", h.empty() ? "" : ", ", check, human_count(n));
    fmt::print(stderr, "  health: {} (SELECT * FROM health)\n", h);
  }
}

void Shell::save(const std::string& path) {
  session->save(path);
  if (quiet) return;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) return fmt::print(stderr, "saved {}\n", path);
  fmt::print(stderr, "saved {} ({:.1f} MB)\n", path, (double)bytes / 1e6);
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
  const std::string msg = is_terminal(stderr) ? show_controls(text) : text;  // (messages quote names)
  if (source.empty())
    fmt::print(stderr, "error: {}\n", msg);
  else if (source.starts_with("report ")) {
    // A canned report's lines are not the user's to fix: no line number, and the name once when
    // the message starts with it (critical_path's errors do).
    const std::string name = source.substr(7);
    std::string_view m = msg;
    if (m.starts_with(name + ": ")) m.remove_prefix(name.size() + 2);
    fmt::print(stderr, "error: {}: {}\n", source, m);
  } else
    fmt::print(stderr, "error: {}near line {}: {}\n", source == "-" ? "" : source + ": ", lineno, msg);
}

void Shell::emit(const std::string& text) {
  const std::string shown = is_terminal(out()) ? show_controls(text) : text;
  fwrite(shown.data(), 1, shown.size(), out());
}

void Shell::bind_parameters(sqlite3_stmt* stmt) {
  for (int i = 1; i <= sqlite3_bind_parameter_count(stmt); ++i) {
    const char* name = sqlite3_bind_parameter_name(stmt, i);
    if (!name) continue;
    auto it = parameters_.find(name);
    if (it == parameters_.end()) continue;
    const std::string& v = it->second;
    int64_t iv;
    char* end = nullptr;
    double dv = std::strtod(v.c_str(), &end);
    if (parse_int(v, iv))
      sqlite3_bind_int64(stmt, i, iv);
    else if (!v.empty() && *end == 0)
      sqlite3_bind_double(stmt, i, dv);
    else
      sqlite3_bind_text(stmt, i, v.c_str(), -1, SQLITE_TRANSIENT);
  }
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
    int rc = sqlite3_prepare_v2(db(), p, -1, &stmt, &tail);
    if (rc != SQLITE_OK) {
      error(source, line, sqlite3_errmsg(db()));
      return;  // the rest of this statement group cannot be split reliably
    }
    if (stmt) {
      if (echo) fmt::print(out(), "{}\n", std::string_view(p, tail - p));
      bind_parameters(stmt);
      if (eqp) print_plan(stmt);
      const int64_t changed_before = sqlite3_total_changes64(db());
      g_running = db();
      int64_t rows = 0;
      OutputOptions opt = output;
      // On a terminal, wide tables fit it (kernel names run to 700 characters): session/output.h;
      // --wrap / .mode MODE --wrap N / .width set widths of their own.
      opt.fit = (int)terminal_width();
      rc = print_statement(out(), stmt, opt, &rows);
      // A report's first result is its main table: its columns give an empty report its shape.
      if (in_report_ && report_columns_.empty())
        for (int i = 0; i < sqlite3_column_count(stmt); ++i) report_columns_.emplace_back(sqlite3_column_name(stmt, i));
      report_rows_ += rows;
      g_running = nullptr;
      if (rc != SQLITE_DONE) error(source, line, rc == SQLITE_INTERRUPT ? "interrupted" : sqlite3_errmsg(db()));
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
        fmt::print(out(), "changes: {}   total_changes: {}\n", sqlite3_total_changes64(db()) - changed_before,
                   sqlite3_total_changes64(db()));
      sqlite3_finalize(stmt);
      if (timer)
        fmt::print(stderr, "Run Time: {:.3f} s\n",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    for (const char* c = p; c < tail; ++c) line += *c == '\n';
    p = tail;
  }
}

void Shell::run_report(const std::string& asked, const std::string& asked_text) {
  // A report with nothing to show on these traces runs the one that stands in for it, saying so
  // (sql/fallback_report.sql: ops on a trace without GPU events is cpu_ops).
  std::string name = asked, text = asked_text;
  if (auto f = report_fallback(db(), asked)) {
    fmt::print(stderr, "{}: {}\n", asked, f->why);
    name = f->report;
    text = sql_for("report_" + name, "main");
  }
  in_report_ = true;
  report_rows_ = 0;
  report_columns_.clear();
  const int errors = errors_;
  // What the report covers, first (sql/about_report.sql): a line on stderr, or nothing.
  if (auto about = report_text("about_report", name)) fmt::print(stderr, "{}: {}\n", name, *about);
  run_script(text, "report " + name);
  in_report_ = false;
  if (errors_ != errors) failed_reports_.insert(asked);
  if (report_rows_ || errors_ != errors || stop()) return;
  print_empty(out(), report_columns_, output);
  // Nothing printed and no error: say why on stderr (sql/empty_report.sql), one line.
  const auto why = report_text("empty_report", name);
  fmt::print(stderr, "{}: no rows{}\n", name, why ? ": " + *why : "");
}

std::optional<std::string> Shell::report_text(const char* asset, const std::string& name) {
  // The asset's statements in order, the first text wins; one that cannot run says nothing (a
  // note that reads `other` when no trace is attached there).
  const std::string sql(sql_asset(asset));
  for (const char* p = sql.c_str(); *p;) {
    sqlite3_stmt* s = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db(), p, -1, &s, &tail) != SQLITE_OK) {
      sqlite3_finalize(s);
      if (!tail || tail == p) break;  // (SQLite sets no tail on an error: the rest is skipped)
      p = tail;
      continue;
    }
    p = tail;
    if (!s) continue;
    std::optional<std::string> text;
    bind_parameters(s);
    sqlite3_bind_text(s, sqlite3_bind_parameter_index(s, "@report"), name.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
      text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    if (text) return text;
  }
  return std::nullopt;
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

void Shell::print_tables(const std::string& like) {
  Statement s(db(),
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
    emit(fmt::format("{:<{}}{}", names[i], w + 2, (i + 1) % per_line == 0 || i + 1 == names.size() ? "\n" : ""));
}

void Shell::print_schema(const std::string& like) {
  // A virtual table's CREATE statement names only its module (event over a loaded trace is one):
  // its columns come from table_xinfo, as a CREATE TABLE a reader can use.
  Statement s(db(),
              "SELECT m.name, m.sql, m.sql LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_schema m "
              "WHERE m.sql IS NOT NULL AND m.name NOT LIKE 'sqlite_%' AND (?1 IS NULL OR m.name LIKE ?1) "
              "ORDER BY m.type DESC, m.name");
  if (!like.empty()) sqlite3_bind_text(s.get(), 1, like.c_str(), -1, SQLITE_TRANSIENT);
  while (s.step()) {
    const std::string name = (const char*)sqlite3_column_text(s.get(), 0);
    emit(fmt::format("{};\n", (const char*)sqlite3_column_text(s.get(), 1)));
    if (sqlite3_column_int(s.get(), 2))
      emit(fmt::format("/* {} columns:\n  {}\n*/\n", name, fmt::join(column_definitions(db(), name), ",\n  ")));
  }
}

void Shell::print_settings() {
  auto on = [](bool b) { return b ? "on" : "off"; };
  std::string widths;
  for (int w : output.widths) widths += std::to_string(w) + " ";
  fmt::print(out(),
             "        echo: {}\n         eqp: {}\n     changes: {}\n     headers: {}\n        mode: {}{}\n"
             "   nullvalue: \"{}\"\n      output: {}\n   separator: \"{}\"\n       timer: {}\n        bail: {}\n"
             "       width: {}\n",
             on(echo), on(eqp), on(changes), on(output.headers), mode_name(output.mode),
             output.wrap ? fmt::format(" --wrap {}", output.wrap) : "", output.nullvalue, out_ ? out_name_ : "stdout",
             output.separator, on(timer), on(bail), widths);
}

void Shell::print_plan(sqlite3_stmt* stmt) {
  const char* sql = sqlite3_sql(stmt);
  if (!sql || std::string_view(sql).find_first_not_of(" \t\n") == std::string_view::npos) return;
  sqlite3_stmt* plan = nullptr;
  if (sqlite3_prepare_v2(db(), fmt::format("EXPLAIN QUERY PLAN {}", sql).c_str(), -1, &plan, nullptr) != SQLITE_OK)
    return;
  bind_parameters(plan);
  fmt::print(out(), "QUERY PLAN\n");
  std::map<int, int> depth;  // node id -> depth
  while (sqlite3_step(plan) == SQLITE_ROW) {
    const int id = sqlite3_column_int(plan, 0), parent = sqlite3_column_int(plan, 1);
    depth[id] = parent && depth.count(parent) ? depth[parent] + 1 : 0;
    fmt::print(out(), "{}`--{}\n", std::string(3 * depth[id], ' '), (const char*)sqlite3_column_text(plan, 3));
  }
  sqlite3_finalize(plan);
}

void Shell::dump(const std::string& like) {
  // As sqlite3's .dump: the main database as SQL that rebuilds it. A loaded trace's event (a
  // virtual table over the loader's memory) is written as the plain table a saved database has.
  FILE* f = out();
  fmt::print(f, "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n");
  std::vector<std::pair<std::string, std::string>> tables, later;  // (name, CREATE)
  {
    Statement s(db(),
                "SELECT m.name, m.type, m.sql, m.sql LIKE 'CREATE VIRTUAL TABLE%' FROM main.sqlite_schema m "
                "WHERE m.sql IS NOT NULL AND m.name NOT LIKE 'sqlite_%' AND (?1 IS NULL OR m.tbl_name LIKE ?1) "
                "ORDER BY m.type = 'table' DESC, m.type = 'index', m.rowid");
    if (!like.empty()) sqlite3_bind_text(s.get(), 1, like.c_str(), -1, SQLITE_TRANSIENT);
    while (s.step()) {
      std::string name = (const char*)sqlite3_column_text(s.get(), 0),
                  type = (const char*)sqlite3_column_text(s.get(), 1);
      std::string sql = (const char*)sqlite3_column_text(s.get(), 2);
      if (sqlite3_column_int(s.get(), 3))
        sql = fmt::format("CREATE TABLE {}({})", sql_identifier(name), fmt::join(column_definitions(db(), name), ", "));
      (type == "table" ? tables : later).emplace_back(name, sql);
    }
  }
  OutputOptions insert;
  insert.mode = OutputMode::insert;
  insert.headers = false;
  for (const auto& [name, sql] : tables) {
    fmt::print(f, "{};\n", sql);
    insert.table = name;
    // (A saved event's generated columns, input_dims ..., take no values.)
    Statement rows(db(), fmt::format("SELECT {} FROM main.{}", fmt::join(column_definitions(db(), name, false), ", "),
                                     sql_identifier(name)));
    if (print_statement(f, rows.get(), insert) != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db()));
  }
  for (const auto& [name, sql] : later) fmt::print(f, "{};\n", sql);
  fmt::print(f, "COMMIT;\n");
}

void Shell::import_csv(const std::string& path, const std::string& table) {
  note_input(path);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(fmt::format(".import: cannot open '{}'", path));
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
  Statement exists(db(), "SELECT count(*) FROM pragma_table_list WHERE name = ?1");
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
  if (fresh) exec_sql(db(), fmt::format("CREATE TABLE {}({})", sql_identifier(table), cols));
  exec_sql(db(), "SAVEPOINT tlsql_import");
  try {
    Statement insert(db(), fmt::format("INSERT INTO {} VALUES({})", sql_identifier(table), marks));
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
    exec_sql(db(), "RELEASE tlsql_import");
    if (!quiet) fmt::print(stderr, "imported {} rows into {}\n", rows, table);
  } catch (...) {
    exec_sql(db(), "ROLLBACK TO tlsql_import; RELEASE tlsql_import");
    throw;
  }
}

size_t Shell::terminal_width() const {
  winsize ws{};
  if (out_ || !isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col <= 20) return 0;
  return ws.ws_col;
}

namespace {

constexpr size_t kHelpIndent = 24;  // where kHelp's text column starts

// kHelp's entries: a line starting with '.' begins one (its command, then its text from column
// kHelpIndent, or after two spaces when the command is longer); an indented line continues it.
std::vector<std::pair<std::string, std::string>> help_entries() {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(kHelp);
  for (std::string line; std::getline(in, line);) {
    size_t gap = line.find("  ");
    if (line.size() > kHelpIndent && line[kHelpIndent - 1] == ' ' && (gap == std::string::npos || gap >= kHelpIndent))
      gap = kHelpIndent - 1;
    const size_t text = line.find_first_not_of(' ', gap == std::string::npos ? line.size() : gap);
    const std::string rest = text == std::string::npos ? "" : line.substr(text);
    if (line.rfind(".", 0) == 0)
      out.emplace_back(line.substr(0, gap), rest);
    else if (!out.empty() && !rest.empty())
      out.back().second += (out.back().second.empty() ? "" : " ") + rest;
  }
  return out;
}

// The dot-commands, as kHelp names them (".exit / .quit [CODE]": both), with sqlite3's .indices.
const std::vector<std::string>& dot_commands() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{".indices"};
    for (const auto& [command, text] : help_entries()) {
      std::istringstream words(command);
      for (std::string word; words >> word;)
        if (word.size() > 1 && word[0] == '.') v.push_back(word);
    }
    return v;
  }();
  return names;
}

// The canned reports' names (sql/report_NAME.sql).
const std::vector<std::string>& report_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const SqlAsset& a : sql_assets())
      if (a.name.rfind("report_", 0) == 0) v.emplace_back(a.name.substr(7));
    return v;
  }();
  return names;
}

// "did you mean X? " when a known name is close to what was typed (session/suggest.h), else "".
std::string maybe_meant(const std::string& typed, const std::vector<std::string>& known) {
  const auto m = did_you_mean(typed, known);
  return m ? fmt::format("did you mean {}? ", *m) : "";
}

}  // namespace

void Shell::print_help(const std::string& topic) {
  // On a terminal every entry wraps at its width under its text column (a hanging indent); else
  // the text is printed as written (a pipe's reader wraps, or greps whole lines).
  const size_t cols = terminal_width();
  auto entry = [&](const std::string& lead, const std::string& text, size_t indent) {
    return wrap_hanging(lead, text, indent, cols);
  };
  if (!topic.empty()) {  // .help TOPIC: the dot-commands and functions whose name starts with it
    const std::string t = topic[0] == '.' ? topic.substr(1) : topic;
    bool any = false;
    if (cols) {
      for (const auto& [command, text] : help_entries())
        if (command.rfind("." + t, 0) == 0) fmt::print(out(), "{}", entry(command, text, kHelpIndent)), any = true;
    } else {
      std::istringstream in(kHelp);
      std::string line;
      bool in_entry = false;
      while (std::getline(in, line)) {
        if (line.rfind(".", 0) == 0) in_entry = line.rfind("." + t, 0) == 0;
        if (in_entry) fmt::print(out(), "{}\n", line), any = true;
      }
    }
    for (const SqlFunction& f : sql_functions())
      if (std::string_view(f.name).rfind(t, 0) == 0)
        fmt::print(out(), "{}", entry(fmt::format("{}{}", f.name, f.arguments), f.help, 0)), any = true;
    if (!any) fmt::print(out(), "nothing matches '{}': .help lists everything\n", topic);
    return;
  }
  // The help column starts after the longest signature (gpu_class(uid [, rule [, schema]]) ran into it).
  size_t width = 0;
  for (const SqlFunction& f : sql_functions()) width = std::max(width, std::strlen(f.name) + std::strlen(f.arguments));
  std::string commands, functions;
  if (cols)
    for (const auto& [command, text] : help_entries()) commands += entry(command, text, kHelpIndent);
  else
    commands = kHelp;
  // On a terminal, at most a third of it (a longer signature's text starts after it).
  if (cols) width = std::min(width, cols / 3);
  for (const SqlFunction& f : sql_functions())
    functions += entry(fmt::format("{}{}", f.name, f.arguments), f.help, width + 2);
  fmt::print(out(), "Dot-commands:\n{}\nSQL functions (besides SQLite's; also SELECT * FROM tlsql_functions):\n{}",
             commands, functions);
  const char* tables =
      "Tables: trace, device, event, health, launch_link. Views: op, kernel, gpu, runtime, python, annotation, "
      "launch, thread, process. Columns and units: docs/schema.md.";
  fmt::print(out(), "\n{}",
             cols ? entry("", tables, 0)
                  : "Tables: trace, device, event, health, launch_link. Views: op, kernel, gpu, runtime, python,\n"
                    "annotation, launch, thread, process. Columns and units: docs/schema.md.\n");
}

// TraceLens's traverse_subtree_and_print: box-drawing branches, "UID: n, Category: c, Name: x"
// and the duration (µs) of GPU events; names over 64 characters are cut with "..".
void Shell::print_tree(int64_t uid, int max_depth, bool all) {
  // With a second trace attached as other, an event that has a counterpart there prints as both
  // trees merged (TraceLens's print_merged_tree): "name" where both sides have it, "combined: a |
  // b" where the names differ, ">> trace1: a" / "<< trace2: b" where one side only, and the uids.
  if (!all)
    if (auto merged = merged_tree(db(), uid, max_depth)) {
      TreeAccess a(db(), "main"), b(db(), "other");
      std::vector<bool> open;  // per depth: the ancestor there has more children below
      for (const MergedRow& r : *merged) {
        open.resize((size_t)r.depth + 1);
        std::string prefix;
        for (int k = 0; k < r.depth; ++k) prefix += open[(size_t)k] ? "│   " : "    ";
        open[(size_t)r.depth] = !r.last;
        auto name = [](TreeAccess& t, std::optional<int64_t> u) {
          auto row = u ? t.row(*u) : std::nullopt;
          std::string n = row ? row->name : "?";
          return n.size() > 64 ? n.substr(0, 64) + ".." : n;
        };
        std::string n1 = r.main ? name(a, r.main) : "", n2 = r.other ? name(b, r.other) : "";
        std::string text = r.main && r.other ? (n1 == n2 ? n1 : "combined: " + n1 + " | " + n2)
                           : r.main          ? ">> trace1: " + n1
                                             : "<< trace2: " + n2;
        std::string uids =
            fmt::format("[{} | {}]", r.main ? std::to_string(*r.main) : "-", r.other ? std::to_string(*r.other) : "-");
        emit(fmt::format("{}{}{}  {}\n", prefix, r.last ? "└── " : "├── ", text, uids));
      }
      return;
    }
  TreeAccess tree(db(), "main");
  auto root = tree.row(uid);
  if (!root) {
    ++errors_;
    fmt::print(stderr, "error: .tree: no event has uid {}\n", uid);
    return;
  }
  // Which events lead to GPU work: computed bottom-up over the subtree.
  auto below = tree.descendants(uid);
  std::set<int64_t> gpu_path;
  for (auto [u, d] : below)
    if (auto r = tree.row(u); r && is_gpu_work(r->kind))
      for (auto [a, k] : tree.ancestors(u)) {
        if (!gpu_path.insert(a).second) break;
        if (a == uid) break;
      }
  bool prune = !all && gpu_path.count(uid);
  // Depth-first with an explicit stack: the input decides how deep the tree goes (a chain of
  // 20,000 nested events is a 3 MB file), so no recursion.
  struct Item {
    TreeRow row;
    std::string prefix;
    bool last;
    int depth;
  };
  std::vector<Item> stack{{*root, "", true, 0}};
  while (!stack.empty() && !interrupted()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    const TreeRow& r = it.row;
    std::string name = r.name.size() > 64 ? r.name.substr(0, 64) + ".." : r.name;
    std::string line = fmt::format("{}{}UID: {}, Category: {}, Name: {}", it.prefix, it.last ? "└── " : "├── ", r.uid,
                                   r.cat.empty() ? r.kind : r.cat, name);
    if (is_gpu_work(r.kind) && r.has_time) line += ", Duration: " + micros(r.end - r.ts);
    emit(line + "\n");
    if (it.depth >= max_depth) continue;
    std::vector<TreeRow> kids;
    for (int64_t k : tree.children(r.uid))
      if (k == uid) {  // a parent loop (a database tlsql did not write): it must pass through uid
        ++errors_;
        fmt::print(stderr, "error: .tree: the parent links loop through uid {}\n", uid);
        return;
      } else if (auto kr = tree.row(k); kr && (!prune || gpu_path.count(k) || is_gpu_work(kr->kind)))
        kids.push_back(*kr);
    std::string prefix = it.prefix + (it.last ? "    " : "│   ");
    for (size_t i = kids.size(); i-- > 0;) stack.push_back({kids[i], prefix, i + 1 == kids.size(), it.depth + 1});
  }
  if (std::string e = tree.take_walk_error(); !e.empty()) {
    ++errors_;
    fmt::print(stderr, "error: .tree: {}\n", e);
  }
}

// TraceLens's traverse_parents_and_print, with Input Dims / Input type for ops.
void Shell::print_stack(int64_t uid) {
  TreeAccess tree(db(), "main");
  auto r = tree.row(uid);
  if (!r) {
    ++errors_;
    fmt::print(stderr, "error: .stack: no event has uid {}\n", uid);
    return;
  }
  std::vector<int64_t> chain{uid};
  for (auto [a, d] : tree.ancestors(uid)) chain.push_back(a);  // stops at a parent loop
  if (std::string e = tree.take_walk_error(); !e.empty()) {
    ++errors_;
    fmt::print(stderr, "error: .stack: {}\n", e);
    return;
  }
  for (size_t up = 0; up < chain.size() && !interrupted(); ++up) {
    if (up > 0) r = tree.row(chain[up]);
    if (!r) break;
    fmt::print(out(), "{}\n", up == 0 ? std::string("Node:") : fmt::format("{}-up:", up));
    std::string name = r->name.size() > 64 ? r->name.substr(0, 64) + ".." : r->name;
    std::string line =
        fmt::format("  UID: {}, Category: {}, Name: {}", r->uid, r->cat.empty() ? r->kind : r->cat, name);
    if (is_gpu_work(r->kind) && r->has_time) line += ", Duration: " + micros(r->end - r->ts);
    emit(line + "\n");
    if (r->kind == "cpu_op")
      for (const char* key : {"Input Dims", "Input type"}) {
        std::string v = tree.arg(r->uid, key);
        if (!v.empty()) emit(fmt::format("  {}: {}\n", key, python_list(v)));
      }
  }
}

bool Shell::dot_command(const std::string& line, const std::string& source, int lineno) {
  auto w = split_words(line);
  const std::string& cmd = w[0];
  auto arg = [&](size_t i) { return i < w.size() ? w[i] : std::string(); };
  auto fail = [&](const std::string& msg) { error(source, lineno, msg); };
  DotCommandScope scope(db());
  try {
    if (cmd == ".quit" || cmd == ".exit") {
      int64_t code = 0;
      if (w.size() > 1 && !parse_int(arg(1), code)) return fail(fmt::format("{} [CODE]: CODE is a number", cmd)), true;
      if (w.size() > 1) exit_code_ = (int)(code & 255);
      quit_ = true;
      return false;
    } else if (cmd == ".help") {
      print_help(arg(1));
    } else if (cmd == ".tables") {
      print_tables(arg(1));
    } else if (cmd == ".schema") {
      print_schema(arg(1));
    } else if (cmd == ".mode") {
      // .mode [MODE [TABLE]] [--wrap N]: no MODE prints the current one (as sqlite3).
      if (w.size() == 1) {
        fmt::print(out(), "current output mode: {}{}\n", mode_name(output.mode),
                   output.wrap ? fmt::format(" --wrap {}", output.wrap) : "");
        return true;
      }
      OutputOptions next = output;
      for (size_t i = 1; i < w.size(); ++i) {
        int64_t n;
        if (w[i] == "--wrap" && i + 1 < w.size() && parse_int(w[i + 1], n) && n >= 0) {
          next.wrap = (int)n, ++i;
        } else if (auto m = parse_mode(w[i]); m && i == 1) {
          next.mode = *m;
        } else if (i == 2 && next.mode == OutputMode::insert) {
          next.table = w[i];
        } else {
          return fail(fmt::format("unknown mode '{}': {}use {} (and --wrap N)", w[i], maybe_meant(w[i], mode_names()),
                                  fmt::join(mode_names(), ", "))),
                 true;
        }
      }
      output = next;
    } else if (cmd == ".headers" || cmd == ".timer" || cmd == ".echo" || cmd == ".changes" || cmd == ".eqp" ||
               cmd == ".bail") {
      bool& flag = cmd == ".headers"   ? output.headers
                   : cmd == ".timer"   ? timer
                   : cmd == ".echo"    ? echo
                   : cmd == ".changes" ? changes
                   : cmd == ".eqp"     ? eqp
                                       : bail;
      if (arg(1) == "on" || arg(1) == "off")
        flag = arg(1) == "on";
      else
        fail(fmt::format("{} takes on or off", cmd));
    } else if (cmd == ".nullvalue") {
      output.nullvalue = arg(1);
    } else if (cmd == ".separator") {
      if (w.size() < 2) return fail(".separator COLUMN_SEPARATOR"), true;
      output.separator = arg(1);
    } else if (cmd == ".width") {
      output.widths.clear();
      for (size_t i = 1; i < w.size(); ++i) {
        int64_t n;
        if (!parse_int(w[i], n) || n < -10000 || n > 10000)  // (a cell is padded to its width)
          return fail(".width N1 N2 ...: numbers from -10000 to 10000 (0 = as wide as needed, < 0 = right-aligned)"),
                 true;
        output.widths.push_back((int)n);
      }
    } else if (cmd == ".show") {
      print_settings();
    } else if (cmd == ".print") {
      std::string text;
      for (size_t i = 1; i < w.size(); ++i) text += (i > 1 ? " " : "") + w[i];
      fmt::print(out(), "{}\n", text);
    } else if (cmd == ".version") {
      fmt::print(out(), "tlsql {} (SQLite {})\n", TLSQL_VERSION, sqlite3_libversion());
    } else if (cmd == ".databases") {
      Statement s(db(),
                  "SELECT name, coalesce(nullif(file, ''), '(in memory)') FROM pragma_database_list ORDER BY seq");
      while (s.step())
        emit(fmt::format("{}: {}\n", (const char*)sqlite3_column_text(s.get(), 0),
                         (const char*)sqlite3_column_text(s.get(), 1)));
    } else if (cmd == ".indexes" || cmd == ".indices") {
      Statement s(db(),
                  "SELECT d.name, l.name FROM pragma_database_list d JOIN pragma_table_list t ON t.schema = d.name, "
                  "pragma_index_list(t.name, d.name) l WHERE (?1 IS NULL OR t.name LIKE ?1) AND d.name <> 'temp' "
                  "ORDER BY d.seq, l.name");
      if (w.size() > 1) sqlite3_bind_text(s.get(), 1, arg(1).c_str(), -1, SQLITE_TRANSIENT);
      while (s.step()) {
        std::string schema = (const char*)sqlite3_column_text(s.get(), 0);
        emit(fmt::format("{}{}\n", schema == "main" ? "" : schema + ".", (const char*)sqlite3_column_text(s.get(), 1)));
      }
    } else if (cmd == ".shell" || cmd == ".system") {
      const std::string command = line.substr(std::min(line.size(), line.find(cmd) + cmd.size()));
      if (command.find_first_not_of(" \t") == std::string::npos) return fail(fmt::format("{} COMMAND", cmd)), true;
      fflush(out());
      int rc = std::system(command.c_str());
      if (rc != 0) fail(fmt::format("{} exited with {}", cmd, WIFEXITED(rc) ? WEXITSTATUS(rc) : rc));
    } else if (cmd == ".import") {
      if (w.size() != 3) return fail(".import FILE.csv TABLE"), true;
      import_csv(w[1], w[2]);
    } else if (cmd == ".dump") {
      dump(arg(1));
    } else if (cmd == ".output" || cmd == ".once") {
      if (out_ && fclose(out_) != 0) fail(fmt::format("{}: cannot write: {}", out_name_, strerror(errno)));
      out_ = nullptr;
      once_ = false;
      if (!arg(1).empty() && arg(1) != "stdout") {
        try {
          refuse_input(arg(1));  // (fopen "w" empties the file at once)
        } catch (const std::exception& e) {
          return fail(e.what()), true;
        }
        out_ = fopen(arg(1).c_str(), "w");
        out_name_ = arg(1);
        if (!out_)
          fail(fmt::format("cannot write {}: {}", arg(1), strerror(errno)));
        else
          once_ = cmd == ".once";
      }
    } else if (cmd == ".read") {
      note_input(arg(1));
      std::ifstream f(arg(1), std::ios::binary);
      if (arg(1).empty() || !f) {
        fail(fmt::format("cannot open '{}'", arg(1)));
      } else if (read_depth_ > 16) {
        fail(".read nested too deeply");
      } else {
        std::stringstream ss;
        ss << f.rdbuf();
        ++read_depth_;
        bool go_on = run_script(ss.str(), arg(1));
        --read_depth_;
        return go_on;
      }
    } else if (cmd == ".open") {
      if (arg(1).empty()) return fail(".open takes a file: a saved .db or a trace"), true;
      bool saved = is_sqlite_file(arg(1));
      auto next = std::make_unique<Session>(saved ? arg(1) : "");
      std::swap(session, next);
      try {
        if (!saved) load(arg(1));
        session->finish();
      } catch (...) {
        std::swap(session, next);  // keep the database we had
        throw;
      }
    } else if (cmd == ".save") {
      if (arg(1).empty())
        fail(".save takes a file name");
      else
        save(arg(1));
    } else if (cmd == ".attach") {
      if (w.size() != 4 || w[2] != "AS") return fail(".attach FILE AS NAME"), true;
      if (is_sqlite_file(w[1]))
        session->attach(w[1], w[3]);
      else {
        LoadOptions opt;
        session->attach(w[1], w[3], opt);
      }
    } else if (cmd == ".reports") {
      size_t width = 0;  // the longest name and two spaces (launch_outliers ran into its text)
      for (const SqlAsset& a : sql_assets())
        if (a.name.rfind("report_", 0) == 0) width = std::max(width, a.name.size() - 7 + 2);
      for (const SqlAsset& a : sql_assets())
        if (a.name.rfind("report_", 0) == 0) {
          std::string_view doc = a.text.substr(0, a.text.find('\n'));
          if (doc.rfind("-- ", 0) == 0) doc.remove_prefix(3);
          fmt::print(out(), "{}",
                     wrap_hanging(std::string(a.name.substr(7)), std::string(doc), width, terminal_width()));
        }
    } else if (cmd == ".report") {
      const std::string text = sql_for("report_" + arg(1), "main");
      if (text.empty())
        fail(fmt::format("no report '{}': {}.reports (--report list) lists them", arg(1),
                         maybe_meant(arg(1), report_names())));
      else if (arg(1).rfind("diff", 0) == 0 && !schema_attached(db(), "other"))
        fail(fmt::format("{} needs a second trace: --diff OTHER, or .attach FILE AS other", arg(1)));
      else
        run_report(arg(1), std::string(text));
    } else if (cmd == ".parameter") {
      if (arg(1) == "set" && w.size() == 4)
        parameters_[w[2]] = w[3];
      else if (arg(1) == "list")
        for (auto& [k, v] : parameters_) fmt::print(out(), "{} {}\n", k, v);
      else if (arg(1) == "clear")
        parameters_.clear();
      else
        fail(".parameter set @NAME VALUE | list | clear");
    } else if (cmd == ".tree" || cmd == ".stack") {
      int64_t uid, depth = INT32_MAX;
      if (!parse_int(arg(1), uid)) return fail(fmt::format("{} takes an event uid", cmd)), true;
      bool all = false;
      for (size_t i = 2; i < w.size(); ++i) {
        if (w[i] == "all")
          all = true;
        else if (!parse_int(w[i], depth))
          return fail(fmt::format("{}: '{}' is not a depth", cmd, w[i])), true;
      }
      if (cmd == ".tree")
        print_tree(uid, (int)depth, all);
      else
        print_stack(uid);
    } else if (cmd == ".replay") {
      // .replay UID [cuda|cpu] [ITERATIONS [WARMUP]]
      const char* usage = ".replay UID [cuda|cpu] [ITERATIONS [WARMUP]]";
      int64_t uid, n[2] = {100, 10};
      if (!parse_int(arg(1), uid)) return fail(usage), true;
      size_t i = 2;
      std::string device;
      if (arg(i) == "cuda" || arg(i) == "cpu") device = arg(i++);
      for (int k = 0; i < w.size(); ++i, ++k)
        if (k > 1 || !parse_int(w[i], n[k])) return fail(usage), true;
      if (n[0] < 1 || n[1] < 0) return fail(usage), true;
      replay_command(uid, device, (int)n[0], (int)n[1]);
    } else if (cmd == ".export-replay") {
      const char* usage = ".export-replay FILE.json|FILE.zip [WHERE condition on op]";
      if (arg(1).empty()) return fail(usage), true;
      auto where = where_after(line, 2);
      if (!where) return fail(usage), true;
      export_replay(w[1], *where);
    } else if (cmd == ".plot") {
      const char* usage =
          ".plot roofline FILE [kernels] [WHERE ...] | timeline FILE [STEP | START..END] | memory FILE | diff FILE "
          "[counts|duration] "
          "[TOP]   (FILE: .svg, .png or .csv)";
      static const std::vector<std::string> kinds = {"roofline", "timeline", "memory", "diff"};
      if (w.size() > 1 && std::find(kinds.begin(), kinds.end(), w[1]) == kinds.end())
        return fail(fmt::format("no plot kind '{}': {}{}", w[1], maybe_meant(w[1], kinds), usage)), true;
      std::optional<std::string> where = "";
      if (arg(1) == "roofline") where = where_after(line, arg(3) == "kernels" ? 4 : 3);
      if (w.size() < 3 || !where) return fail(usage), true;
      try {
        plot_command(w, *where);
      } catch (const std::invalid_argument&) {
        fail(usage);
      }
    } else if (cmd == ".html") {
      if (w.size() != 2) return fail(".html FILE.html"), true;
      html_command(w[1]);
    } else if (cmd == ".overlay") {
      if (w.size() != 2) return fail(".overlay FILE.json"), true;
      overlay_command(w[1]);
    } else {
      fail(fmt::format("unknown command '{}': {}.help lists them", cmd, maybe_meant(cmd, dot_commands())));
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return true;
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
    for (const char* c :
         {".attach",    ".exit",      ".headers",  ".help",    ".mode",      ".once",    ".open",      ".output",
          ".parameter", ".plot",      ".html",     ".overlay", ".quit",      ".read",    ".replay",    ".export-replay",
          ".report",    ".reports",   ".save",     ".schema",  ".stack",     ".tables",  ".timer",     ".tree",
          ".width",     ".nullvalue", ".show",     ".echo",    ".changes",   ".eqp",     ".indexes",   ".import",
          ".print",     ".bail",      ".shell",    ".system",  ".databases", ".version", ".separator", ".dump",
          "SELECT",     "FROM",       "WHERE",     "GROUP",    "ORDER",      "BY",       "LIMIT",      "JOIN",
          "ON",         "WITH",       "RECURSIVE", "HAVING",   "DISTINCT",   "COUNT"})
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
    for (const auto& [k, v] : parameters_) params.insert(k);
    g_parameters.assign(params.begin(), params.end());
  };
  // Report names and the @parameters their SQL reads: fixed for the session.
  std::set<std::string> reports;
  for (const SqlAsset& a : sql_assets()) {
    if (a.name.rfind("report_", 0) == 0) reports.emplace(a.name.substr(7));
    for (size_t at = a.text.find('@'); at != std::string_view::npos; at = a.text.find('@', at + 1)) {
      size_t end = at + 1;
      while (end < a.text.size() && (std::isalnum((unsigned char)a.text[end]) || a.text[end] == '_')) ++end;
      if (end > at + 1) report_params.insert(std::string(a.text.substr(at, end - at)));
    }
  }
  report_params.erase("@schema");  // (the views' placeholder, not a parameter)
  g_reports.assign(reports.begin(), reports.end());
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
    fmt::print(stderr, "tlsql: error: {}: cannot write: {}\n", out_name_, strerror(errno));
  }
  out_ = nullptr;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    ++errors_;
    fmt::print(stderr, "tlsql: error: stdout: cannot write: {}\n", strerror(errno ? errno : EIO));
  }
}

}  // namespace tlsql
