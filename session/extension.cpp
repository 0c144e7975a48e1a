// The SQLite loadable extension: `.load libtlsql` (sqlite3 shell), `con.load_extension("libtlsql")`
// (Python) register every tlsql function and table-valued function on the host's connection, plus
// tlsql_load(path [, schema]) to load a trace into it. libtlsql.so is also the library the tlsql
// binary links: one implementation.
#include <fmt/format.h>
#include <sqlite3.h>

#include <new>

#include "session/session.h"
#include "src/db_writer.h"
#include "src/input.h"
#include "src/loader.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"

namespace tlsql {
namespace {

void delete_stores(void* p) { delete static_cast<StoreRegistry*>(p); }

bool schema_has_event_table(sqlite3* db, const std::string& schema) {
  sqlite3_stmt* s = nullptr;
  const std::optional<std::string> attached = attached_schema(db, schema);
  if (!attached) return false;
  std::string sql = fmt::format("SELECT 1 FROM {}.sqlite_schema WHERE name = 'event'", quote_identifier(*attached));
  bool found = sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  return found;
}

// tlsql_load(path [, schema]): loads the trace into `schema` (default main; another name is
// attached as a new in-memory database) and returns the number of events loaded.
void load_trace_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto* stores = static_cast<StoreRegistry*>(sqlite3_user_data(ctx));
  sqlite3* db = sqlite3_context_db_handle(ctx);
  const unsigned char* p = sqlite3_value_text(argv[0]);
  if (!p) return sqlite3_result_error(ctx, "tlsql_load(path [, schema]): path is NULL", -1);
  std::string path = (const char*)p;
  std::string schema = argc > 1 && sqlite3_value_text(argv[1]) ? (const char*)sqlite3_value_text(argv[1]) : "main";
  if (schema != "main") try {
      check_schema_name(schema);
    } catch (const LoadError& e) {
      return sqlite3_result_error(ctx, fmt::format("tlsql_load: {}", e.what()).c_str(), -1);
    }
  // Refused before anything is created: the catch below must only undo what this call made, never
  // the trace already loaded into the schema (the virtual table still reads it).
  // (A trace loaded under the name and detached since left its store: that one goes.)
  if (auto it = stores->find(schema); it != stores->end() && !loaded_store(db, schema)) stores->erase(it);
  if (stores->count(schema) || schema_has_event_table(db, schema))
    return sqlite3_result_error(
        ctx,
        fmt::format("tlsql_load: schema '{}' already holds a trace: tlsql_load(path, 'other_name')", schema).c_str(),
        -1);
  // Into a database file the virtual table would stay in its schema after the connection closes,
  // unreadable (and undroppable) without the extension: traces load into memory only.
  if (const char* file = sqlite3_db_filename(db, schema.c_str()); schema == "main" && file && *file)
    return sqlite3_result_error(
        ctx,
        "tlsql_load: the main database is a file; load into an in-memory schema instead: tlsql_load(path, 'trace')",
        -1);
  bool attached = false;
  try {
    if (schema != "main") {
      attach_database(db, ":memory:", schema);
      attached = true;
    }
    auto& store = (*stores)[schema];
    store = std::make_unique<EventStore>();
    LoadOptions opt;
    opt.schema = schema;
    LoadStats stats = load_trace_file(db, *store, path, opt);
    finish_schema(db, schema, store.get());
    sqlite3_result_int64(ctx, (int64_t)stats.events);
  } catch (const std::bad_alloc&) {
    stores->erase(schema);
    if (attached) detach_quietly(db, schema);
    sqlite3_result_error(ctx, "tlsql_load: out of memory while loading the trace", -1);
  } catch (const std::exception& e) {
    stores->erase(schema);
    if (attached) detach_quietly(db, schema);
    sqlite3_result_error(ctx, fmt::format("tlsql_load: {}", e.what()).c_str(), -1);
  }
}

// No exception may leave a callback of SQLite's C code (std::terminate's abort in the host's
// process): what load_trace_fn leaves (a bad_alloc making its strings) is the call's error.
void load_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) noexcept {
  try {
    load_trace_fn(ctx, argc, argv);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  } catch (const std::exception& e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

}  // namespace
}  // namespace tlsql

extern "C" __attribute__((visibility("default"))) int sqlite3_tlsql_init(sqlite3* db, char** err, const void* /*api*/) {
  // The host and libtlsql share the process's libsqlite3, so the API is called directly.
  auto* stores = new (std::nothrow) tlsql::StoreRegistry();
  if (!stores) return SQLITE_NOMEM;
  try {  // (the host is C: an exception must not cross into it)
    tlsql::register_sql(db, stores, tlsql::delete_stores, tlsql::extension_report_hints());
  } catch (const std::exception& e) {
    if (err) *err = sqlite3_mprintf("tlsql: cannot register its functions: %s", e.what());
    return SQLITE_ERROR;
  }
  for (int argc : {1, 2})
    if (sqlite3_create_function_v2(db, "tlsql_load", argc, SQLITE_UTF8 | SQLITE_DIRECTONLY, stores, tlsql::load_fn,
                                   nullptr, nullptr, nullptr) != SQLITE_OK) {
      if (err) *err = sqlite3_mprintf("tlsql: cannot register tlsql_load");
      return SQLITE_ERROR;
    }
  return SQLITE_OK;
}
