// Writes what the loader produced into SQLite: the small tables (trace, device, health,
// launch_link) as real tables, `event` as the virtual table over the EventStore.
#pragma once

#include <sqlite3.h>

#include <string>

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
void write_trace(sqlite3* db, const std::string& schema, const LoadedTrace& trace, const std::string& path,
                 size_t json_bytes, const std::vector<LaunchLink>& launches,
                 const std::vector<ProfileTreeBuilder::ReplayedGraph>& replayed_graphs, const Health& health);
// Rows of the captured_graph table for `graphs` (ids from first_id on), and health rows (trace
// NULL) for what reading their capture traces repaired.
void write_captured_graphs(sqlite3* db, const std::string& schema, const std::vector<CapturedGraph>& graphs,
                           int64_t first_id, const Health& health);
// Updates trace.load_ms once the whole load of that file is timed.
void set_load_ms(sqlite3* db, const std::string& schema, int64_t trace_id, double ms);
// The event table (virtual, over `loaded` when traces were loaded: nullptr for none), views and
// indexes; call after loading.
void finish_schema(sqlite3* db, const std::string& schema, const EventStore* loaded);

}  // namespace tlsql
