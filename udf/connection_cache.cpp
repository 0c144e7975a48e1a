#include "udf/connection_cache.h"

#include <map>
#include <mutex>
#include <vector>

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
std::mutex g_mutex;
std::map<sqlite3*, Cache>& caches() {
  static auto* c = new std::map<sqlite3*, Cache>();
  return *c;
}
}  // namespace

void enable_connection_cache(sqlite3* db) {
  std::lock_guard<std::mutex> lock(g_mutex);
  caches()[db];
}

void drop_connection_cache(sqlite3* db) {
  Cache gone;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = caches().find(db);
    if (it == caches().end()) return;
    gone = std::move(it->second);
    caches().erase(it);
  }
  // Destroyed outside the lock: the objects finalize their statements.
}

void* connection_cached(sqlite3* db, const std::string& key, const SchemaIdentity& made_for,
                        const std::function<std::shared_ptr<void>()>& make) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = caches().find(db);
    if (it == caches().end()) return nullptr;
    if (auto obj = it->second.entries.find(key); obj != it->second.entries.end() && obj->second.made_for == made_for)
      return obj->second.object.get();
  }
  // Made outside the lock (it prepares statements); one connection is used by one thread at a time.
  std::shared_ptr<void> obj = make();
  if (!obj) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = caches().find(db);
  if (it == caches().end()) return nullptr;
  Entry& e = it->second.entries[key];
  if (e.object) it->second.retired.push_back(std::move(e.object));
  e = Entry{std::move(obj), made_for};
  return e.object.get();
}

void* connection_cached(sqlite3* db, const std::string& key, const std::function<std::shared_ptr<void>()>& make) {
  return connection_cached(db, key, SchemaIdentity{}, make);
}

}  // namespace tlsql
