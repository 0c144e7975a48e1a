#include "session/session.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "session/report_table.h"
#include "src/augment.h"
#include "src/db_writer.h"
#include "src/input.h"
#include "src/output_file.h"
#include "src/readers/reader.h"
#include "src/sql_assets.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"
#include "udf/connection_cache.h"
#include "udf/perf/perf_cache.h"
#include "udf/perf/perf_table.h"
#include "udf/perf/user_models.h"
#include "udf/registry.h"

namespace tlsql {

void register_sql(sqlite3* db, StoreRegistry* stores, void (*destroy_stores)(void*), const ReportHints& hints) {
  register_event_module(db, stores, destroy_stores);
  register_sql_functions(db);
  register_report_tables(db, hints);
}

bool is_sqlite_file(const std::string& path) {
  // Only a regular file can be a database; peeking into a pipe or FIFO would eat the trace's first
  // bytes (or block until a writer comes).
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  char magic[16] = {};
  if (!f.read(magic, 16) || std::string_view(magic, 16) != std::string_view("SQLite format 3\0", 16)) return false;
  // A database another profiler wrote that a reader reads (an Nsight Systems export) is a trace to
  // load, not a saved database to open.
  return database_format(builtin_formats(), path) == nullptr;
}

std::vector<std::string> trace_files(const std::string& path, std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  std::vector<fs::path> links;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string name = entry.path().filename().string();
    auto ends = [&](std::string_view end) { return name.size() > end.size() && name.ends_with(end); };
    // Only regular files (links followed): a dangling link, a link loop, a FIFO or a folder is
    // not a trace, and its error (ELOOP) is its own, not the listing's.
    std::error_code entry_ec;
    // TraceLens's execution_details.json (beside capture traces) describes traces; it is not one.
    if (!entry.is_regular_file(entry_ec) || !(ends(".json") || ends(".json.gz")) || name == "execution_details.json")
      continue;
    if (entry.is_symlink(entry_ec))
      links.push_back(entry.path());
    else
      files.push_back(entry.path().string());
  }
  if (ec) throw LoadError(fmt::format("{}: cannot list the directory: {}", path, ec.message()));
  // The links, after every plain file is known: one is followed only to a file inside the
  // directory (its real path under the directory's) that no other entry names (the same device
  // and inode); session.h says why.
  std::sort(links.begin(), links.end());
  std::set<std::pair<dev_t, ino_t>> named;
  auto identity = [](const std::string& f) {
    struct stat st {};
    return ::stat(f.c_str(), &st) == 0 ? std::pair{st.st_dev, st.st_ino} : std::pair<dev_t, ino_t>{0, 0};
  };
  for (const std::string& f : files) named.insert(identity(f));
  const fs::path dir = fs::canonical(path, ec);
  for (const fs::path& link : links) {
    std::error_code link_ec;
    const fs::path target = fs::canonical(link, link_ec);
    const auto [end, at] = std::mismatch(dir.begin(), dir.end(), target.begin(), target.end());
    const bool inside = !ec && !link_ec && end == dir.end() && at != target.end();
    const char* why = !inside                                         ? "a link to a file outside the directory"
                      : !named.insert(identity(link.string())).second ? "a link to a file the directory holds already"
                                                                      : nullptr;
    if (!why)
      files.push_back(link.string());
    else if (skipped)
      skipped->push_back(fmt::format("{}: {}", link.string(), why));
  }
  if (files.empty())
    throw LoadError(fmt::format("{}: a directory with no .json or .json.gz trace files{}", path,
                                skipped && !skipped->empty() ? fmt::format(" ({}: skipped)", skipped->front()) : ""));
  std::sort(files.begin(), files.end());
  return files;
}

Session::Session(const std::string& saved_db) : saved_(!saved_db.empty()) {
  const std::string target = saved_db.empty() ? ":memory:" : saved_db;
  // A saved database opens read-only when the file is (a shared or archived result), and
  // immutable when only that keeps files from appearing beside it (WAL mode: immutable_for);
  // opening never writes to it, so several readers can share it.
  const bool immutable = !saved_db.empty() && immutable_for(saved_db);
  int flags = saved_db.empty()                                      ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
              : !immutable && ::access(saved_db.c_str(), W_OK) == 0 ? SQLITE_OPEN_READWRITE
                                                                    : SQLITE_OPEN_READONLY;
  // URIs: file_uri's immutable files, here and in ATTACH (as the sqlite3 shell reads them).
  // One thread uses the connection at a time (the loader's threads never call SQLite; Ctrl-C's
  // sqlite3_interrupt needs no mutex): no per-call mutex, ~5% of a report's time.
  const std::string name = saved_db.empty() ? target : file_uri(saved_db, true);
  if (sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string msg = sqlite3_errmsg(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    throw LoadError(fmt::format("{}: cannot open: {}", target, msg));
  }
  sqlite3_busy_timeout(db_, 10000);  // another process writing it: wait, do not fail at once
  harden_connection(db_);
  if (saved_) {
    try {
      // A fleet database is a plain SQLite file tlsql fleet wrote with Python's sqlite3: the same
      // rule (the names read are tables), over its own names.
      if (is_fleet_database(db_))
        require_fleet_database(db_, saved_db);
      else
        require_tlsql_database(db_, "main", saved_db);
    } catch (...) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw;
    }
  }
  register_sql(db_, &stores_);
  enable_connection_cache(db_);
  if (saved_ && !is_fleet_database(db_)) {  // (a fleet database holds no trace views)
    try {
      stale_views_ = use_current_views(db_);
    } catch (const std::exception& e) {
      drop_connection_cache(db_);
      sqlite3_close(db_);
      db_ = nullptr;
      throw LoadError(fmt::format("{}: cannot open: {}", saved_db, e.what()));
    }
  }
  // Its files are inputs no output of this process may replace. Last, once nothing above can throw:
  // a connection closed on a failure path above was left watched, and refuse_input read the freed
  // connection (or whichever one malloc gave its address next).
  watch_connection(db_);
}

// A saved database holds the views of the tlsql that wrote it: a report of this build reading
// them would read another build's definitions (or miss a view or column added since). When any
// differs from this build's, this build's views are created as TEMP views of the same names for
// this session: unqualified names find temp's first, and a temp view's body resolves `event` and
// the other tables in main. The file is never written (docs/security.md: opening writes nothing),
// and what runs is tlsql's own SQL, never the file's. When all match, nothing is left in temp.
int Session::use_current_views(sqlite3* db) {
  auto views = [&](const char* schema) {
    std::map<std::string, std::string> out;
    Statement q(db, fmt::format("SELECT name, sql FROM {}.sqlite_schema WHERE type = 'view'", schema_sql(db, schema)));
    while (q.step())
      out.emplace((const char*)sqlite3_column_text(q.get(), 0), (const char*)sqlite3_column_text(q.get(), 1));
    return out;
  };
  exec_sql(db, sql_for("views", "temp"));
  const std::map<std::string, std::string> now = views("temp"), saved = views("main");
  int stale = 0;
  for (const auto& [name, sql] : now)
    if (auto it = saved.find(name); it == saved.end() || it->second != sql) ++stale;
  // health.gpu_events_affected (added in issue 46): a file saved before it reads it as NULL, "not
  // assessed", through a temp view that shadows the table the same way.
  bool has_impact = false;
  {
    Statement c(db, "SELECT 1 FROM pragma_table_info('health', 'main') WHERE name = 'gpu_events_affected'");
    has_impact = c.step();
  }
  if (!has_impact) {
    ++stale;
    exec_sql(db,
             "CREATE TEMP VIEW health AS SELECT trace, \"check\", count, example_uid, detail, "
             "NULL AS gpu_events_affected FROM main.health");
  }
  if (stale == 0)
    for (const auto& [name, sql] : now)
      exec_sql(db, fmt::format("DROP VIEW {}.{}", schema_sql(db, "temp"), quote_identifier(name)));
  return stale;
}

// The connection goes first: its virtual tables read the stores.
// The functions' cached statements go before it.
Session::~Session() {
  writers_.clear();  // (their statements finalized: sqlite3_close fails while one is not)
  drop_connection_cache(db_);
  unwatch_connection(db_);
  sqlite3_close(db_);
}

Session::Twin::~Twin() {
  drop_connection_cache(db_);
  sqlite3_close(db_);
}

namespace {
// The temp schema's objects (type, name, SQL) of a connection.
std::set<std::string> temp_objects(sqlite3* db) {
  std::set<std::string> out;
  Statement q(db, "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM temp.sqlite_schema");
  while (q.step()) out.emplace((const char*)sqlite3_column_text(q.get(), 0));
  return out;
}
}  // namespace

std::unique_ptr<Session::Twin> Session::twin() {
  if (saved_ || user_models(db_)) return nullptr;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return nullptr;
  }
  auto twin = std::make_unique<Twin>(db);
  harden_connection(db);
  register_sql(db, &stores_);
  enable_connection_cache(db);
  // Whatever temp holds beyond what registering tlsql made there (the user's models' table) is the
  // user's, and would answer on this connection only.
  if (temp_objects(db_) != temp_objects(db)) return nullptr;
  sqlite3_int64 size = 0;
  unsigned char* bytes = sqlite3_serialize(db_, "main", &size, 0);  // (a copy, sqlite3_malloc'd)
  // The twin owns the copy (FREEONCLOSE) and may not grow it: it only reads.
  if (!bytes || sqlite3_deserialize(db, "main", bytes, size, size,
                                    SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) != SQLITE_OK)
    return nullptr;
  return twin;
}

LoadStats Session::load(const std::string& path, const LoadOptions& opt) {
  auto& store = stores_[opt.schema];
  if (!store) store = std::make_unique<EventStore>();
  LoadOptions with = opt;
  if (!with.writer) {
    auto& writer = writers_[opt.schema];
    if (!writer) writer = std::make_unique<TraceWriter>(db_, opt.schema);
    with.writer = writer.get();
  }
  if (opt.schema == "main" && !captured_.empty() && !opt.captured) with.captured = &captured_;
  return load_trace_file(db_, *store, path, with);
}

namespace {

// TraceLens's execution_details.json beside capture traces: [{"file", "batch_size", "mode"}, ...].
std::map<std::string, std::pair<std::optional<int64_t>, std::string>> execution_details(const std::string& path) {
  const std::string text =
      read_sidecar(path, "TraceLens's execution_details.json ([{\"file\", \"batch_size\", \"mode\"}, ...])");
  auto bad = [&](size_t at, const std::string& what) {
    return LoadError(fmt::format("{}: at byte {}: {}", path, at, what));
  };
  // Each entry is read and dropped as soon as it is parsed: destroying one nlohmann value
  // allocates a stack as long as its widest container (json_value::destroy, noexcept), so a whole
  // array of them, unwound by a bad_alloc under a memory cap, would abort instead of failing.
  std::map<std::string, std::pair<std::optional<int64_t>, std::string>> out;
  bool top_array = false, entries_ok = true;
  nlohmann::json::parser_callback_t take = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& e) {
    using E = nlohmann::json::parse_event_t;
    if (depth == 0 && event == E::array_start) top_array = true;
    if (depth != 1 || !top_array || (event != E::value && event != E::object_end && event != E::array_end)) return true;
    if (!e.is_object() || !e.contains("file") || !e["file"].is_string()) {
      entries_ok = false;
      return false;
    }
    auto& d = out[e["file"].get<std::string>()];
    if (e.contains("batch_size") && e["batch_size"].is_number_integer()) d.first = e["batch_size"].get<int64_t>();
    if (e.contains("mode") && e["mode"].is_string()) d.second = e["mode"].get<std::string>();
    return false;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, take);
  } catch (const nlohmann::json::parse_error& e) {
    throw bad(e.byte > 0 ? e.byte - 1 : 0, "not JSON");
  }
  if (!j.is_array()) throw bad(0, "expected an array of {\"file\", \"batch_size\", \"mode\"} objects");
  if (!entries_ok) throw bad(0, "expected an array of objects with a \"file\" string");
  return out;
}

}  // namespace

void Session::add_captures(const std::string& path) {
  if (saved_)
    throw LoadError(fmt::format("{}: a capture trace applies to traces being loaded, not to a saved database", path));
  auto& store = stores_["main"];
  if (!store) store = std::make_unique<EventStore>();
  std::error_code ec;
  std::map<std::string, std::pair<std::optional<int64_t>, std::string>> details;
  const auto sidecar = std::filesystem::path(path) / "execution_details.json";
  if (std::filesystem::is_directory(path, ec) && std::filesystem::is_regular_file(sidecar, ec))
    details = execution_details(sidecar.string());
  const size_t first = captured_.size();
  std::vector<CapturedGraph> graphs;
  Health health;
  std::vector<std::string> links_skipped;
  const std::vector<std::string> files = trace_files(path, &links_skipped);
  for (const std::string& why : links_skipped) health.add("folder_link_skipped", -1, why + ": skipped", 1);
  for (const std::string& file : files) {
    Health h;
    std::vector<CapturedGraph> g = read_capture_file(*store, file, h);
    if (auto it = details.find(std::filesystem::path(file).filename().string()); it != details.end())
      for (CapturedGraph& x : g) x.batch_size = it->second.first, x.mode = it->second.second;
    for (const auto& [check, row] : h.rows())
      health.add(check, -1, fmt::format("capture trace {}: {}", file, row.detail), row.count);
    for (CapturedGraph& x : g) graphs.push_back(std::move(x));
  }
  try {
    write_captured_graphs(db_, "main", graphs, (int64_t)first, health);
  } catch (const SqlError& e) {
    throw LoadError(fmt::format("{}: cannot store the captured graphs: {}", path, e.what()));
  }
  for (CapturedGraph& g : graphs) captured_.push_back(std::move(g));
}

void require_tlsql_database(sqlite3* db, const std::string& schema, const std::string& path) {
  // What each name tlsql reads must be in a file it saved: a table (rows tlsql wrote), never a view
  // or virtual table standing in for one (a view computes rows from whatever a file's author
  // wrote; a virtual table of tlsql's own modules would read this session's loaded traces).
  // tlsql_schema is the one virtual table, of its own module (files saved before it lack it).
  static const std::map<std::string, std::string> kExpected = {
      {"event", "table"},          {"trace", "table"},       {"tlsql_self", "table"},     {"device", "table"},
      {"health", "table"},         {"launch_link", "table"}, {"captured_graph", "table"}, {"replay_graph", "table"},
      {"gpu_spec", "table"},       {"gpu_alias", "table"},   {"tlsql_perf", "table"},     {"op", "view"},
      {"tlsql_schema", "virtual"}, {"kernel_rule", "table"}};
  sqlite3_stmt* q = nullptr;
  std::string sql = fmt::format("SELECT name, type, coalesce(sql, '') FROM {}.sqlite_schema", schema_sql(db, schema));
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr);
  std::set<std::string> found;
  std::string wrong;
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    if ((rc = sqlite3_step(q)) != SQLITE_ROW) break;
    const std::string name = (const char*)sqlite3_column_text(q, 0), type = (const char*)sqlite3_column_text(q, 1);
    std::string text = (const char*)sqlite3_column_text(q, 2);
    for (char& c : text) c = (char)std::toupper((unsigned char)c);
    auto it = kExpected.find(name);
    if (it == kExpected.end()) continue;
    const bool is_virtual = text.rfind("CREATE VIRTUAL TABLE", 0) == 0;
    const std::string is = type == "table" ? (is_virtual ? "virtual" : "table") : type;
    const bool right = is == it->second && (is != "virtual" || text.find("USING TLSQL_SCHEMA") != std::string::npos);
    if (!right && wrong.empty())
      wrong = fmt::format("'{}' is a {} where tlsql writes a {}", name, is == "virtual" ? "virtual table" : is,
                          it->second == "virtual" ? "virtual table of tlsql_schema" : it->second);
    found.insert(name);
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  std::string msg = sqlite3_errmsg(db);
  sqlite3_finalize(q);
  if (rc != SQLITE_OK) throw LoadError(fmt::format("{}: cannot open: {}", path, msg));
  for (const char* need : {"event", "trace", "tlsql_self", "op"})
    if (!found.count(need)) {
      // Another profiler's database (rocpd, an Nsight export no reader claimed) is named by the
      // format chooser's rule (src/readers/formats.cpp), not called a broken save.
      std::string error;
      const std::string hint = database_format_hint(database_tables(path, error));
      if (error.empty() && (hint.starts_with("a rocpd") || hint.starts_with("an Nsight")))
        throw LoadError(fmt::format("{}: not a trace: {}", path, hint));
      throw LoadError(
          fmt::format("{}: not a database tlsql saved (no event, trace, op and tlsql_self tables); "
                      "load its traces instead",
                      path));
    }
  if (!wrong.empty()) throw LoadError(fmt::format("{}: not a database tlsql saved: {}", path, wrong));
  if (std::string key = event_key_problem(db, schema); !key.empty())
    throw LoadError(fmt::format("{}: not a database tlsql saved: {}", path, key));
}

bool is_fleet_database(sqlite3* db) {
  // (no error of its own: a file SQLite cannot read is said by require_tlsql_database, with its path)
  sqlite3_stmt* q = nullptr;
  const bool fleet = sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_schema WHERE name = 'fleet_meta'", -1, &q,
                                        nullptr) == SQLITE_OK &&
                     sqlite3_step(q) == SQLITE_ROW;
  sqlite3_finalize(q);
  return fleet;
}

void require_fleet_database(sqlite3* db, const std::string& path) {
  // What the fleet reports (sql/report_fleet_*.sql) read; fleet/tlsql_fleet.py writes them.
  static const std::set<std::string> kTables = {"fleet_meta", "fleet_rank",        "fleet_traces", "fleet_steps",
                                                "fleet_comm", "fleet_kernel_time", "fleet_repairs"};
  Statement q(db, "SELECT name, type, upper(coalesce(sql, '')) LIKE 'CREATE VIRTUAL TABLE%' FROM main.sqlite_schema");
  std::set<std::string> found;
  while (q.step()) {
    const std::string name = (const char*)sqlite3_column_text(q.get(), 0);
    const std::string type = (const char*)sqlite3_column_text(q.get(), 1);
    const bool is_virtual = sqlite3_column_int(q.get(), 2) != 0;
    if (!kTables.count(name)) continue;
    if (type != "table" || is_virtual)
      throw LoadError(fmt::format("{}: not a fleet database tlsql fleet wrote: '{}' is a {} where it writes a table",
                                  path, name, is_virtual ? "virtual table" : type));
    found.insert(name);
  }
  for (const std::string& need : kTables)
    if (!found.count(need))
      throw LoadError(fmt::format("{}: not a fleet database tlsql fleet wrote (no {} table)", path, need));
}

void Session::finish(const std::string& schema) {
  if (saved_ && schema == "main") return;  // a saved database has all it needs: never write to it
  auto it = stores_.find(schema);
  finish_schema(db_, schema, it != stores_.end() && !it->second->traces.empty() ? it->second.get() : nullptr);
  if (auto s = skipped_.find(schema); s != skipped_.end()) {
    Statement ins(db_, fmt::format("INSERT INTO {}.health(trace, \"check\", count, example_uid, detail) "
                                   "VALUES(NULL, ?, 1, NULL, ?)",
                                   schema_sql(db_, schema)));
    for (const auto& [check, why] : s->second) {
      const std::string detail = why + ": skipped, the directory's traces loaded";
      sqlite3_bind_text(ins.get(), 1, check.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(ins.get(), 2, detail.c_str(), -1, SQLITE_TRANSIENT);
      ins.step();
      ins.reset();
    }
    skipped_.erase(s);
  }
}

void check_schema_name(const std::string& name) {
  bool ok = !name.empty() && !std::isdigit((unsigned char)name[0]) && name != "main" && name != "temp";
  for (char c : name) ok = ok && (std::isalnum((unsigned char)c) || c == '_');
  if (!ok)
    throw LoadError(fmt::format("cannot use '{}' as a schema name: letters, digits and _, not main or temp", name));
}

bool Session::schema_taken(const std::string& name) {
  auto it = stores_.find(name);
  if (it == stores_.end()) return false;
  // A trace attached under the name and detached since (DETACH in SQL): its store answers for
  // nothing any more (loaded_store), and goes.
  if (loaded_store(db_, name)) return true;
  stores_.erase(it);
  writers_.erase(name);
  return false;
}

void Session::begin_attach(const std::string& name) {
  check_schema_name(name);
  if (schema_taken(name)) throw LoadError(fmt::format("cannot attach as '{}': choose another schema name", name));
  attach_database(db_, ":memory:", name);
}

void Session::abandon_attach(const std::string& name) {
  detach_quietly(db_, name);
  stores_.erase(name);
  writers_.erase(name);
}

void Session::attach(const std::string& file, const std::string& name, const LoadOptions& opt) {
  if (is_sqlite_file(file)) {
    check_schema_name(name);
    if (schema_taken(name)) throw LoadError(fmt::format("cannot attach as '{}': choose another schema name", name));
    try {
      attach_database(db_, file_uri(file, true), name);
    } catch (const SqlError& e) {
      throw LoadError(fmt::format("{}: cannot attach: {}", file, e.what()));
    }
    try {
      require_tlsql_database(db_, name, file);
    } catch (...) {
      detach_quietly(db_, name);
      throw;
    }
    return;
  }
  begin_attach(name);
  try {
    LoadOptions o = opt;
    o.schema = name;
    load(file, o);
    finish(name);
  } catch (...) {
    abandon_attach(name);
    throw;
  }
}

// The perf table goes with the saved database (udf/perf/perf_cache.h): reopening it then needs no perf
// pass. For a loaded trace it is computed (if no query needed it yet) and packed on another
// thread while the event pages are written, 1-2 s of a 1 GB trace that would otherwise add to a
// 9 s save; that thread never touches the connection (perf_table_job). The index sorts wait for
// it: the pass's scratch and the first sort's keys held at once were the save's peak (Nsight x40
// copy: 349 MiB, on a 243 MiB load). Not with the user's own models, which the file does not
// keep.
void Session::save(const std::string& path) const {
  std::future<PackedPerfTable> packed;
  if (!user_models(db_))
    if (auto job = perf_table_job(db_, "main"))
      packed = std::async(std::launch::async, [job = std::move(job)] { return pack_perf_table(*job()); });
  save_database(
      db_, path,
      [&](sqlite3* db, const std::string& schema) {
        if (packed.valid()) return store_perf_table(db, schema, packed.get());
        if (user_models(db)) return;
        std::string error;  // a saved database copied: its table, stored or computed here
        if (auto t = perf_table(db, "main", error)) store_perf_table(db, schema, pack_perf_table(*t));
      },
      [&] {
        if (packed.valid()) packed.wait();
      });
}

void augment_trace(Session& session, const std::string& trace_path, const std::string& out_path) {
  std::map<int64_t, Augment> numbers;
  // Only numbers an event has of its own: an op's sum of the work beneath it (perf_source
  // 'beneath', aten::linear above its addmm) written as kernel_flop would read back as inductor's
  // annotation of that op, against another peak; reloaded, it gets the same sum from beneath.
  Statement s(session.db(),
              "SELECT uid, f, b FROM (SELECT uid, flops(uid) AS f, bytes(uid) AS b FROM event "
              "WHERE trace = 0 AND kind IN ('kernel', 'cpu_op') AND perf_source(uid) IS NOT 'beneath') "
              "WHERE f IS NOT NULL OR b IS NOT NULL");
  while (s.step()) {
    Augment a;
    if (sqlite3_column_type(s.get(), 1) != SQLITE_NULL) a.flops = sqlite3_column_double(s.get(), 1);
    if (sqlite3_column_type(s.get(), 2) != SQLITE_NULL) a.bytes = sqlite3_column_double(s.get(), 2);
    numbers[sqlite3_column_int64(s.get(), 0)] = a;  // uid_base of trace 0 is 0: uid = position
  }
  Statement bytes(session.db(), "SELECT bytes FROM trace WHERE id = 0");
  write_augmented(trace_path, bytes.step() ? (size_t)sqlite3_column_int64(bytes.get(), 0) : 0, out_path, numbers);
}

}  // namespace tlsql
