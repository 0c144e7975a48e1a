// The perf table stored with a saved database, so that reopening it (`tlsql FILE.db`, `.attach`)
// needs no perf pass: on a 1 GB trace that pass reads every row of the saved event table back
// through SQL (4 s), more than any report then takes.
//
// One row in the table tlsql_perf: the PerfTable's arrays, deflated. It is used only while it
// certainly describes the database's rows:
//   - triggers on event and launch_link (the pass's only inputs) delete the row on any change to
//     them, whichever program makes it (the sqlite3 shell, Python);
//   - the row records the schema version (any CREATE / DROP / ALTER changes it) and the event
//     table's first uid and row count;
//   - and the perf rules it was computed with: a hash of the sources that make the table
//     (TLSQL_PERF_RULES, computed by CMake over the pass's files and all they include), so a
//     tlsql whose models differ recomputes;
//   - every index in it is checked on reading (a hand-made row cannot point outside the arrays).
// Anything else (no row, a mismatch, user models on the connection) falls back to the pass.
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>

#include "udf/perf/perf_table.h"

namespace tlsql {

// A table as stored: its arrays deflated. Packing is pure (any thread); `data` stays empty for a
// table that is not stored (uids not dense, or parent links that loop).
struct PackedPerfTable {
  int64_t first_uid = 0;
  uint64_t rows = 0, raw_size = 0;
  std::string data;
};
PackedPerfTable pack_perf_table(const PerfTable& t);

// Writes the packed table of the rows now in `schema`.event as `schema`.tlsql_perf, with its
// triggers. Throws SqlError when SQLite refuses.
void store_perf_table(sqlite3* db, const std::string& schema, const PackedPerfTable& p);

// The stored table of `schema`, or nullptr when there is none that is valid (above).
std::shared_ptr<PerfTable> load_perf_table(sqlite3* db, const std::string& schema);

}  // namespace tlsql
