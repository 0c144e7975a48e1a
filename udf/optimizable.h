// optimizable_events(trace [, top [, schema]]): torch.profiler._utils.BasicEvaluation over one
// loaded trace — per host event its self time, the GPU queue depth when it starts and the GPU idle
// time while it runs, and the ranking of the events in the falling phases of the queue depth by
// z(idle fraction) + 0.6 z(self time). Returns the top events as a JSON array (json_each it).
#pragma once

#include <sqlite3.h>

namespace tlsql {

void register_optimizable_function(sqlite3* db);
extern const char* const kOptimizableFunctionHelp;

}  // namespace tlsql
