// The per-connection state (udf/connection_cache.h): computed data is kept on every connection
// that has tlsql's functions (a Python or sqlite3-shell host as much as the tlsql session), until
// the connection closes; prepared statements only where the owner opted in, until it drops them.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <memory>

#include "udf/connection_cache.h"
#include "udf/registry.h"

namespace {

using namespace tlsql;

// Counts how many were made and how many are alive.
struct Counted {
  static inline int made = 0, alive = 0;
  Counted() { ++made, ++alive; }
  ~Counted() { --alive; }
};

sqlite3* host_connection() {  // as a host that loaded the extension has it
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  register_sql_functions(db);
  return db;
}

auto make_counted() {
  return [] { return std::make_unique<Counted>(); };
}

}  // namespace

TEST_CASE("computed data is kept on a host's connection until it closes") {
  Counted::made = Counted::alive = 0;
  sqlite3* db = host_connection();
  Counted* a = connection_cached<Counted>(db, "k", make_counted());
  Counted* b = connection_cached<Counted>(db, "k", make_counted());
  CHECK(a != nullptr);
  CHECK(a == b);
  CHECK(Counted::made == 1);
  // Made for another identity of the schema: made again; the first stays alive (a scan may read it).
  SchemaIdentity other{7, nullptr, 0};
  Counted* c = connection_cached<Counted>(db, "k", other, make_counted());
  CHECK(c != a);
  CHECK(Counted::made == 2);
  CHECK(Counted::alive == 2);
  CHECK(sqlite3_close(db) == SQLITE_OK);
  CHECK(Counted::alive == 0);  // closed with the connection, by SQLite
}

TEST_CASE("statements are kept only where the owner opted in, and dropped before close") {
  Counted::made = Counted::alive = 0;
  sqlite3* db = host_connection();
  CHECK(connection_statements<Counted>(db, "s", make_counted()) == nullptr);  // no opt-in: the caller's own
  CHECK(Counted::alive == 0);
  enable_connection_cache(db);
  Counted* s = connection_statements<Counted>(db, "s", make_counted());
  CHECK(s != nullptr);
  CHECK(connection_statements<Counted>(db, "s", make_counted()) == s);
  connection_cached<Counted>(db, "d", make_counted());
  CHECK(Counted::alive == 2);
  drop_connection_cache(db);
  CHECK(Counted::alive == 1);  // the statements went, the data stays
  CHECK(sqlite3_close(db) == SQLITE_OK);
  CHECK(Counted::alive == 0);
}

TEST_CASE("a connection without tlsql's functions keeps nothing") {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  Counted::made = Counted::alive = 0;
  CHECK(connection_cached<Counted>(db, "k", make_counted()) == nullptr);
  CHECK(Counted::alive == 0);
  sqlite3_close(db);
}

TEST_CASE("registering again replaces the state: the old one closes") {
  Counted::made = Counted::alive = 0;
  sqlite3* db = host_connection();
  connection_cached<Counted>(db, "k", make_counted());
  register_sql_functions(db);
  CHECK(Counted::alive == 0);
  CHECK(connection_cached<Counted>(db, "k", make_counted()) != nullptr);
  CHECK(Counted::made == 2);
  CHECK(sqlite3_close(db) == SQLITE_OK);
  CHECK(Counted::alive == 0);
}
