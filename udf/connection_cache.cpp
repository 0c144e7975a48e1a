#include "udf/connection_cache.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <vector>

#include "src/event_store.h"
#include "src/sql_names.h"

namespace tlsql {

namespace {

struct Entry {
  std::shared_ptr<void> object;
  SchemaIdentity made_for;
};
struct Cache {
  std::map<std::string, Entry> entries;
  std::vector<std::shared_ptr<void>> retired;  // replaced, perhaps still read by a running scan
};

struct ConnectionState {
  std::mutex mu;
  Cache data;
  Cache statements;
  bool statements_enabled = false;
  std::map<std::string, std::shared_ptr<void>> parts;
};

// The live states by connection. A state is owned by SQLite (the tlsql_functions module's client
// data, destroyed as the connection closes); this map only finds it.
std::mutex g_mutex;
std::map<sqlite3*, ConnectionState*>& states() {
  static auto* s = new std::map<sqlite3*, ConnectionState*>();
  return *s;
}

ConnectionState* state_of(sqlite3* db) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = states().find(db);
  return it == states().end() ? nullptr : it->second;
}

std::shared_ptr<void> cached_in(ConnectionState* s, Cache ConnectionState::*which, bool statements,
                                const std::string& key, const SchemaIdentity& made_for,
                                const std::function<std::shared_ptr<void>()>& make) {
  if (!s) return nullptr;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (statements && !s->statements_enabled) return nullptr;
    Cache& c = s->*which;
    if (auto it = c.entries.find(key); it != c.entries.end() && it->second.made_for == made_for)
      return it->second.object;
  }
  // Made outside the lock (it may prepare statements or read a whole trace); one connection is
  // used by one thread at a time.
  std::shared_ptr<void> obj = make();
  if (!obj) return nullptr;
  std::lock_guard<std::mutex> lock(s->mu);
  if (statements && !s->statements_enabled) return nullptr;  // (obj goes: the caller makes its own)
  Cache& c = s->*which;
  Entry& e = c.entries[key];
  if (e.object) c.retired.push_back(std::move(e.object));
  e = Entry{std::move(obj), made_for};
  return e.object;
}

}  // namespace

void* open_connection_state(sqlite3* db) {
  auto* state = new ConnectionState();
  std::lock_guard<std::mutex> lock(g_mutex);
  states()[db] = state;  // (registering again on a connection replaces its state: the old one closes)
  return state;
}

void close_connection_state(void* p) {
  auto* gone = static_cast<ConnectionState*>(p);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto it = states().begin(); it != states().end(); ++it)
      if (it->second == gone) {
        states().erase(it);
        break;
      }
  }
  delete gone;  // (outside the lock: its objects may be large)
}

void enable_connection_cache(sqlite3* db) {
  if (ConnectionState* s = state_of(db)) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->statements_enabled = true;
  }
}

void drop_connection_cache(sqlite3* db) {
  ConnectionState* s = state_of(db);
  if (!s) return;
  Cache gone;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    gone = std::move(s->statements);
    s->statements = Cache{};
    s->statements_enabled = false;
  }
  // Destroyed outside the lock: the objects finalize their statements.
}

void* connection_cached(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                        const std::function<std::shared_ptr<void>()>& make) {
  return cached_in(state_of(db), &ConnectionState::data, false, key, made_for, make).get();
}

std::shared_ptr<void> connection_cached_shared(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                                               const std::function<std::shared_ptr<void>()>& make) {
  return cached_in(state_of(db), &ConnectionState::data, false, key, made_for, make);
}

void* connection_cached(sqlite3* db, const std::string& key, const std::function<std::shared_ptr<void>()>& make) {
  return connection_cached(db, key, SchemaIdentity{}, make);
}

void* connection_statements(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                            const std::function<std::shared_ptr<void>()>& make) {
  return cached_in(state_of(db), &ConnectionState::statements, true, key, made_for, make).get();
}

void* connection_part(sqlite3* db, const std::string& key, const std::function<std::shared_ptr<void>()>& make) {
  ConnectionState* s = state_of(db);
  if (!s) return nullptr;
  std::lock_guard<std::mutex> lock(s->mu);
  std::shared_ptr<void>& p = s->parts[key];
  if (!p) p = make();
  return p.get();
}

RowsVersion rows_version(sqlite3* db, const std::string& schema, const EventStore* store) {
  RowsVersion v;
  v.schema = schema;
  v.store = store ? store->generation : 0;
  if (const char* f = sqlite3_db_filename(db, schema.c_str())) v.file = f;
  if (!store && !v.file.empty()) v.stamp = file_stamp(v.file.c_str());
  v.changes = sqlite3_total_changes64(db);
  // Through the pragmas, which read the file's header: SQLITE_FCNTL_DATA_VERSION gives the count
  // as of the schema's last read, and an attached database no statement has read since another
  // process committed still shows the count before (the review's finding: a stale critical path).
  // (-1 for no such schema: a version that equals none.)
  v.data_version = schema_pragma(db, schema, "data_version");
  v.schema_version = schema_pragma(db, schema, "schema_version");
  if (sqlite3_txn_state(db, nullptr) == SQLITE_TXN_WRITE) v.data_version = -1;
  return v;
}

}  // namespace tlsql
