#include "interval_functions.h"

#include <vector>

#include "interval_union.h"

namespace tlsql {

const char* const kIntervalFunctionHelp =
    R"(union_ns(start, end)          aggregate: ns covered by the union of the [start, end) intervals
)";

namespace {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

void union_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) return;
  auto** slot = static_cast<Intervals**>(sqlite3_aggregate_context(ctx, sizeof(Intervals*)));
  if (!slot) return sqlite3_result_error_nomem(ctx);
  if (!*slot) *slot = new Intervals();
  (*slot)->emplace_back(sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]));
}

void union_final(sqlite3_context* ctx) {
  auto** slot = static_cast<Intervals**>(sqlite3_aggregate_context(ctx, 0));
  if (!slot || !*slot) return sqlite3_result_int64(ctx, 0);
  sqlite3_result_int64(ctx, merge_union(**slot));
  delete *slot;
  *slot = nullptr;
}

}  // namespace

void register_interval_functions(sqlite3* db) {
  sqlite3_create_function_v2(db, "union_ns", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr, nullptr,
                             union_step, union_final, nullptr);
}

}  // namespace tlsql
