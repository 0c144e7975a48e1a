// Small RAII helpers over the SQLite C API.
#pragma once

#include <sqlite3.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace tlsql {

struct SqlError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs every statement in `sql`; throws SqlError with SQLite's message.
void exec_sql(sqlite3* db, std::string_view sql);

// Every connection tlsql opens reads files that travel (saved databases from bug reports and CI):
// SQLite's settings for untrusted database files. TRUSTED_SCHEMA off (where the library allows:
// see the definition): a view, trigger or default in a file may call only functions and virtual
// tables marked innocuous (and never a DIRECTONLY one, such as replay); DEFENSIVE on: no SQL can
// corrupt a file (writable_schema, journal_mode=OFF, sqlite_dbpage). Set before anything is
// attached or read.
void harden_connection(sqlite3* db);

// A database file as a URI filename (connections and ATTACH read URIs: SQLITE_OPEN_URI), so that a
// path is always the path, even one that starts with "file:" or holds '?' or '#'. With `read_only`:
// opened immutable where that is what reading it needs (immutable_for).
std::string file_uri(const std::string& path, bool read_only = false);

// Whether a database that will only be read should open immutable (no locks, no files beside it):
// a file in WAL mode (a saved database someone set `PRAGMA journal_mode=WAL` on) otherwise gets
// -wal and -shm files created beside it at its first read, and cannot be read at all from a folder
// that may not be written. Not when a -wal file with content is there: it may hold changes not in
// the database yet (another process writing it), which only a normal open reads.
bool immutable_for(const std::string& path);

// A read-only connection of its own to the database file `schema` of `db` holds, for a second
// reading thread; nullptr when that is not a file, a transaction is open on `db` (the other
// connection might not see the same rows) or it cannot be opened. The caller closes it.
// The second connection is hardened like the first, and opened only while `schema`'s file is still
// the one `db` reads (not replaced by a rename or unlinked since `db` opened it: the path would
// then name another file, and the two connections would mix two files' rows).
sqlite3* open_second_reader(sqlite3* db, const std::string& schema);

// A database file another program wrote (an Nsight Systems export, a rocpd database), opened
// read-only and immutable (no lock, no journal, no -wal file read or made: the file is an input),
// through a URI built here so no character of the path is read as a URI parameter, hardened as
// above, extension loading off. nullptr with `error` set when it cannot be opened.
sqlite3* open_foreign_database(const std::string& path, std::string& error);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  Statement(sqlite3* db, sqlite3_stmt* prepared) : db_(db), stmt_(prepared) {}  // (takes it: finalized here)
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return stmt_; }
  // Steps once; returns true while rows come. Throws on error.
  bool step();
  void reset() { sqlite3_reset(stmt_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace tlsql
