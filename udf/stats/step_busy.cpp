// step_busy([schema]): per (trace, step), the GPU events (kernels, copies, memsets) of that step
// and the ns their union covers, i.e. `SELECT trace, step, count(*) AS events, union_ns(ts, end)
// AS busy_ns FROM gpu WHERE step IS NOT NULL GROUP BY trace, step`, in that order: the GPU busy
// time of each step, which `mfu` and its note read. Over a loaded trace's store one pass and a sort
// per trace (the GROUP BY sorted every GPU event's row, 0.03 s a statement on a 200 MB trace,
// and the report and its note each ran it); a saved database runs that GROUP BY.
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "src/event_store.h"
#include "src/kind.h"
#include "udf/interval_union.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {
namespace {

struct StepBusy {
  struct Row {
    int64_t trace, step, events, busy_ns;
  };
  static constexpr TableArgument arguments[] = {{"arg_schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<StepBusy, Row>>({
        {"trace", "INTEGER", field<&Row::trace>},
        {"step", "INTEGER", field<&Row::step>},
        {"events", "INTEGER", field<&Row::events>},
        {"busy_ns", "INTEGER", field<&Row::busy_ns>},
    });
  }

  std::vector<Row> rows(const TableCall& call) {
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(0), own);
    std::vector<Row> out;
    if (const EventStore* s = events.store())
      from_store(*s, out);
    else
      from_sql(events, out);
    return out;
  }

 private:
  static void from_store(const EventStore& s, std::vector<Row>& out) {
    // Per step its events' count and timed intervals (a trace has a few steps: a map, where
    // sorting every GPU event's (step, ts, end) cost more than the union).
    std::map<int32_t, std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>> steps;
    for (const auto& t : s.traces) {
      steps.clear();
      for (const EventRec& e : t->rows) {
        if (!is_gpu_work(e.kind) || e.step == EventRec::kNull32) continue;
        auto& [events, iv] = steps[e.step];
        ++events;
        if (const int64_t end = e.end(); end != kNull) iv.emplace_back(e.ts, end);  // (union_ns skips a NULL)
      }
      for (auto& [step, events_iv] : steps)
        out.push_back({t->id, step, events_iv.first, merge_union(events_iv.second)});
    }
  }

  static void from_sql(EventSource& events, std::vector<Row>& out) {
    auto st = events.statement(
        "SELECT trace, step, count(*), union_ns(ts, end) FROM {s}.event WHERE kind IN ('kernel', 'memcpy', 'memset') "
        "AND step IS NOT NULL GROUP BY trace, step ORDER BY trace, step");
    while (st->step()) {
      sqlite3_stmt* q = st->get();
      out.push_back({sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1), sqlite3_column_int64(q, 2),
                     sqlite3_column_int64(q, 3)});
    }
  }
};

}  // namespace

std::vector<SqlFunction> step_busy_functions() {
  return {table_function<StepBusy>(
      "step_busy", "table: GPU events and the ns their union covers per (trace, step): the steps' busy time")};
}
TLSQL_FUNCTIONS(step_busy_functions);

}  // namespace tlsql
