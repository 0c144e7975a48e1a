#include "src/loader.h"

#include <fmt/format.h>
#include <malloc.h>

#include <chrono>
#include <optional>

#include "src/db_writer.h"
#include "src/input.h"
#include "src/readers/pipeline.h"
#include "src/sqlite_util.h"
#include "src/tree_builder.h"

namespace tlsql {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

LoadStats load_file(sqlite3* db, EventStore& store, const std::string& path, const LoadOptions& opt) {
  using clock = std::chrono::steady_clock;
  auto done = [&](const char* stage) {
    if (opt.stage_done) opt.stage_done(stage);
  };
  LoadStats st;
  st.path = path;
  auto t0 = clock::now();
  Health health;
  std::unique_ptr<LoadedTrace> trace = read_trace(store, path, opt, health, st);

  auto t = clock::now();
  ProfileTreeBuilder tree(*trace, store.strings, health, &store.args, opt.captured);
  tree.set_threads(opt.threads ? opt.threads : load_threads());  // the load's threads
  tree.build();
  // (The rows are final: a range of the store's RowSpace gives back what it holds past them, for
  // the next trace to start right after them.)
  trace->rows.fit();
  st.tree_s = seconds_since(t);
  done("tree");

  t = clock::now();
  std::optional<TraceWriter> own;
  TraceWriter& writer = opt.writer ? *opt.writer : own.emplace(db, opt.schema);
  try {
    writer.write(*trace, path, st.json_bytes, tree.launches(), tree.replayed_graphs(), health);
  } catch (const SqlError& e) {
    throw LoadError(fmt::format("{}: cannot store the trace: {}", path, e.what()));
  }
  st.trace_id = trace->id;
  st.events = (int64_t)trace->rows.size();
  store.total_rows += st.events;
  store.traces.push_back(std::move(trace));
  store.index_new_kinds();
  st.insert_s = seconds_since(t);
  done("insert");
  st.total_s = seconds_since(t0);
  writer.set_load_ms(st.trace_id, st.total_s * 1e3);
  for (const auto& [check, row] : health.rows()) st.health.emplace_back(check, row.count);
  return st;
}

}  // namespace

std::vector<CapturedGraph> read_capture_file(EventStore& store, const std::string& path, Health& health) {
  try {
    LoadStats st;
    std::unique_ptr<LoadedTrace> trace = read_trace(store, path, {}, health, st);
    ProfileTreeBuilder tree(*trace, store.strings, health, &store.args);
    tree.set_threads(load_threads());
    tree.set_capture_trace();
    tree.build();
    std::vector<CapturedGraph> graphs = captured_graphs(*trace, store.strings, store.args, path);
    tree.describe_capture_replays(graphs);
    return graphs;
  } catch (const std::bad_alloc&) {
    throw LoadError(fmt::format("{}: out of memory: the trace needs more memory than this machine has", path));
  }
}

LoadStats load_trace_file(sqlite3* db, EventStore& store, const std::string& path, const LoadOptions& opt) {
  try {
    LoadStats st = load_file(db, store, path, opt);
    // The load's scratch (chunks, parse and tree buffers, freed by now) stays resident in malloc's
    // heaps, where the rows' later work (the perf pass, a save's sorts, a report) does not fit it
    // again: given back to the system here (~1 ms; a 97 MB Nsight export's save peaked 14 MB lower).
    // A load that shares ReadBuffers with the next (a folder's) leaves it to their end
    // (~ReadBuffers): the next load takes the same memory again, and giving it back between loads
    // cost a folder of 400 small traces 20,000 page faults, a fifth of its CPU.
    if (!opt.reuse) malloc_trim(0);
    return st;
  } catch (const std::bad_alloc&) {
    throw LoadError(fmt::format("{}: out of memory: the trace needs more memory than this machine has", path));
  }
}

}  // namespace tlsql
