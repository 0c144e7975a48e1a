// The one per-connection state of tlsql's functions: what they keep between calls on a connection.
// It is made when the functions are registered on the connection (register_sql_functions) and
// closed with the connection, by SQLite, in every host: the tlsql session, Python's sqlite3 or the
// sqlite3 shell with the extension loaded. It holds
//   - computed data (a tree diff, a tree's index, engine steps, the perf tables, the user's
//     models): cached on every connection, each entry for what its schema holds (made_for);
//   - prepared statements (preparing five per call cost ~140 µs, more than most calls' work):
//     cached only where the connection's owner opts in (enable_connection_cache), as the tlsql
//     Session does, and dropped by it before it closes the connection (drop_connection_cache). A
//     connection with a statement not finalized does not close (sqlite3_close is refused, and
//     Python's close_v2 leaves it open until it is), so a host that does not know to drop them
//     gets none: every call there prepares its own.
// A cached object must leave no statement active between calls (reset after use): an active
// statement would block DETACH. Computed data must hold no statement at all.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <memory>
#include <string>

#include "src/event_table.h"

namespace tlsql {

struct EventStore;

// Makes `db`'s state. register_sql_functions hands it to SQLite as a module's client data with
// close_connection_state as its destructor, so SQLite closes it with the connection.
void* open_connection_state(sqlite3* db);
void close_connection_state(void* state);

// Prepared statements: opted in by the connection's owner, who drops them before sqlite3_close.
void enable_connection_cache(sqlite3* db);
void drop_connection_cache(sqlite3* db);

// The computed data cached under `key` for `db`, made by `make` on first use; nullptr when `db`
// has no tlsql state or `make` returned nullptr (a failure is not cached).
void* connection_cached(sqlite3* db, const std::string& key, const std::function<std::shared_ptr<void>()>& make);

template <class T>
T* connection_cached(sqlite3* db, const std::string& key, const std::function<std::unique_ptr<T>()>& make) {
  return static_cast<T*>(connection_cached(db, key, [&]() -> std::shared_ptr<void> { return make(); }));
}

// The same for data made from what a schema holds: valid only while the schema holds what it was
// made for (`made_for`, schema_identity). One made for another identity is replaced; it is kept
// until the connection closes, as a caller may still be reading it (a scan in progress).
void* connection_cached(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                        const std::function<std::shared_ptr<void>()>& make);

template <class T>
T* connection_cached(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                     const std::function<std::unique_ptr<T>()>& make) {
  return static_cast<T*>(connection_cached(db, key, made_for, [&]() -> std::shared_ptr<void> { return make(); }));
}

// The same, shared: for a holder that must keep the object alive past the cache's own hold (a
// statement's memo, udf/statement_memo.h: the state may be replaced, with its objects, while a
// statement runs, when a host registers the functions again).
std::shared_ptr<void> connection_cached_shared(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                                               const std::function<std::shared_ptr<void>()>& make);

template <class T>
std::shared_ptr<T> connection_cached_shared(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                                            const std::function<std::unique_ptr<T>()>& make) {
  return std::static_pointer_cast<T>(
      connection_cached_shared(db, key, made_for, [&]() -> std::shared_ptr<void> { return make(); }));
}

// An object holding prepared statements, cached as above only where the owner opted in; nullptr
// otherwise (the caller then makes its own for the call).
void* connection_statements(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                            const std::function<std::shared_ptr<void>()>& make);

template <class T>
T* connection_statements(sqlite3* db, const std::string& key, const std::function<std::unique_ptr<T>()>& make) {
  return static_cast<T*>(
      connection_statements(db, key, SchemaIdentity{}, [&]() -> std::shared_ptr<void> { return make(); }));
}
template <class T>
T* connection_statements(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                         const std::function<std::unique_ptr<T>()>& make) {
  return static_cast<T*>(connection_statements(db, key, made_for, [&]() -> std::shared_ptr<void> { return make(); }));
}

// What a result computed from a schema's rows was computed from, for a cache of the last result:
// the schema, its loaded store's generation or its saved file's name, and three counters: the
// file's data version (a commit by another connection), its schema version (a table created,
// dropped or renamed on this connection) and the connection's changes (rows it wrote: launch_link
// edited in a loaded session). Equal versions: the same rows; none while a write transaction is
// open (ChangesSeen: a ROLLBACK leaves the counters as they were). (The file's name, not
// schema_identity's handle: a file closed and another opened may get the freed handle's address;
// and its stamp, file_stamp: the same file rewritten and attached again counts its versions anew.)
// A version that cannot be read (the schema gone) equals none.
struct RowsVersion {
  std::string schema, file;
  uint64_t store = 0, stamp = 0;
  int64_t data_version = -1, schema_version = -1, changes = -1;
  bool operator==(const RowsVersion& o) const {
    return data_version >= 0 && schema_version >= 0 && schema == o.schema && file == o.file && store == o.store &&
           stamp == o.stamp && data_version == o.data_version && schema_version == o.schema_version &&
           changes == o.changes;
  }
};
// `store`: the schema's loaded store, nullptr for a saved database.
RowsVersion rows_version(sqlite3* db, const std::string& schema, const EventStore* store);

// Whether what a connection read of its own rows at mark() may still be used: its total_changes
// count is the same, and no write transaction open then has ended since. ROLLBACK leaves the count
// as it was, so rows read inside a transaction (an INSERT INTO kernel_rule, an UPDATE of gpu_spec,
// a perf_model_user row, then ROLLBACK) are read again once it ends, committed or not.
class ChangesSeen {
 public:
  bool current(sqlite3* db) const {
    return sqlite3_total_changes64(db) == changes_ &&
           !(in_write_ && sqlite3_txn_state(db, nullptr) != SQLITE_TXN_WRITE);
  }
  void mark(sqlite3* db) {
    changes_ = sqlite3_total_changes64(db);
    in_write_ = sqlite3_txn_state(db, nullptr) == SQLITE_TXN_WRITE;
  }
  bool in_write() const { return in_write_; }

 private:
  int64_t changes_ = -1;
  bool in_write_ = false;
};

// A part of the state a family keeps itself (under its own lock): made empty on first use, it
// lives as long as the connection. nullptr when `db` has no tlsql state.
void* connection_part(sqlite3* db, const std::string& key, const std::function<std::shared_ptr<void>()>& make);

template <class T>
T* connection_part(sqlite3* db, const std::string& key) {
  return static_cast<T*>(connection_part(db, key, [] { return std::make_shared<T>(); }));
}

}  // namespace tlsql
