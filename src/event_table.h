// The `event` table of a freshly loaded database: an SQLite virtual table over EventStore's rows
// (one generic module, like osquery's; constraint push-down on uid, parent, kind and trace).
// Saved databases hold a real `event` table with the same columns instead.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "src/event_store.h"

namespace tlsql {

// The stores of one connection, by schema name ("main", or an attached schema).
using StoreRegistry = std::map<std::string, std::unique_ptr<EventStore>>;

// Registers the module "tlsql_event" on `db`; `stores` must outlive the connection. A table
// created with it in schema S serves the rows of stores[S].
// `destroy` (may be null) is called with `stores` when the connection closes.
void register_event_module(sqlite3* db, StoreRegistry* stores, void (*destroy)(void*) = nullptr);

// The in-memory store whose rows `schema`'s event table serves on `db`, or nullptr (a saved
// database's real table, or no tlsql table; a schema detached since, whatever now has its name).
// The SQL functions read it directly instead of querying the table row by row. Valid until the
// connection closes. (`check_table`: false only for schema_identity's `known`.)
const EventStore* loaded_store(sqlite3* db, const std::string& schema, bool check_table = true);

// What schema `schema` of `db` holds now: its loaded store's generation (0 for none) and the
// database SQLite has open under that name (its file handle, unique while attached, its path, and
// for a file the file itself as stat gives it). What a connection caches per schema name is valid
// only for the identity it was made for: a name can be detached and attached again holding another
// trace or file (or a copy of the first). The handle is unique only while attached: DETACH frees it
// and the next ATTACH's often gets its address (seen in CI: plain.db, attached where ep.db had been,
// read with ep.db's kernel rules), and a new handle's data version starts again at 1. So the path, and the file's
// stamp for the same path attached again after the file was rewritten (`tlsql t.json -o a.db`
// between a DETACH and an ATTACH of a.db). Not seen: a write to a WAL-mode file, while detached,
// that is still in its -wal file (tlsql saves in rollback mode).
struct SchemaIdentity {
  uint64_t store = 0;
  const void* file = nullptr;
  uint64_t path = 0;         // a hash of the file's path (sqlite3_db_filename); 0 for none or in memory
  uint64_t stamp = 0;        // file_stamp(path); 0 for a store or a database in memory
  unsigned int version = 0;  // a saved database's data version (a change by any connection); 0 for a store
  bool operator==(const SchemaIdentity&) const = default;
};
// `known`: an identity of the same schema taken earlier in the running statement (a memo's). Where
// all else is as it was then, its stamp is taken as still good, not stat'ed again: a stat costs more
// than a per-row call. (What that leaves: between two steps of a statement its host detaching the
// file, rewriting it and attaching it again under the freed handle's address.)
SchemaIdentity schema_identity(sqlite3* db, const std::string& schema, const SchemaIdentity* known = nullptr);

// A file's device, inode, size and modification time, hashed; 0 where stat fails.
uint64_t file_stamp(const char* path);

// The data version of the database open as `schema` (SQLITE_FCNTL_DATA_VERSION: it changes with
// any commit, by this connection or another), as of now. The pager reads the file's change
// counter only when a read transaction starts, so a schema the running statement does not read
// (a function asked about another schema) showed the count of its last read, and a commit by
// another process since went unseen: there a pragma reads it first. 0 for no such schema.
unsigned int data_version(sqlite3* db, const char* schema);

// Why `schema`'s saved `event` table cannot be read as tlsql wrote it, or "" when it can: tlsql
// declares `uid INTEGER PRIMARY KEY` (one row per uid), and every tree walk and per-uid lookup
// relies on that. "" too when the schema has no `event` table (the caller says so in its words).
std::string event_key_problem(sqlite3* db, const std::string& schema);

// Column names and declared types, in order: shared by the virtual table and the saved table.
struct EventColumn {
  const char* name;
  const char* type;
};
extern const EventColumn kEventColumns[];
extern const int kEventColumnCount;

// Writes the database (virtual `event` materialised as a real table) to `path`, atomically: a
// temporary file beside it, renamed when complete. `add`, when given, writes more into the new
// database (attached under the schema name it receives) before it is complete: what layers above
// storage keep with it (the perf table). `before_sorts`, when given, is called on the thread that
// sorts the event indexes, before it sorts the first: it waits for the caller's own work beside
// the save (the perf pass), so that the two's scratch memory is not held at once (their peaks
// were the save's). Throws SqlError.
void save_database(sqlite3* db, const std::string& path,
                   const std::function<void(sqlite3*, const std::string&)>& add = {},
                   const std::function<void()>& before_sorts = {});

}  // namespace tlsql
