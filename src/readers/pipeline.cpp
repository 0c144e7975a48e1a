#include "src/readers/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "src/input.h"
#include "src/readers/reader.h"

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
  bool push(Chunk&& c) {
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
  bool pop(Chunk& c) {
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
  std::deque<Chunk> q_;
  std::vector<TextBuffer> spares_;
  bool closed_ = false, cancelled_ = false;
};

// One parsing thread: its health counts, string cache, arena blocks and the format's parser.
struct Worker {
  Health health;
  StringPool::Cache strings;
  TextArena::Writer args;
  std::unique_ptr<ChunkParser> parser;
  std::exception_ptr error;
  Worker(LoadedTrace& t, EventStore& s, TraceReader& reader)
      : strings(s.strings), args(s.args), parser(reader.parser(RowSink{t.rows, strings, args, health, s.ids})) {}
  void parse(const Chunk& c, std::shared_mutex& mu) {
    std::shared_lock<std::shared_mutex> l(mu);
    parser->parse(c);
  }
  void drain(ChunkQueue& queue, std::shared_mutex& mu) {
    Chunk c;
    while (queue.pop(c)) {
      parse(c, mu);
      queue.recycle(std::move(c.text));
    }
  }
};

// The text's first bytes, for ReaderFormat::claims. Opening the input fills its window (to 64 MiB
// or the end), so this reads nothing more: errors stay where the format's scan meets them.
std::string_view head_of(InputSource& in) {
  while (in.avail() < kSniffBytes && in.refill(0)) {
  }
  return {in.window(), std::min(in.avail(), kSniffBytes)};
}

}  // namespace

std::unique_ptr<LoadedTrace> read_trace(EventStore& store, const std::string& path, const LoadOptions& opt,
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
  const ReaderFormat& format = choose_format(opt.formats, head_of(in), path);
  std::unique_ptr<TraceReader> reader = format.open(in, path, std::max<size_t>(1, opt.chunk_bytes));

  // Two threads: the scanner cuts chunks and, whenever two are already waiting, parses one
  // itself; the main thread parses. Each has its own health counts, string cache and arena
  // blocks; rows go to disjoint ranges of one array.
  ChunkQueue queue;
  std::shared_mutex rows_mu;  // held shared while parsing; exclusively to grow the row array
  Worker scan_worker(*trace, store, *reader), main_worker(*trace, store, *reader);
  Health scan_health;
  size_t rows = 0;  // rows of the chunks cut so far
  std::thread scan_thread([&] {
    try {
      reader->scan(
          [&](Chunk&& c) {
            c.first_row = rows;
            rows += c.rows;
            // Real traces hold well under one event per compressed byte; a few KB of gzip'd
            // "{}," would inflate to millions of 88-byte rows (GBs): refuse it early, by name.
            if (in.gzip() && rows > std::max<size_t>(size_t{1} << 20, in.progress() * 16))
              throw LoadError(
                  fmt::format("{}: at byte {}: {} events from {} compressed bytes (over 16 per byte): "
                              "a gzip bomb, not a trace",
                              path, c.source_offset, rows, in.progress()));
            if (rows > trace->rows.capacity()) {
              std::unique_lock<std::shared_mutex> l(rows_mu);
              trace->rows.reserve(std::max(trace->rows.capacity() * 2, rows));
            }
            if (opt.progress) opt.progress(in.progress(), in.progress_total());
            if (queue.pending() >= 2) {  // the parser is behind: help
              scan_worker.parse(c, rows_mu);
              queue.recycle(std::move(c.text));
              return true;
            }
            return queue.push(std::move(c));
          },
          [&] { return queue.spare(); }, scan_health);
      queue.close();
      scan_worker.drain(queue, rows_mu);  // then help with what is left
    } catch (...) {
      scan_worker.error = std::current_exception();
      queue.cancel();
    }
    queue.close();
  });
  try {
    main_worker.drain(queue, rows_mu);
  } catch (...) {
    main_worker.error = std::current_exception();
    queue.cancel();
  }
  scan_thread.join();
  // A scanner error (e.g. truncation) explains a parse error at the cut, so it wins.
  if (scan_worker.error) std::rethrow_exception(scan_worker.error);
  if (main_worker.error) std::rethrow_exception(main_worker.error);
  trace->rows.set_size(rows);
  for (const Health* h : {&scan_health, &main_worker.health, &scan_worker.health})
    for (const auto& [check, row] : h->rows()) health.add(check, row.example, row.detail, row.count);
  st.json_bytes = in.base() + in.avail();
  reader->finish(*trace, health);
  st.parse_s = seconds_since(t);
  done("parse");
  return trace;
}

}  // namespace tlsql
