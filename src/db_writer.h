// Writes one linked trace into the database's tables (event, trace, device, health, launch_link).
#pragma once

#include <sqlite3.h>

#include <string>

#include "health.h"
#include "trace_model.h"
#include "tree_builder.h"

namespace tlsql {

struct TraceRecord {
  int64_t id = 0, uid_base = 0;
  std::string path;
  size_t bytes = 0;
};

// Creates the tables if missing and sets pragmas for a bulk load.
void create_schema(sqlite3* db);
// Next free trace id and uid in the database.
void next_ids(sqlite3* db, int64_t& trace_id, int64_t& uid_base);
void write_trace(sqlite3* db, const TraceRecord& rec, const ParsedTrace& trace,
                 const std::vector<LaunchLink>& launches, const Health& health);
// Updates trace.load_ms once the whole load of that file is timed.
void set_load_ms(sqlite3* db, int64_t trace_id, double ms);
// Indexes and views, once all files are in.
void finish_schema(sqlite3* db);

}  // namespace tlsql
