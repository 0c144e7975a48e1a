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

}  // namespace tlsql
