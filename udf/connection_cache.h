// Objects the SQL functions reuse across calls on one connection (their prepared statements):
// preparing five statements per call cost ~140 µs, more than the work of most calls.
// Only connections that opt in are cached: the tlsql Session, which drops the cache before it
// closes the connection. A host that loaded the extension closes the connection itself, so there
// every call prepares its own statements, as before. Cached objects must leave no statement
// active between calls (reset after use): an active statement would block DETACH.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <memory>
#include <string>

#include "src/event_table.h"

namespace tlsql {

void enable_connection_cache(sqlite3* db);
void drop_connection_cache(sqlite3* db);  // before sqlite3_close

// The object cached under `key` for `db`, made by `make` on first use; nullptr when `db` has no
// cache or `make` returned nullptr (a failure is not cached).
void* connection_cached(sqlite3* db, const std::string& key, const std::function<std::shared_ptr<void>()>& make);

template <class T>
T* connection_cached(sqlite3* db, const std::string& key, const std::function<std::unique_ptr<T>()>& make) {
  return static_cast<T*>(connection_cached(db, key, [&]() -> std::shared_ptr<void> { return make(); }));
}

// The same for an object made from what a schema holds: valid only while the schema holds what
// it was made for (`made_for`, schema_identity). One made for another identity is replaced; it is
// kept until the cache is dropped, as a caller may still be reading it (a scan in progress).
void* connection_cached(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                        const std::function<std::shared_ptr<void>()>& make);

template <class T>
T* connection_cached(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                     const std::function<std::unique_ptr<T>()>& make) {
  return static_cast<T*>(connection_cached(db, key, made_for, [&]() -> std::shared_ptr<void> { return make(); }));
}

}  // namespace tlsql
