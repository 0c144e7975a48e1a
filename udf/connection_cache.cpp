#include "udf/connection_cache.h"

#include <map>
#include <mutex>

namespace tlsql {

namespace {
std::mutex g_mutex;
std::map<sqlite3*, std::map<std::string, std::shared_ptr<void>>>& caches() {
  static auto* c = new std::map<sqlite3*, std::map<std::string, std::shared_ptr<void>>>();
  return *c;
}
}  // namespace

void enable_connection_cache(sqlite3* db) {
  std::lock_guard<std::mutex> lock(g_mutex);
  caches()[db];
}

void drop_connection_cache(sqlite3* db) {
  std::map<std::string, std::shared_ptr<void>> gone;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = caches().find(db);
    if (it == caches().end()) return;
    gone.swap(it->second);
    caches().erase(it);
  }
  // Destroyed outside the lock: the objects finalize their statements.
}

void* connection_cached(sqlite3* db, const std::string& key, const std::function<std::shared_ptr<void>()>& make) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = caches().find(db);
    if (it == caches().end()) return nullptr;
    if (auto obj = it->second.find(key); obj != it->second.end()) return obj->second.get();
  }
  // Made outside the lock (it prepares statements); one connection is used by one thread at a time.
  std::shared_ptr<void> obj = make();
  if (!obj) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = caches().find(db);
  if (it == caches().end()) return nullptr;
  return it->second.emplace(key, std::move(obj)).first->second.get();
}

}  // namespace tlsql
