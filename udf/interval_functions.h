// union_ns(start, end): aggregate, the length in ns covered by the union of [start, end) intervals
// (overlaps counted once) — the interval-union routine the timeline reports share with gpu_time.
#pragma once

#include <sqlite3.h>

namespace tlsql {

void register_interval_functions(sqlite3* db);
extern const char* const kIntervalFunctionHelp;

}  // namespace tlsql
