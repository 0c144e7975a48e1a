// trace_kinds(trace [, schema]): a trace's events per kind, as rows (what trace_stats' "events"
// member gives as JSON), most first, ties by kind name descending as there; counted in the perf
// pass (perf_table.h TraceStats), which reads every row anyway. No row for a trace id that is not
// there.
#include <fmt/format.h>

#include <algorithm>

#include "src/kind.h"
#include "udf/perf/perf_table.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {
namespace {

struct TraceKinds {
  struct Row {
    std::string_view kind;
    int64_t events;
  };
  static constexpr TableArgument arguments[] = {{"trace", "trace", true}, {"schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<TraceKinds, Row>>(
        {{"kind", "TEXT", field<&Row::kind>}, {"events", "INTEGER", field<&Row::events>}});
  }
  std::vector<Row> rows(const TableCall& call) {
    const int64_t trace = int_arg(call.arg(0), "trace");
    std::string error;
    auto t = perf_table(call.db, schema_arg(call.db, call.arg(1)), error);
    if (!t) throw FunctionError(error);
    std::vector<Row> out;
    if (auto it = t->traces.find(trace); it != t->traces.end())
      for (size_t k = 0; k < it->second.kinds.size(); ++k)
        if (it->second.kinds[k]) out.push_back({kind_name((Kind)k), it->second.kinds[k]});
    std::sort(out.begin(), out.end(),
              [](const Row& a, const Row& b) { return a.events != b.events ? a.events > b.events : a.kind > b.kind; });
    return out;
  }
};

}  // namespace

std::vector<SqlFunction> trace_kind_functions() {
  return {table_function<TraceKinds>("trace_kinds", "table: a trace's events per kind (kind, events), most first")};
}
TLSQL_FUNCTIONS(trace_kind_functions);

}  // namespace tlsql
