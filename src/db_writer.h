// Writes what the loader produced into SQLite: the small tables (trace, device, health,
// launch_link) as real tables, `event` as the virtual table over the EventStore.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/health.h"
#include "src/tree_builder.h"

namespace tlsql {

// All take the schema (main, or an attached one) the trace goes to.
// Creates the small tables if missing.
void create_schema(sqlite3* db, const std::string& schema);
// Whether create_schema would change nothing on `schema` (every object its scripts create there,
// every table they seed holding a row): it then skips them.
bool schema_complete(sqlite3* db, const std::string& schema);
// Rows of the captured_graph table for `graphs` (ids from first_id on), and health rows (trace
// NULL) for what reading their capture traces repaired.
void write_captured_graphs(sqlite3* db, const std::string& schema, const std::vector<CapturedGraph>& graphs,
                           int64_t first_id, const Health& health);

// Writes loaded traces' small tables into one schema through statements prepared once and kept:
// a session keeps one per schema for all its loads (a folder's files), where preparing them again
// for each file had been a tenth of a 2.2 MB trace's load. SQLite prepares a kept statement again
// itself when the schema changes. Destroy it before its connection closes.
class TraceWriter {
 public:
  TraceWriter(sqlite3* db, std::string schema);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  // The schema's tables made if missing (create_schema), then the trace's rows of trace,
  // launch_link, replay_graph and health and post_load.sql's derived columns, in one transaction
  // (rolled back when a statement fails: SqlError).
  void write(const LoadedTrace& trace, const std::string& path, size_t json_bytes,
             const std::vector<LaunchLink>& launches,
             const std::vector<ProfileTreeBuilder::ReplayedGraph>& replayed_graphs, const Health& health);
  // Updates trace.load_ms once the whole load of that file is timed.
  void set_load_ms(int64_t trace_id, double ms);

 private:
  struct Statements;         // (src/db_writer.cpp)
  Statements& statements();  // prepared by the first call
  sqlite3* db_;
  std::string schema_;
  std::unique_ptr<Statements> s_;
};

// The event table (virtual, over `loaded` when traces were loaded: nullptr for none), views and
// indexes; call after loading.
void finish_schema(sqlite3* db, const std::string& schema, const EventStore* loaded);

}  // namespace tlsql
