#include "session/overlay.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "src/augment.h"
#include "src/decimal.h"

namespace tlsql {

namespace {

// A pid / tid as the trace wrote it: a number, or a label.
std::string json_id(const std::optional<std::string>& v) {
  if (!v) return "0";
  return parse_int64(*v) ? *v : nlohmann::json(*v).dump();
}

// ns as the trace's microseconds, exactly.
std::string micros(int64_t ns) {
  const uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", a / 1000, a % 1000);
}

}  // namespace

std::string write_overlay(sqlite3* db, const Parameters& params, const std::string& path) {
  const auto results = query_all(db, R"(
    WITH t AS (SELECT id, path, uid_base, rank, bytes FROM trace WHERE id = (SELECT min(id) FROM trace WHERE @rank IS NULL OR rank = @rank))
    SELECT t.path, p.from_uid - t.uid_base, p.to_uid - t.uid_base, p.type, p.dur, p.from_end, a.pid, a.tid, a.ts,
           a.dur, p.to_end, b.pid, b.tid, b.ts, b.dur,
           coalesce((SELECT name FROM event WHERE uid = p.window_uid), 'the whole trace') ||
             CASE WHEN t.rank IS NULL THEN '' ELSE ' (rank ' || t.rank || ')' END, t.bytes
    FROM t, critical_path(coalesce(@annotation, 'ProfilerStep'), coalesce(@instance, 0), t.id) p
    JOIN event a ON a.uid = p.from_uid JOIN event b ON b.uid = p.to_uid
    ORDER BY p.step)",
                                 params);
  if (results.empty() || results[0].rows.empty())
    throw std::runtime_error(".overlay: no trace has the rank asked for (@rank)");
  TraceAdditions add;
  add.unless = {"critical"};
  std::string trace_path;
  int64_t flow = 0, trace_bytes = 0;
  auto num = [](const std::optional<std::string>& v) { return v ? parse_int64(*v).value_or(0) : 0; };
  for (const auto& r : results[0].rows) {
    trace_path = r[0].value_or("");
    trace_bytes = num(r[16]);
    add.members[num(r[1])] = "\"critical\": 1";
    add.members[num(r[2])] = "\"critical\": 1";
    const std::string type = r[3].value_or("");
    if (type != "critical_path_dependency" && type != "critical_path_kernel_launch_delay" &&
        type != "critical_path_sync_dependency")
      continue;
    // An arrow ending at an event's end lands just inside it (1 us before, at most its duration),
    // where Perfetto binds it to the event.
    auto at = [&](size_t end_col, size_t ts_col, size_t dur_col) {
      const int64_t ts = num(r[ts_col]), dur = num(r[dur_col]);
      return num(r[end_col]) ? ts + dur - std::min<int64_t>(1000, dur) : ts;
    };
    const std::string common =
        fmt::format(R"("name": "critical_path", "cat": "{}", "id": {}, "args": {{"weight_us": {}}})", type, flow++,
                    micros(num(r[4])));
    if (!add.events.empty()) add.events += ",\n";
    add.events += fmt::format(R"({{"ph": "s", "pid": {}, "tid": {}, "ts": {}, {}}},)", json_id(r[6]), json_id(r[7]),
                              micros(at(5, 8, 9)), common);
    add.events += fmt::format("\n{{\"ph\": \"f\", \"bp\": \"e\", \"pid\": {}, \"tid\": {}, \"ts\": {}, {}}}",
                              json_id(r[11]), json_id(r[12]), micros(at(10, 13, 14)), common);
  }
  write_trace_copy(trace_path, (size_t)std::max<int64_t>(0, trace_bytes), path, add, "overlay the critical path on");
  return fmt::format("{}: critical path of {}, {} edges overlaid ({} events marked, {} arrows)", path,
                     results[0].rows[0][15].value_or(""), results[0].rows.size(), add.members.size(), flow);
}

}  // namespace tlsql
