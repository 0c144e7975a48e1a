// union_ns(start, end): aggregate, the length in ns covered by the union of [start, end) intervals
// (overlaps counted once) — the interval-union routine the timeline reports share with gpu_time.
#include <vector>

#include "udf/interval_union.h"
#include "udf/registry.h"

namespace tlsql {

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

std::vector<SqlFunction> interval_functions() {
  SqlFunction f{"union_ns", "(start, end)", "aggregate: ns covered by the union of the [start, end) intervals",
                SqlFunction::aggregate};
  f.min_args = f.max_args = 2, f.flags |= SQLITE_DETERMINISTIC, f.fn = union_step, f.final = union_final;
  return {f};
}
TLSQL_FUNCTIONS(interval_functions);

}  // namespace tlsql
