// HTA's trace-counter series (hta/analyzers/trace_counters.py) as table functions, one stream's or
// one rank's at a time:
//
// queue_length(rank, stream [, steps [, schema]]): the CUDA launch-queue length series of one
// stream, HTA's get_queue_length_time_series: ts, length after the point, until (the next point's
// ts; NULL for the last), kind ('launch' +1 / 'start' -1), uid, trace, device.
// memory_bw(rank [, name [, steps [, schema]]]): the memory bandwidth series, HTA's
// get_memory_bw_time_series: per memory kind (`name`, 'Memcpy HtoD'...; absent: every kind), ts,
// gbps after the point (overlapping copies summed), until, name, edge ('start' / 'end'), uid, trace.
//
// The rules (which launch calls count, a copy's GB/s, the tie order, the step scope) are decided
// once, in the views queue_length_points and memory_bw_points (sql/views.sql), which the reports
// and --overlay read as well; these functions pick one series out of them, so that every path
// gives the same points. steps: 'complete' by default, HTA's scope (HTA's trace keeps the work
// launched before the last ProfilerStep) and the reports' default, or 'all'. DIRECTONLY: they run
// SQL of their own (docs/extending.md).

#include <memory>
#include <optional>
#include <string>

#include "src/sqlite_util.h"
#include "udf/analysis/view_statement.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {
namespace {

// 'complete'' (default) or 'all', as the series views hold them; anything else is a mistake.
std::string steps_scope(sqlite3_value* v) {
  std::optional<std::string> steps = optional_text_arg(v);
  if (!steps) return "complete";
  if (*steps != "complete" && *steps != "all")
    throw FunctionError("steps is 'complete' or 'all', not '" + *steps + "'");
  return *steps;
}

// The rank must be one a loaded trace has: an unknown one is a mistake, not an empty series. A trace
// without distributedInfo.rank is rank 0, as HTA has its user mark such a file (several such traces
// are all rank 0; the `trace` column tells them apart).
void require_rank(EventSource& events, int64_t rank) {
  auto st = events.statement("SELECT 1 FROM {s}.trace WHERE coalesce(rank, 0) = ? LIMIT 1");
  sqlite3_bind_int64(st->get(), 1, rank);
  if (!st->step()) {
    std::string known;
    auto all = events.statement("SELECT DISTINCT coalesce(rank, 0) FROM {s}.trace ORDER BY 1");
    while (all->step()) known += (known.empty() ? "" : ", ") + std::to_string(sqlite3_column_int64(all->get(), 0));
    throw FunctionError("no trace has rank " + std::to_string(rank) + " (ranks: " + (known.empty() ? "none" : known) +
                        ")");
  }
}

std::optional<int64_t> optional_column(sqlite3_stmt* st, int col) {
  if (sqlite3_column_type(st, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(st, col);
}
std::string text_column(sqlite3_stmt* st, int col) {
  const unsigned char* text = sqlite3_column_text(st, col);
  return text ? (const char*)text : "";
}

struct QueueLength {
  struct Row {
    int64_t ts, length;
    std::optional<int64_t> until;
    std::string kind;
    int64_t uid, trace;
    std::optional<int64_t> device;
  };
  static constexpr bool direct_only = true;
  static constexpr TableArgument arguments[] = {
      {"rank", "rank", true}, {"stream", "stream", true}, {"steps", "steps"}, {"schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<QueueLength, Row>>({{"ts", "INTEGER", field<&Row::ts>},
                                                         {"length", "INTEGER", field<&Row::length>},
                                                         {"until", "INTEGER", field<&Row::until>},
                                                         {"kind", "TEXT", field<&Row::kind>},
                                                         {"uid", "INTEGER", field<&Row::uid>},
                                                         {"trace", "INTEGER", field<&Row::trace>},
                                                         {"device", "INTEGER", field<&Row::device>}});
  }
  std::vector<Row> rows(const TableCall& call) {
    const int64_t rank = int_arg(call.arg(0), "rank"), stream = int_arg(call.arg(1), "stream");
    const std::string steps = steps_scope(call.arg(2));
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(3), own);
    require_rank(events, rank);
    // kind: 'launch' sorts before 'start', the view's order at one ts.
    auto st = view_statement(
        events, "queue_length_points",
        "SELECT ts, length, until, kind, uid, trace, device FROM {v}.queue_length_points "
        "WHERE coalesce(rank, 0) = ? AND stream = ? AND steps = ? ORDER BY trace, device, ts, kind, uid");
    sqlite3_bind_int64(st->get(), 1, rank);
    sqlite3_bind_int64(st->get(), 2, stream);
    sqlite3_bind_text(st->get(), 3, steps.c_str(), (int)steps.size(), SQLITE_TRANSIENT);
    std::vector<Row> out;
    while (st->step())
      out.push_back({sqlite3_column_int64(st->get(), 0), sqlite3_column_int64(st->get(), 1),
                     optional_column(st->get(), 2), text_column(st->get(), 3), sqlite3_column_int64(st->get(), 4),
                     sqlite3_column_int64(st->get(), 5), optional_column(st->get(), 6)});
    return out;
  }
};

struct MemoryBw {
  struct Row {
    int64_t ts;
    double gbps;
    std::optional<int64_t> until;
    std::string name, edge;
    int64_t uid, trace;
  };
  static constexpr bool direct_only = true;
  // The kind argument's column is `kind`: `name` is the visible column each row's kind is in (an
  // argument's column reads NULL), so `WHERE name = 'Memcpy HtoD'` works as well.
  static constexpr TableArgument arguments[] = {
      {"rank", "rank", true}, {"kind", "name"}, {"steps", "steps"}, {"schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<MemoryBw, Row>>({{"ts", "INTEGER", field<&Row::ts>},
                                                      {"gbps", "REAL", field<&Row::gbps>},
                                                      {"until", "INTEGER", field<&Row::until>},
                                                      {"name", "TEXT", field<&Row::name>},
                                                      {"edge", "TEXT", field<&Row::edge>},
                                                      {"uid", "INTEGER", field<&Row::uid>},
                                                      {"trace", "INTEGER", field<&Row::trace>}});
  }
  std::vector<Row> rows(const TableCall& call) {
    const int64_t rank = int_arg(call.arg(0), "rank");
    const std::optional<std::string> name = optional_text_arg(call.arg(1));
    const std::string steps = steps_scope(call.arg(2));
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(3), own);
    require_rank(events, rank);
    // edge: 'end' sorts before 'start', the view's order at one ts.
    auto st = view_statement(
        events, "memory_bw_points",
        "SELECT ts, gbps, until, name, edge, uid, trace FROM {v}.memory_bw_points "
        "WHERE coalesce(rank, 0) = ? AND (?2 IS NULL OR name = ?2) AND steps = ?3 ORDER BY trace, name, ts, edge, uid");
    sqlite3_bind_int64(st->get(), 1, rank);
    if (name) sqlite3_bind_text(st->get(), 2, name->c_str(), (int)name->size(), SQLITE_TRANSIENT);
    sqlite3_bind_text(st->get(), 3, steps.c_str(), (int)steps.size(), SQLITE_TRANSIENT);
    std::vector<Row> out;
    while (st->step())
      out.push_back({sqlite3_column_int64(st->get(), 0), sqlite3_column_double(st->get(), 1),
                     optional_column(st->get(), 2), text_column(st->get(), 3), text_column(st->get(), 4),
                     sqlite3_column_int64(st->get(), 5), sqlite3_column_int64(st->get(), 6)});
    return out;
  }
};

}  // namespace

std::vector<SqlFunction> trace_counter_functions() {
  return {
      table_function<QueueLength>(
          "queue_length",
          "table: HTA's launch-queue length series of one stream (ts, length, until, kind, uid, trace, device); steps "
          "'complete' (default) or 'all'"),
      table_function<MemoryBw>("memory_bw",
                               "table: HTA's memory bandwidth series of a rank, per kind (ts, gbps, until, name, "
                               "edge, uid, trace); name 'Memcpy HtoD'... (default every kind), steps as "
                               "queue_length")};
}
TLSQL_FUNCTIONS(trace_counter_functions);

}  // namespace tlsql
