// SQL functions over the perf models: flops, bytes, tflops, tbps, intensity, peak_tflops,
// peak_tbps, achieved_pct, bound, op_category, dtype_bytes, numel.
#pragma once

#include <sqlite3.h>

namespace tlsql {

void register_perf_functions(sqlite3* db);
extern const char* const kPerfFunctionHelp;

}  // namespace tlsql
