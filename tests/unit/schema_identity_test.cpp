// schema_identity (src/event_table.h): what a connection caches per schema name is kept for the
// identity it was made for, so two databases attached one after the other under one name must not
// read as the same. DETACH frees the file handle and the next ATTACH's is often given its address
// (glibc hands back a freed block of the same size: two paths of one length), which once made a
// saved database read with the rules of the one attached before it (shell/kernel_classes, in CI).
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "src/event_table.h"

namespace tlsql {
namespace {

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  CHECK_MESSAGE(error == nullptr, sql, ": ", error ? error : "");
  sqlite3_free(error);
}

TEST_CASE("another file attached under a freed handle's name is another identity") {
  const std::string dir = "/tmp/tlsql_identity_" + std::to_string(getpid());
  const std::string first = dir + "_a.db", second = dir + "_b.db";  // (one length: one block size)
  for (const std::string& path : {first, second}) {
    std::remove(path.c_str());
    sqlite3* w = nullptr;
    sqlite3_open(path.c_str(), &w);
    exec(w, "CREATE TABLE t(x); INSERT INTO t VALUES (1)");  // the same rows, so one data version
    sqlite3_close(w);
  }
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  exec(db, "ATTACH '" + first + "' AS b");
  exec(db, "SELECT count(*) FROM b.t");
  const SchemaIdentity a = schema_identity(db, "b");
  exec(db, "DETACH b");
  exec(db, "ATTACH '" + second + "' AS b");
  exec(db, "SELECT count(*) FROM b.t");
  const SchemaIdentity b = schema_identity(db, "b");
  CHECK(a.file != nullptr);
  CHECK(a.version == b.version);  // (what made the handle alone decide)
  WARN_MESSAGE(a.file == b.file, "the freed handle's address was not reused: this run checks less");
  CHECK_FALSE(a == b);
  // The same file attached again is the same identity: its rows are what they were.
  exec(db, "DETACH b");
  exec(db, "ATTACH '" + first + "' AS b");
  exec(db, "SELECT count(*) FROM b.t");
  const SchemaIdentity again = schema_identity(db, "b");
  CHECK((again.path == a.path && again.stamp == a.stamp && again.version == a.version));
  // The same path rewritten while detached (another process's `tlsql t.json -o first.db`): its
  // handle and data version are as they were (a new pager counts from 1 again), its stamp is not.
  exec(db, "DETACH b");
  {
    sqlite3* w = nullptr;
    sqlite3_open(first.c_str(), &w);
    exec(w, "INSERT INTO t VALUES (randomblob(8192))");  // (a new size: a clock's tick may not show)
    sqlite3_close(w);
  }
  exec(db, "ATTACH '" + first + "' AS b");
  exec(db, "SELECT count(*) FROM b.t");
  const SchemaIdentity rewritten = schema_identity(db, "b");
  CHECK(rewritten.version == a.version);
  WARN_MESSAGE(rewritten.file == a.file, "the freed handle's address was not reused: this run checks less");
  CHECK_FALSE(rewritten == a);
  // Taken with `known` (a memo's identity from earlier in the statement): the stamp is not read
  // again where the rest is as it was, and is where the rest differs.
  SchemaIdentity stale = rewritten;
  stale.stamp = 12345;
  CHECK(schema_identity(db, "b", &stale).stamp == 12345);
  stale.version += 1;
  CHECK(schema_identity(db, "b", &stale) == rewritten);
  sqlite3_close(db);
  std::remove(first.c_str());
  std::remove(second.c_str());
}

}  // namespace
}  // namespace tlsql
