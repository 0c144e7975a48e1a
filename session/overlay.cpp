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

// The critical path the critical_path report computes with the same @annotation, @instance and
// @rank: "critical": 1 on its events and flow arrows along its edges. Returns what was drawn.
std::string overlay_critical_path(sqlite3* db, const Parameters& params, TraceAdditions& add) {
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
  add.unless = {"critical"};
  int64_t flow = 0;
  auto num = [](const std::optional<std::string>& v) { return v ? parse_int64(*v).value_or(0) : 0; };
  for (const auto& r : results[0].rows) {
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
  return fmt::format("critical path of {}, {} edges overlaid ({} events marked, {} arrows)",
                     results[0].rows[0][15].value_or(""), results[0].rows.size(), add.members.size(), flow);
}

// The counter tracks @counters asks for (HTA's generate_trace_with_counters): "ph": "C" events, one
// per point of the queue_length series (name "Queue Length", id = the stream, on the pid of the
// stream's GPU events) and of the memory_bw series (name = the memory kind, "Memcpy HtoD", args
// "Memcpy BW" in GB/s, on the pid of the copy), HTA's names and args. @steps as the series' (default
// 'all': the whole trace is drawn). Adds them to `add.events`; returns how many.
int64_t add_counters(sqlite3* db, Parameters params, int64_t trace, TraceAdditions& add) {
  // Which series: a comma list; a name that is none of them is an error rather than no counters.
  const auto given = query_all(db, "SELECT lower(replace(coalesce(@counters, ''), ' ', ''))", params);
  bool queue = false, bandwidth = false;
  std::string list = given.empty() || given[0].rows.empty() ? "" : given[0].rows[0][0].value_or("");
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    if (item == "queue_length" || item == "all") queue = true;
    if (item == "memory_bw" || item == "all") bandwidth = true;
    if (item != "queue_length" && item != "memory_bw" && item != "all")
      throw std::runtime_error(
          fmt::format(".overlay: @counters '{}': '{}' is not queue_length, memory_bw or all", list, item));
    at = comma + 1;
  }
  params["@overlay_trace"] = std::to_string(trace);
  params["@overlay_queue"] = queue ? "1" : "0";
  params["@overlay_bw"] = bandwidth ? "1" : "0";
  const auto results = query_all(db, R"(
    WITH pids AS (SELECT device, stream, min(pid) AS pid FROM gpu WHERE trace = @overlay_trace GROUP BY device, stream)
    SELECT 0, p.pid, q.stream, q.ts, q.length, NULL
    FROM queue_length_points q JOIN pids p ON p.device IS q.device AND p.stream IS q.stream
    WHERE @overlay_queue AND q.trace = @overlay_trace AND q.steps = coalesce(@steps, 'all')
    UNION ALL
    SELECT 1, e.pid, NULL, m.ts, m.gbps, m.name
    FROM memory_bw_points m JOIN event e ON e.uid = m.uid
    WHERE @overlay_bw AND m.trace = @overlay_trace AND m.steps = coalesce(@steps, 'all'))",
                                 params);
  int64_t n = 0;
  for (const auto& r : results.empty() ? std::vector<std::vector<std::optional<std::string>>>{} : results[0].rows) {
    const int64_t ts = r[3] ? parse_int64(*r[3]).value_or(0) : 0;
    if (!add.events.empty()) add.events += ",\n";
    if (r[0] == std::optional<std::string>("0"))
      add.events += fmt::format(
          R"({{"ph": "C", "name": "Queue Length", "pid": {}, "id": {}, "ts": {}, "args": {{"Queue Length": {}}}}})",
          json_id(r[1]), r[2].value_or("0"), micros(ts), r[4].value_or("0"));
    else
      add.events +=
          fmt::format(R"({{"ph": "C", "name": {}, "pid": {}, "ts": {}, "args": {{"Memcpy BW": {}}}}})",
                      nlohmann::json(r[5].value_or("")).dump(), json_id(r[1]), micros(ts), r[4].value_or("0"));
    ++n;
  }
  return n;
}

}  // namespace

std::string write_overlay(sqlite3* db, const Parameters& params, const std::string& path) {
  const auto picked = query_all(db, R"(
    SELECT id, path, bytes, coalesce(@critical_path, 1) <> 0, @counters IS NOT NULL AND @counters <> ''
    FROM trace WHERE id = (SELECT min(id) FROM trace WHERE @rank IS NULL OR rank = @rank))",
                                params);
  if (picked.empty() || picked[0].rows.empty())
    throw std::runtime_error(".overlay: no trace has the rank asked for (@rank)");
  auto num = [](const std::optional<std::string>& v) { return v ? parse_int64(*v).value_or(0) : 0; };
  const auto& chosen = picked[0].rows[0];
  const int64_t trace_id = num(chosen[0]);
  std::string trace_path = chosen[1].value_or("");
  int64_t trace_bytes = num(chosen[2]);
  TraceAdditions add;
  std::string said = path + ":";
  if (num(chosen[3])) said += " " + overlay_critical_path(db, params, add);
  if (num(chosen[4])) {
    const int64_t n = add_counters(db, params, trace_id, add);
    said += fmt::format("{} {} counter points (@counters)", num(chosen[3]) ? "," : "", n);
  }
  if (!num(chosen[3]) && !num(chosen[4]))
    throw std::runtime_error(".overlay: nothing to draw (@critical_path 0 and no @counters)");
  write_trace_copy(trace_path, (size_t)std::max<int64_t>(0, trace_bytes), path, add, "overlay");
  return said;
}

}  // namespace tlsql
