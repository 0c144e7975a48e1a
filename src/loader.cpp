#include "src/loader.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "src/db_writer.h"
#include "src/input.h"
#include "src/json_check.h"
#include "src/json_reader.h"
#include "src/sqlite_util.h"
#include "src/trace_scanner.h"
#include "src/tree_builder.h"

namespace tlsql {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A bounded hand-off from the scanner thread to the parser: a few chunks in flight keep both
// cores busy without holding much of the file twice.
class ChunkQueue {
 public:
  // Parsed chunks' buffers come back here and are reused: fresh 8 MB buffers would cost a page
  // fault and a kernel page clear for every 4 KB of the file.
  TextBuffer spare() {
    std::lock_guard<std::mutex> l(m_);
    if (spares_.empty()) return {};
    TextBuffer b = std::move(spares_.back());
    spares_.pop_back();
    return b;
  }
  void recycle(TextBuffer&& b) {
    std::lock_guard<std::mutex> l(m_);
    spares_.push_back(std::move(b));
  }
  bool push(EventChunk&& c) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return q_.size() < 3 || cancelled_; });
    if (cancelled_) return false;
    q_.push_back(std::move(c));
    cv_.notify_all();
    return true;
  }
  size_t pending() {
    std::lock_guard<std::mutex> l(m_);
    return q_.size();
  }
  bool pop(EventChunk& c) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    c = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return true;
  }
  void close() {
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
    cv_.notify_all();
  }
  void cancel() {
    std::lock_guard<std::mutex> l(m_);
    cancelled_ = closed_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<EventChunk> q_;
  std::vector<TextBuffer> spares_;
  bool closed_ = false, cancelled_ = false;
};

// Checks one chunk whole (the on-demand parser skips what it does not read), repairs its strings
// if they need it, then parses it. Offsets in errors are the file's: chunk text = "[" + file bytes.
void parse_chunk(EventChunk& chunk, ChunkSink& sink, const std::string& path) {
  const char* text = chunk.text.data();
  size_t size = chunk.text.size(), capacity = chunk.text.capacity();
  auto file_offset = [&](size_t at) { return chunk.source_offset + (at > 0 ? at - 1 : 0); };
  JsonCheck check = check_json(text, size);
  if (check.result == JsonCheck::invalid)
    throw LoadError(fmt::format("{}: at byte {}: {}", path, file_offset(check.offset), check.message));
  TextBuffer repaired;
  if (check.result == JsonCheck::repairable) {
    repaired = repair_json(text, size, sink.health);
    text = repaired.data(), size = repaired.size(), capacity = repaired.capacity();
  }
  ReadStatus rs = read_event_chunk(text, size, capacity, sink);
  if (rs.code != ReadStatus::ok)  // offsets of a repaired chunk stay close to the original's
    throw LoadError(fmt::format("{}: at byte {}: {}", path, file_offset(rs.offset), rs.message));
}

}  // namespace

namespace {
LoadStats load_file(sqlite3* db, EventStore& store, const std::string& path, const LoadOptions& opt);
std::unique_ptr<LoadedTrace> parse_file(EventStore& store, const std::string& path, const LoadOptions& opt,
                                        Health& health, LoadStats& st);
}  // namespace

std::vector<CapturedGraph> read_capture_file(EventStore& store, const std::string& path, Health& health) {
  try {
    LoadStats st;
    std::unique_ptr<LoadedTrace> trace = parse_file(store, path, {}, health, st);
    ProfileTreeBuilder tree(*trace, store.strings, health, &store.args);
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
    return load_file(db, store, path, opt);
  } catch (const std::bad_alloc&) {
    throw LoadError(fmt::format("{}: out of memory: the trace needs more memory than this machine has", path));
  }
}

namespace {
// Reads `path` into a new trace of `store` (rows, strings, args; not yet in store.traces) and
// counts what it repairs into `health`.
std::unique_ptr<LoadedTrace> parse_file(EventStore& store, const std::string& path, const LoadOptions& opt,
                                        Health& health, LoadStats& st) {
  using clock = std::chrono::steady_clock;
  auto done = [&](const char* stage) {
    if (opt.stage_done) opt.stage_done(stage);
  };
  auto t = clock::now();
  InputSource in(path);
  st.file_bytes = in.file_bytes();
  st.read_s = seconds_since(t);
  done("read");

  t = clock::now();
  auto trace = std::make_unique<LoadedTrace>();
  trace->id = (int64_t)store.traces.size();
  trace->uid_base = store.first_uid + store.total_rows;
  // Reserved for small events (~100 bytes of JSON each); pages never written are never resident.
  trace->rows.reserve((in.gzip() ? in.file_bytes() * 8 : in.file_bytes()) / 100 + 16);

  // Two threads: the scanner cuts chunks and, whenever two are already waiting, parses one
  // itself; the main thread parses. Each has its own health counts, string cache and arena
  // blocks; rows go to disjoint ranges of one array.
  TraceScanner scanner(in, path);
  scanner.chunk_bytes = std::max<size_t>(1, opt.chunk_bytes);
  ChunkQueue queue;
  std::shared_mutex rows_mu;  // held shared while parsing; exclusively to grow the row array
  struct Worker {
    Health health;
    StringPool::Cache strings;
    TextArena::Writer args;
    ChunkSink sink;
    std::exception_ptr error;
    Worker(LoadedTrace& t, EventStore& s)
        : strings(s.strings), args(s.args), sink{t.rows, strings, args, health, s.strings, s.ids} {}
    void parse(EventChunk& c, const std::string& path, std::shared_mutex& mu) {
      std::shared_lock<std::shared_mutex> l(mu);
      sink.first_row = c.first_row;
      sink.events = c.events;
      parse_chunk(c, sink, path);
    }
    void drain(ChunkQueue& queue, const std::string& path, std::shared_mutex& mu) {
      EventChunk c;
      while (queue.pop(c)) {
        parse(c, path, mu);
        queue.recycle(std::move(c.text));
      }
    }
  };
  Worker scan_worker(*trace, store), main_worker(*trace, store);
  Health scan_health;
  std::thread scan_thread([&] {
    try {
      scanner.run(
          [&](EventChunk&& c) {
            // Real traces hold well under one event per compressed byte; a few KB of gzip'd
            // "{}," would inflate to millions of 88-byte rows (GBs): refuse it early, by name.
            if (in.gzip() && c.first_row + c.events > std::max<size_t>(size_t{1} << 20, in.progress() * 16))
              throw LoadError(
                  fmt::format("{}: at byte {}: {} events from {} compressed bytes (over 16 per byte): "
                              "a gzip bomb, not a trace",
                              path, c.source_offset, c.first_row + c.events, in.progress()));
            if (c.first_row + c.events > trace->rows.capacity()) {
              std::unique_lock<std::shared_mutex> l(rows_mu);
              trace->rows.reserve(std::max(trace->rows.capacity() * 2, c.first_row + c.events));
            }
            if (opt.progress) opt.progress(in.progress(), in.progress_total());
            if (queue.pending() >= 2) {  // the parser is behind: help
              scan_worker.parse(c, path, rows_mu);
              queue.recycle(std::move(c.text));
              return true;
            }
            return queue.push(std::move(c));
          },
          [&] { return queue.spare(); }, scan_health);
      queue.close();
      scan_worker.drain(queue, path, rows_mu);  // then help with what is left
    } catch (...) {
      scan_worker.error = std::current_exception();
      queue.cancel();
    }
    queue.close();
  });
  try {
    main_worker.drain(queue, path, rows_mu);
  } catch (...) {
    main_worker.error = std::current_exception();
    queue.cancel();
  }
  scan_thread.join();
  // A scanner error (e.g. truncation) explains a parse error at the cut, so it wins.
  if (scan_worker.error) std::rethrow_exception(scan_worker.error);
  if (main_worker.error) std::rethrow_exception(main_worker.error);
  trace->rows.set_size(scanner.events());
  for (const Health* h : {&scan_health, &main_worker.health, &scan_worker.health})
    for (const auto& [check, row] : h->rows()) health.add(check, row.example, row.detail, row.count);
  trace->metadata = scanner.bare_array() ? std::string() : scanner.metadata();
  st.json_bytes = in.base() + in.avail();
  if (trace->rows.empty()) health.add("no_events", -1, "traceEvents is empty");
  if (scanner.bare_array() && !trace->rows.empty() && health.count("element_not_object") == (int64_t)trace->rows.size())
    throw NotATrace(fmt::format("{}: at byte 0: not a trace: the array holds no event objects", path));
  st.parse_s = seconds_since(t);
  done("parse");
  return trace;
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
  std::unique_ptr<LoadedTrace> trace = parse_file(store, path, opt, health, st);

  auto t = clock::now();
  ProfileTreeBuilder tree(*trace, store.strings, health, &store.args, opt.captured);
  tree.build();
  st.tree_s = seconds_since(t);
  done("tree");

  t = clock::now();
  try {
    create_schema(db, opt.schema);
    write_trace(db, opt.schema, *trace, path, st.json_bytes, tree.launches(), tree.replayed_graphs(), health);
  } catch (const SqlError& e) {
    throw LoadError(fmt::format("{}: cannot store the trace: {}", path, e.what()));
  }
  st.trace_id = trace->id;
  st.events = (int64_t)trace->rows.size();
  store.total_rows += st.events;
  store.traces.push_back(std::move(trace));
  store.rebuild_kind_index();
  st.insert_s = seconds_since(t);
  done("insert");
  st.total_s = seconds_since(t0);
  set_load_ms(db, opt.schema, st.trace_id, st.total_s * 1e3);
  for (const auto& [check, row] : health.rows()) st.health.emplace_back(check, row.count);
  return st;
}

}  // namespace

}  // namespace tlsql
