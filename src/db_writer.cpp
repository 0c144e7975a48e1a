#include "src/db_writer.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "src/ascii_case.h"
#include "src/kind.h"
#include "src/sql_assets.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"

namespace tlsql {

void exec_sql(sqlite3* db, std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  if (sqlite3_exec(db, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw SqlError(msg);
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), (int)sql.size(), SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK)
    throw SqlError(sqlite3_errmsg(db));
}

void harden_connection(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  // SQLite before 3.41 does not mark its own JSON functions innocuous (fixed on 2023-01-09, test
  // trustschema1): with TRUSTED_SCHEMA off, every saved database's schema (generated columns over
  // args, views) would be "malformed" there. Debian 12 ships 3.40.1, so the schema stays trusted
  // on such a library; what that lets a file's views and triggers call is no more than the
  // innocuous functions, because every tlsql function that is not innocuous is DIRECTONLY
  // (register_sql_functions), SQLite's own unsafe ones are direct-only or off (load_extension),
  // and DEFENSIVE keeps triggers from writing pages or the schema.
  if (sqlite3_libversion_number() >= 3041000) sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
}

sqlite3* open_foreign_database(const std::string& path, std::string& error) {
  // A URI's path is percent-decoded and ends at '?' or '#': escape every byte that is not plain.
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-')
      uri += (char)c;
    else
      uri += fmt::format("%{:02X}", c);
  }
  uri += "?mode=ro&immutable=1";
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    error = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return nullptr;
  }
  harden_connection(db);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  return db;
}

namespace {
// Whether the file `schema` of `db` was renamed or unlinked since `db` opened it (the path may now
// name another file). Unknown counts as moved.
bool file_moved(sqlite3* db, const std::string& schema) {
  int moved = 1;
  return sqlite3_file_control(db, schema.c_str(), SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK || moved;
}
}  // namespace

std::string file_uri(const std::string& path, bool read_only) {
  // "//host/..." would be a URI authority; POSIX reads a leading "//" as "/".
  size_t from = 0;
  if (path.starts_with("//")) from = std::min(path.find_first_not_of('/'), path.size()) - 1;
  std::string uri = "file:";
  for (size_t i = from; i < path.size(); ++i) {
    const auto c = (unsigned char)path[i];
    if (std::isalnum(c) || std::strchr("/-._~!$&'()*+,;=:@", c))
      uri += (char)c;
    else
      uri += fmt::format("%{:02X}", c);
  }
  if (read_only && immutable_for(path)) uri += "?mode=ro&immutable=1";
  return uri;
}

bool immutable_for(const std::string& path) {
  char header[20] = {};
  std::ifstream f(path, std::ios::binary);
  // Bytes 18 and 19: the file format's write and read versions, 2 in WAL mode.
  if (!f.read(header, sizeof header) || header[18] != 2 || header[19] != 2) return false;
  std::error_code ec;
  const auto wal = std::filesystem::file_size(path + "-wal", ec);
  return ec || wal == 0;
}

sqlite3* open_second_reader(sqlite3* db, const std::string& schema) {
  const char* file = sqlite3_db_filename(db, schema.c_str());
  sqlite3* second = nullptr;
  if (!file || !*file || !sqlite3_get_autocommit(db) || file_moved(db, schema)) return nullptr;
  if (sqlite3_open_v2(file_uri(file, true).c_str(), &second,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(second);
    return nullptr;
  }
  harden_connection(second);
  // Checked again once the second connection has the file open: a rename in between shows here.
  if (file_moved(db, schema) || file_moved(second, "main")) {
    sqlite3_close(second);
    return nullptr;
  }
  return second;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw SqlError(sqlite3_errmsg(db_));
}

namespace {

constexpr const char* kSchemaScripts[] = {"schema", "gpu_spec", "kernel_rules"};

// What create_schema's scripts do, read from their own text once. Each statement either creates an
// object unless one of its name is there (CREATE [VIRTUAL] TABLE / VIEW IF NOT EXISTS @schema.x) or
// seeds a table while it is empty (INSERT INTO @schema.t ... WHERE NOT EXISTS (SELECT 1 FROM
// @schema.t)). Any other statement sets `other`: the scripts then always run. Only the head and
// the tail of an INSERT are read (a compound SELECT's WHERE covers its last arm alone): what keeps
// the reading right is the unit test that runs the scripts wherever the check says they would do
// nothing (tests/unit/db_writer_test.cpp).
struct SchemaScripts {
  std::set<std::string> objects, seeded;  // lower case, as SQLite compares names
  bool other = false;
};

// `text`'s words in lower case, each '(', ')' and ';' a word of its own, comments and whitespace
// dropped: enough to read the head and the tail of our own scripts' statements.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) out.push_back(std::exchange(word, {}));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      flush();
      i = std::min(text.find('\n', i), text.size());
    } else if (std::isspace((unsigned char)c)) {
      flush();
    } else if (c == '(' || c == ')' || c == ';') {
      flush();
      out.emplace_back(1, c);
    } else {
      word += ascii_lower(c);  // (as SQLite folds keywords and names: not the locale's)
    }
  }
  flush();
  return out;
}

// The object `w` names from position `at` on ("@schema.name"), or "" when it is not one.
std::string schema_object(const std::vector<std::string>& w, size_t at) {
  if (at >= w.size() || !w[at].starts_with("@schema.")) return "";
  std::string name = w[at].substr(8);
  for (char c : name)
    if (!std::isalnum((unsigned char)c) && c != '_') return "";
  return name;
}

void read_statement(std::string_view statement, SchemaScripts& out) {
  const std::vector<std::string> w = words_of(statement);
  auto is = [&](size_t at, std::initializer_list<const char*> words) {
    for (const char* word : words)
      if (at >= w.size() || w[at++] != word) return false;
    return true;
  };
  if (w.size() == 1 && w[0] == ";") return;  // (nothing but comments before the ';')
  size_t at = is(0, {"create", "virtual"}) ? 2 : is(0, {"create"}) ? 1 : 0;
  if (at > 0 && (is(at, {"table"}) || (at == 1 && is(at, {"view"}))) && is(at + 1, {"if", "not", "exists"})) {
    if (std::string name = schema_object(w, at + 4); !name.empty()) return (void)out.objects.insert(name);
  }
  if (is(0, {"insert", "into"}) && w.size() >= 13) {  // ... where not exists ( select 1 from @schema.t ) ;
    const std::string table = schema_object(w, 2);
    const size_t tail = w.size() - 10;
    if (!table.empty() && is(tail, {"where", "not", "exists", "(", "select", "1", "from"}) &&
        schema_object(w, tail + 7) == table && is(tail + 8, {")", ";"}))
      return (void)out.seeded.insert(table);
  }
  out.other = true;
}

const SchemaScripts& schema_scripts() {
  static const SchemaScripts scripts = [] {
    SchemaScripts out;
    for (const char* name : kSchemaScripts) {
      const std::string text(sql_asset(name));
      // Statements end at a ';' that completes one (sqlite3_complete: not inside a string,
      // comment or trigger body).
      size_t start = 0;
      for (size_t semi = text.find(';'); semi != std::string::npos; semi = text.find(';', semi + 1))
        if (const std::string statement = text.substr(start, semi + 1 - start); sqlite3_complete(statement.c_str()))
          read_statement(statement, out), start = semi + 1;
      if (!words_of(text.substr(start)).empty()) out.other = true;  // (text after the last statement)
    }
    return out;
  }();
  return scripts;
}

}  // namespace

bool schema_complete(sqlite3* db, const std::string& schema) {
  const SchemaScripts& s = schema_scripts();
  if (s.other) return false;
  try {
    const std::string q = schema_sql(db, schema);
    std::string names;
    for (const std::string& name : s.objects) {
      if (!names.empty()) names += ',';
      names += quote_literal(name);
    }
    Statement have(db, fmt::format("SELECT count(*) FROM {}.sqlite_schema WHERE type IN ('table', 'view') AND "
                                   "lower(name) IN ({})",
                                   q, names));
    if (!have.step() || sqlite3_column_int64(have.get(), 0) != (int64_t)s.objects.size()) return false;
    // (A seeded name must be a table: the INSERT into a view of the name fails, even with a row.
    // A seeded table altered by hand so that the INSERT no longer compiles is not caught: the
    // scripts failed there, the skip loads; the save's own checks read such a table.)
    std::string seeded = "SELECT 1";
    for (const std::string& table : s.seeded)
      seeded += fmt::format(
          " AND EXISTS (SELECT 1 FROM {0}.sqlite_schema WHERE type = 'table' AND lower(name) = {1}) "
          "AND EXISTS (SELECT 1 FROM {0}.{2})",
          q, quote_literal(table), quote_identifier(table));
    Statement rows(db, seeded);
    return rows.step() && sqlite3_column_int64(rows.get(), 0) == 1;
  } catch (const SqlError&) {  // (an object of another kind under a seeded table's name, say)
    return false;
  }
}

void create_schema(sqlite3* db, const std::string& schema) {
  // A folder's every file is loaded into one schema: parsing the scripts again for each (the
  // seeded tables' VALUES) was a tenth of a folder of 400 small traces' CPU.
  if (schema_complete(db, schema)) return;
  for (const char* name : kSchemaScripts) exec_sql(db, sql_for(name, schema));
}

namespace {
void bind_int(sqlite3_stmt* s, int col, int64_t v) {
  if (v == kNull)
    sqlite3_bind_null(s, col);
  else
    sqlite3_bind_int64(s, col, v);
}
void bind_text(sqlite3_stmt* s, int col, std::string_view v) {
  sqlite3_bind_text(s, col, v.data(), (int)v.size(), SQLITE_STATIC);
}
bool table_exists(sqlite3* db, const std::string& schema, const char* table) {
  Statement s(db,
              fmt::format("SELECT 1 FROM {}.sqlite_schema WHERE type = 'table' AND name = ?", schema_sql(db, schema)));
  sqlite3_bind_text(s.get(), 1, table, -1, SQLITE_STATIC);
  return s.step();
}
}  // namespace

namespace {
// The statements of `sql` (several, ';' between them), each prepared; comments alone make none.
std::vector<std::unique_ptr<Statement>> prepare_all(sqlite3* db, const std::string& sql) {
  std::vector<std::unique_ptr<Statement>> out;
  for (const char* at = sql.c_str(); *at;) {
    const char* tail = nullptr;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db, at, -1, SQLITE_PREPARE_PERSISTENT, &stmt, &tail) != SQLITE_OK)
      throw SqlError(sqlite3_errmsg(db));
    if (!stmt) break;  // (only comments or whitespace left)
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> held(stmt, sqlite3_finalize);  // (should the next throw)
    out.push_back(std::make_unique<Statement>(db, held.get()));
    held.release();
    at = tail;
  }
  return out;
}

// kBatch links a statement: a step per row was ~400 ns of SQLite's per-statement work a link,
// serial after the parallel stages (a tenth of a second on a 1 GB trace).
constexpr size_t kLinkBatch = 64;
std::string link_sql(const std::string& q, size_t rows) {
  std::string s = fmt::format("INSERT INTO {}.launch_link(gpu, runtime, launcher) VALUES(?,?,?)", q);
  for (size_t i = 1; i < rows; ++i) s += ",(?,?,?)";
  return s;
}
}  // namespace

struct TraceWriter::Statements {
  Statements(sqlite3* db, const std::string& schema, const std::string& q)
      : links(db, link_sql(q, kLinkBatch)),
        link(db, link_sql(q, 1)),
        replay(db, fmt::format("INSERT INTO {}.replay_graph(launch, graph, eager_start, rule, tied, missing_nodes, "
                               "extra_events) VALUES(?,?,?,?,?,?,?)",
                               q)),
        trace(db,
              fmt::format("INSERT INTO {}.trace(id, path, uid_base, events, bytes, metadata) VALUES(?,?,?,?,?,?)", q)),
        health(db, fmt::format("INSERT INTO {}.health(trace, \"check\", count, example_uid, detail, "
                               "gpu_events_affected) VALUES(?,?,?,?,?,?)",
                               q)),
        load_ms(db, fmt::format("UPDATE {}.trace SET load_ms = ? WHERE id = ?", q)),
        post_load(prepare_all(db, sql_for("post_load", schema))) {}
  // Each reset (a statement that failed keeps its error until then) and its texts unbound (they
  // are the caller's).
  void done() {
    for (Statement* s : {&links, &link, &replay, &trace, &health, &load_ms})
      s->reset(), sqlite3_clear_bindings(s->get());
    for (const std::unique_ptr<Statement>& s : post_load) s->reset();
  }
  Statement links, link, replay, trace, health, load_ms;
  std::vector<std::unique_ptr<Statement>> post_load;
};

TraceWriter::TraceWriter(sqlite3* db, std::string schema) : db_(db), schema_(std::move(schema)) {}
TraceWriter::~TraceWriter() = default;

TraceWriter::Statements& TraceWriter::statements() {
  if (!s_) s_ = std::make_unique<Statements>(db_, schema_, schema_sql(db_, schema_));
  return *s_;
}

void TraceWriter::write(const LoadedTrace& trace, const std::string& path, size_t json_bytes,
                        const std::vector<LaunchLink>& launches,
                        const std::vector<ProfileTreeBuilder::ReplayedGraph>& replayed_graphs, const Health& health) {
  // (Checked each time: a session's user may have dropped a table since its last load.)
  create_schema(db_, schema_);
  Statements& s = statements();
  exec_sql(db_, "BEGIN");
  try {
    size_t at = 0;
    auto insert = [&](Statement& ins, size_t rows) {
      for (size_t i = 0; i < rows; ++i, ++at) {
        const LaunchLink& l = launches[at];
        sqlite3_bind_int64(ins.get(), (int)(3 * i + 1), trace.uid_base + l.gpu);
        sqlite3_bind_int64(ins.get(), (int)(3 * i + 2), trace.uid_base + l.runtime);
        sqlite3_bind_int64(ins.get(), (int)(3 * i + 3), trace.uid_base + l.launcher);
      }
      ins.step();
      ins.reset();
    };
    while (launches.size() - at >= kLinkBatch) insert(s.links, kLinkBatch);
    while (at < launches.size()) insert(s.link, 1);  // (the last < 64: one statement for every file)
    for (const auto& r : replayed_graphs) {
      sqlite3_bind_int64(s.replay.get(), 1, trace.uid_base + r.launch);
      bind_int(s.replay.get(), 2, r.graph >= 0 ? r.graph : kNull);
      bind_int(s.replay.get(), 3, r.eager_start >= 0 ? trace.uid_base + r.eager_start : kNull);
      sqlite3_bind_text(s.replay.get(), 4, r.rule, -1, SQLITE_STATIC);
      sqlite3_bind_int64(s.replay.get(), 5, r.tied);
      sqlite3_bind_int64(s.replay.get(), 6, r.missing);
      sqlite3_bind_int64(s.replay.get(), 7, r.extra);
      s.replay.step();
      s.replay.reset();
    }
    sqlite3_bind_int64(s.trace.get(), 1, trace.id);
    bind_text(s.trace.get(), 2, path);
    sqlite3_bind_int64(s.trace.get(), 3, trace.uid_base);
    sqlite3_bind_int64(s.trace.get(), 4, (int64_t)trace.rows.size());
    sqlite3_bind_int64(s.trace.get(), 5, (int64_t)json_bytes);
    if (trace.metadata.empty())
      sqlite3_bind_null(s.trace.get(), 6);
    else
      bind_text(s.trace.get(), 6, trace.metadata);
    s.trace.step();
    s.trace.reset();
    for (const auto& [check, row] : health.rows()) {
      sqlite3_bind_int64(s.health.get(), 1, trace.id);
      bind_text(s.health.get(), 2, check);
      sqlite3_bind_int64(s.health.get(), 3, row.count);
      bind_int(s.health.get(), 4, row.example >= 0 ? trace.uid_base + row.example : kNull);
      bind_text(s.health.get(), 5, row.detail);
      bind_int(s.health.get(), 6, row.gpu_events >= 0 ? row.gpu_events : kNull);
      s.health.step();
      s.health.reset();
    }
    // @trace is post_load.sql's one parameter.
    for (const std::unique_ptr<Statement>& post : s.post_load) {
      if (const int at_trace = sqlite3_bind_parameter_index(post->get(), "@trace"))
        sqlite3_bind_int64(post->get(), at_trace, trace.id);
      while (post->step()) {
      }
      post->reset();
    }
    exec_sql(db_, "COMMIT");
  } catch (...) {
    s.done();
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  s.done();
}

void TraceWriter::set_load_ms(int64_t trace_id, double ms) {
  Statement& update = statements().load_ms;
  sqlite3_bind_double(update.get(), 1, ms);
  sqlite3_bind_int64(update.get(), 2, trace_id);
  update.step();
  update.reset();
}

void write_captured_graphs(sqlite3* db, const std::string& schema, const std::vector<CapturedGraph>& graphs,
                           int64_t first_id, const Health& health) {
  create_schema(db, schema);
  {
    Statement ins(db, fmt::format("INSERT INTO {}.health(trace, \"check\", count, example_uid, detail) "
                                  "VALUES(NULL,?,?,NULL,?)",
                                  schema_sql(db, schema)));
    for (const auto& [check, row] : health.rows()) {
      bind_text(ins.get(), 1, check);
      sqlite3_bind_int64(ins.get(), 2, row.count);
      bind_text(ins.get(), 3, row.detail);
      ins.step();
      ins.reset();
    }
  }
  Statement ins(db, fmt::format("INSERT INTO {}.captured_graph(id, path, capture, nodes, batch_size, mode) "
                                "VALUES(?,?,?,?,?,?)",
                                schema_sql(db, schema)));
  for (size_t i = 0; i < graphs.size(); ++i) {
    const CapturedGraph& g = graphs[i];
    sqlite3_bind_int64(ins.get(), 1, first_id + (int64_t)i);
    bind_text(ins.get(), 2, g.file);
    sqlite3_bind_int64(ins.get(), 3, g.capture);
    sqlite3_bind_int64(ins.get(), 4, (int64_t)g.nodes.size());
    bind_int(ins.get(), 5, g.batch_size.value_or(kNull));
    if (g.mode.empty())
      sqlite3_bind_null(ins.get(), 6);
    else
      bind_text(ins.get(), 6, g.mode);
    ins.step();
    ins.reset();
  }
}

void finish_schema(sqlite3* db, const std::string& schema, const EventStore* loaded) {
  create_schema(db, schema);
  if (loaded)
    exec_sql(db, fmt::format("CREATE VIRTUAL TABLE IF NOT EXISTS {}.event USING tlsql_event({})",
                             schema_sql(db, schema), loaded->generation));
  else if (!table_exists(db, schema, "event"))
    exec_sql(db, sql_for("event_table", schema) + sql_for("event_generated", schema));
  exec_sql(db, sql_for("views", schema));
}

}  // namespace tlsql
