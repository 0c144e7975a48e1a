#include "loader.h"

#include <chrono>
#include <fmt/format.h>

#include "db_writer.h"
#include "input.h"
#include "json_reader.h"
#include "sqlite_util.h"
#include "tree_builder.h"

namespace tlsql {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

LoadStats load_trace_file(sqlite3* db, const std::string& path, const std::function<void(const char*)>& stage_done) {
  auto done = [&](const char* stage) {
    if (stage_done) stage_done(stage);
  };
  using clock = std::chrono::steady_clock;
  LoadStats st;
  st.path = path;
  auto t0 = clock::now(), t = t0;
  Health health;
  InputText in = read_input(path, health);
  st.file_bytes = in.file_bytes;
  st.read_s = seconds_since(t);
  done("read");

  t = clock::now();
  ParsedTrace trace;
  const char* text = in.text.data() + in.offset;
  size_t size = in.text.size() - in.offset, capacity = in.text.capacity() - in.offset;
  ReadStatus rs = read_trace_json(text, size, capacity, trace, health);
  TextBuffer repaired;
  if (rs.code == ReadStatus::needs_repair) {
    repaired = repair_strings(text, size, health);
    trace = ParsedTrace{};
    text = repaired.data(), size = repaired.size(), capacity = repaired.capacity();
    rs = read_trace_json(text, size, capacity, trace, health);
  }
  if (rs.code != ReadStatus::ok) {
    std::string where = rs.offset >= size && size > 0 ? fmt::format("at byte {} (end of file)", rs.offset)
                                                      : fmt::format("at byte {}", rs.offset + in.offset);
    throw LoadError(fmt::format("{}: {}: {}", path, where, rs.message));
  }
  if (trace.events.empty()) health.add("no_events", -1, "traceEvents is empty");
  st.json_bytes = size;
  st.parse_s = seconds_since(t);
  done("parse");

  t = clock::now();
  ProfileTreeBuilder tree(trace, health);
  tree.build();
  st.tree_s = seconds_since(t);
  done("tree");

  t = clock::now();
  create_schema(db);
  TraceRecord rec;
  next_ids(db, rec.id, rec.uid_base);
  rec.path = path;
  rec.bytes = size;
  try {
    write_trace(db, rec, trace, tree.launches(), health);
  } catch (const SqlError& e) {
    throw LoadError(fmt::format("{}: cannot store the trace: {}", path, e.what()));
  }
  st.insert_s = seconds_since(t);
  done("insert");
  st.trace_id = rec.id;
  st.events = (int64_t)trace.events.size();
  st.total_s = seconds_since(t0);
  set_load_ms(db, rec.id, st.total_s * 1e3);
  for (const auto& [check, row] : health.rows()) st.health.emplace_back(check, row.count);
  return st;
}

void finish_load(sqlite3* db) {
  create_schema(db);
  finish_schema(db);
}

}  // namespace tlsql
