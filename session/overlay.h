// --overlay FILE.json / .overlay FILE.json: a copy of the trace with its critical path on it, for
// Perfetto (HTA's overlay_critical_path_analysis): `"critical": 1` in the args of every event on
// the path, and a flow arrow ("critical_path", category = the edge's type) along each dependency,
// launch delay and synchronization edge of the path. Every event is kept (HTA drops the others by
// default): the uids stay the trace's, and Perfetto can filter on args.critical. With @counters
// ('queue_length', 'memory_bw', a comma list of them, or 'all') the copy also has those series as
// counter tracks ("ph": "C", HTA's generate_trace_with_counters); @critical_path 0 leaves the path
// out (counters alone, on a trace with no ProfilerStep).
#pragma once

#include <sqlite3.h>

#include <string>

#include "session/report.h"

namespace tlsql {

// Writes the overlaid copy of main's trace (the first of @rank) to `path`: the critical path that
// the critical_path report computes with the same @annotation, @instance and @rank, and the
// counters of @counters. Returns the line that says what was written ("FILE: critical path of
// ProfilerStep#3, 41 edges overlaid (...), 120 counter points (@counters)").
// Throws std::runtime_error (no trace has the rank, the trace file cannot be read or written).
std::string write_overlay(sqlite3* db, const Parameters& params, const std::string& path);

}  // namespace tlsql
