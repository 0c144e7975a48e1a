// The SQL surface over the call tree: table-valued functions ancestors / descendants / children
// / launched / stack and scalar functions gpu_time / self_time / source.
#pragma once

#include <sqlite3.h>

namespace tlsql {

void register_tree_functions(sqlite3* db);

// One line per function, for .help.
extern const char* const kTreeFunctionHelp;

}  // namespace tlsql
