#include "src/readers/pipeline.h"

#include <fmt/format.h>
#include <malloc.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "src/input.h"
#include "src/readers/reader.h"

namespace tlsql {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A chunk and its place among the chunks cut (file order, for the first error).
struct Numbered {
  Chunk chunk;
  size_t seq = 0;
};

// A bounded hand-off from the scanner thread to the parsers: a few chunks in flight per parser
// keep every core busy without holding much of the file twice (memory per thread is bounded:
// at most `limit` chunks wait, each about LoadOptions::chunk_bytes).
class ChunkQueue {
 public:
  // `keep`: buffers an earlier load left, taken now and given back, with this load's, at the end;
  // only those of up to `keep_capacity` bytes (a chunk grown for one huge event is not held for
  // the rest of a folder).
  ChunkQueue(size_t limit, std::vector<TextBuffer>* keep, size_t keep_capacity)
      : limit_(limit), keep_(keep), keep_capacity_(keep_capacity) {
    if (keep_) spares_ = std::move(*keep_);
  }
  ~ChunkQueue() {  // (allocates nothing: it also runs as a bad_alloc unwinds the load)
    if (!keep_) return;
    std::erase_if(spares_, [&](const TextBuffer& b) { return b.capacity() > keep_capacity_; });
    *keep_ = std::move(spares_);
  }
  ChunkQueue(const ChunkQueue&) = delete;
  ChunkQueue& operator=(const ChunkQueue&) = delete;
  // Parsed chunks' buffers come back here and are reused: fresh chunk buffers would cost a page
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
  bool push(Numbered&& c) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return q_.size() < limit_ || cancelled_; });
    if (cancelled_) return false;
    q_.push_back(std::move(c));
    cv_.notify_all();
    return true;
  }
  size_t pending() {
    std::lock_guard<std::mutex> l(m_);
    return q_.size();
  }
  bool try_pop(Numbered& c) {
    std::lock_guard<std::mutex> l(m_);
    if (q_.empty()) return false;
    c = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return true;
  }
  bool pop(Numbered& c) {
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
  // After an error: the scanner stops; chunks already queued are still parsed (they come before
  // the failed one in the file, and one of them may hold the first error in file order).
  void cancel() {
    std::lock_guard<std::mutex> l(m_);
    cancelled_ = closed_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Numbered> q_;
  std::vector<TextBuffer> spares_;
  size_t limit_;
  std::vector<TextBuffer>* keep_;
  size_t keep_capacity_;
  bool closed_ = false, cancelled_ = false;
};

// Where each chunk's rows go, in file order. A chunk the scan counted is placed as it is cut (every
// chunk before it is placed by then); a speculative one (Chunk::speculative) once every chunk
// before it is placed: rows are placed at a prefix sum published in chunk order, so each row's
// index (its uid) is its place in the file whichever thread parsed it. A speculative chunk is read
// whole before its place is known (ChunkParser::prove, into StagedRows); one proved before its
// turn is parked and its thread goes on with the next chunk, and whichever thread places the chunk
// before it places it too (waiting for its turn idled a thread for the rest of another's chunk:
// 8-10% of the parse's thread time on 2 threads). A chunk that fails its proof drops itself and
// every later speculative chunk, before any of their rows or health counts are kept; the scan
// re-cuts from its start (settle()).
class Placement : public CutProof {
 public:
  // At most `parked` chunks wait for their turn (their rows held); a thread with one more waits.
  // With `keep`, staged rows are taken from it and given back to it (ReadBuffers: a folder's
  // loads), but for those whose rows took more than `keep_bytes`.
  Placement(RowArray& rows, std::shared_mutex& rows_mu, size_t parked, std::vector<std::unique_ptr<StagedRows>>* keep,
            size_t keep_bytes)
      : array_(rows), rows_mu_(rows_mu), max_parked_(parked), keep_(keep), keep_bytes_(keep_bytes) {
    if (keep_) spare_ = std::move(*keep_);
  }
  ~Placement() {  // (allocates nothing, as ~ChunkQueue)
    if (!keep_) return;
    std::erase_if(spare_, [&](const auto& s) { return s->most_rows * sizeof(EventRec) > keep_bytes_; });
    *keep_ = std::move(spare_);
  }
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;
  // Called by the scanner for a chunk it counted, as it cuts it (`seq`: its place among the chunks).
  void place_counted(Chunk& c, size_t seq) {
    std::lock_guard<std::mutex> l(m_);
    c.first_row = rows_;
    rows_ += c.rows;
    next_seq_ = seq + 1;
    issued_ = seq + 1;
    grow();
  }
  void note_issued(size_t seq) {
    std::lock_guard<std::mutex> l(m_);
    issued_ = seq + 1;
  }
  // A speculative chunk's rows, read by a thread, to be copied to their place by the one that
  // places them.
  struct Ready {
    size_t first_row = 0, rows = 0;
    std::unique_ptr<StagedRows> staged;
  };
  std::unique_ptr<StagedRows> staging() {
    std::unique_ptr<StagedRows> s;
    {
      std::lock_guard<std::mutex> l(m_);
      if (!spare_.empty()) s = std::move(spare_.back()), spare_.pop_back();
    }
    if (!s) return std::make_unique<StagedRows>();
    s->health = Health();
    return s;
  }
  void recycle(std::unique_ptr<StagedRows> s) {
    std::lock_guard<std::mutex> l(m_);
    spare_.push_back(std::move(s));
  }
  // A speculative chunk read into `staged`, proved (`rows`: its rows) or not (SIZE_MAX). Places it
  // if its turn has come, and after it every parked chunk whose turn follows; else parks it. The
  // caller copies what is returned (outside this lock: grow() here waits for copies).
  std::vector<Ready> place_speculative(size_t seq, size_t source_offset, size_t rows,
                                       std::unique_ptr<StagedRows> staged) {
    std::vector<Ready> ready;
    std::unique_lock<std::mutex> l(m_);
    // (The chunk whose turn it is never waits: a thread holds it, so waiting here ends.)
    if (seq != next_seq_ && !dropped(seq) && parked_.size() >= max_parked_)
      cv_.wait(l, [&] { return seq == next_seq_ || dropped(seq); });
    if (dropped(seq)) {
      spare_.push_back(std::move(staged));
      return ready;
    }
    parked_.emplace(seq, Parked{source_offset, rows, std::move(staged)});
    while (!parked_.empty() && parked_.begin()->first == next_seq_) {
      Parked p = std::move(parked_.begin()->second);
      parked_.erase(parked_.begin());
      if (p.rows == SIZE_MAX) {  // not proved: it and the guesses after it are dropped
        fail_seq_ = next_seq_, fail_offset_ = p.source_offset;
        failed_ = true;
        spare_.push_back(std::move(p.staged));
        for (auto& [s, q] : parked_) spare_.push_back(std::move(q.staged));
        parked_.clear();
        break;
      }
      ready.push_back({rows_, p.rows, std::move(p.staged)});
      rows_ += p.rows;
      ++next_seq_;
      ++guessed_;
    }
    if (!ready.empty()) grow();
    cv_.notify_all();
    return ready;
  }
  size_t rows() {
    std::lock_guard<std::mutex> l(m_);
    return rows_;
  }
  bool failed() override { return failed_; }
  size_t guessed() {  // speculative chunks placed
    std::lock_guard<std::mutex> l(m_);
    return guessed_;
  }
  size_t placed() {  // chunks placed, dropped ones not counted
    std::lock_guard<std::mutex> l(m_);
    size_t n = next_seq_;
    for (auto [from, to] : dropped_) n -= to - from;
    return n;
  }
  size_t wrong() {  // guesses that failed their proof
    std::lock_guard<std::mutex> l(m_);
    return dropped_.size();
  }
  // `help` runs one queued chunk on the calling thread (false when none is queued): the scanner's
  // thread parses while it waits, so a chunk queued and not yet taken cannot keep it waiting.
  size_t settle(const std::function<bool()>& help) {
    for (;;) {
      {
        std::unique_lock<std::mutex> l(m_);
        if (fail_seq_ != SIZE_MAX) {  // drop it and the guesses after it; place what comes next
          dropped_.emplace_back(fail_seq_, issued_);
          next_seq_ = issued_;
          fail_seq_ = SIZE_MAX;
          failed_ = false;
          cv_.notify_all();
          return fail_offset_;
        }
        if (next_seq_ == issued_) return SIZE_MAX;
      }
      if (help()) continue;
      // (Only the scanner queues chunks: with none queued, the rest are on other threads, whose
      // placing wakes this wait.)
      std::unique_lock<std::mutex> l(m_);
      cv_.wait(l, [&] { return next_seq_ == issued_ || fail_seq_ != SIZE_MAX; });
    }
  }
  std::function<bool()> help;
  size_t settle() override { return settle(help); }

 private:
  bool dropped(size_t seq) const {
    if (seq >= fail_seq_) return true;  // (fail_seq_ is SIZE_MAX when no guess has failed since settle())
    for (auto [from, to] : dropped_)
      if (seq >= from && seq < to) return true;
    return false;
  }
  // (Under m_, so that capacity changes one place at a time; parsers hold rows_mu_ shared.)
  void grow() {
    if (rows_ <= array_.capacity()) return;
    std::unique_lock<std::shared_mutex> l(rows_mu_);
    array_.reserve(std::max(array_.capacity() * 2, rows_));
  }
  struct Parked {
    size_t source_offset = 0, rows = 0;
    std::unique_ptr<StagedRows> staged;
  };
  RowArray& array_;
  std::shared_mutex& rows_mu_;
  const size_t max_parked_;
  std::vector<std::unique_ptr<StagedRows>>* const keep_;
  const size_t keep_bytes_;
  std::map<size_t, Parked> parked_;  // by seq: proved before their turn
  std::vector<std::unique_ptr<StagedRows>> spare_;
  std::mutex m_;
  std::condition_variable cv_;
  size_t rows_ = 0, next_seq_ = 0, issued_ = 0, guessed_ = 0;
  size_t fail_seq_ = SIZE_MAX, fail_offset_ = 0;
  std::vector<std::pair<size_t, size_t>> dropped_;  // chunks [from, to) dropped after a wrong guess
  std::atomic<bool> failed_{false};
};

// One parsing thread: its health counts, string cache, arena blocks and the format's parser.
struct Worker {
  Health health;
  StringPool::Cache strings;
  TextArena::Writer args;
  std::unique_ptr<ChunkParser> parser;
  std::exception_ptr error;
  size_t error_seq = SIZE_MAX;  // the failed chunk's place in the file (errors: the first wins)
  RowArray& rows;
  Worker(LoadedTrace& t, EventStore& s, TraceReader& reader)
      : strings(s.strings),
        args(s.args),
        parser(reader.parser(RowSink{t.rows, strings, args, health, s.ids})),
        rows(t.rows) {}
  // False (the error kept) when the chunk fails; a speculative chunk dropped is no failure.
  bool parse(Numbered& c, std::shared_mutex& mu, Placement& placement) {
    if (c.chunk.speculative()) {
      std::unique_ptr<StagedRows> staged = placement.staging();
      bool proved = false;
      try {
        proved = parser->prove(c.chunk, *staged);
      } catch (...) {  // (a chunk not proved: the serial re-cut meets the error again)
      }
      // (what it wrote: a chunk not proved may have written rows up to its capacity)
      staged->most_rows = std::max(staged->most_rows, proved ? c.chunk.rows : staged->rows.capacity());
      for (Placement::Ready& r : placement.place_speculative(c.seq, c.chunk.source_offset,
                                                             proved ? c.chunk.rows : SIZE_MAX, std::move(staged))) {
        {
          std::shared_lock<std::shared_mutex> l(mu);
          static_assert(std::is_trivially_copyable_v<EventRec>);
          std::memcpy(static_cast<void*>(rows.slot(r.first_row)), r.staged->rows.slot(0), r.rows * sizeof(EventRec));
        }
        health.merge(r.staged->health, (int64_t)r.first_row);
        placement.recycle(std::move(r.staged));
      }
      return true;
    }
    try {
      std::shared_lock<std::shared_mutex> l(mu);
      parser->parse(c.chunk);
      return true;
    } catch (...) {
      if (c.seq < error_seq) error = std::current_exception(), error_seq = c.seq;
      return false;
    }
  }
  void drain(ChunkQueue& queue, std::shared_mutex& mu, Placement& placement) {
    Numbered c;
    while (queue.pop(c)) {
      if (!parse(c, mu, placement)) queue.cancel();
      queue.recycle(std::move(c.chunk.text));
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

namespace {
std::atomic<size_t> default_threads{0};
}

void set_load_threads(size_t n) { default_threads = n; }

size_t load_threads() {
  if (size_t n = default_threads.load()) return n;
  // The CPUs this process may run on (taskset, cgroup cpusets), not the machine's: a load pinned
  // to one core would otherwise time-slice threads on it.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    if (int n = CPU_COUNT(&set); n > 0) return (size_t)n;
  // (0 when the machine does not say: then two, the count this pipeline had before it asked.)
  return std::max(1u, std::thread::hardware_concurrency() ? std::thread::hardware_concurrency() : 2u);
}

size_t chunk_size(size_t asked, size_t text_bytes, size_t threads) {
  // Every thread gets four chunks or more of a text whose size is known, chunks no smaller than
  // 256 KB. A plain file of under two chunks was cut by the serial scan alone (a speculative cut
  // needs a chunk after the guess), and a 2.6 MB file's two 2 MB chunks gave a second thread at
  // most 0.6 MB of it; a small .gz (always cut by the serial scan, which inflates it) handed the
  // parsers its first chunk only once 2 MB were inflated and walked.
  constexpr size_t kSmallest = 256u << 10;
  if (text_bytes) asked = std::min(asked, std::max(kSmallest, text_bytes / (4 * threads)));
  return std::max<size_t>(1, asked);
}

ReadBuffers::~ReadBuffers() {
  // The loads that shared these are over: what they left in malloc's heaps goes back to the
  // system, these buffers too, as after a load that shares none (src/loader.cpp).
  window = TextBuffer();
  chunks.clear();
  staged.clear();
  malloc_trim(0);
}

std::unique_ptr<LoadedTrace> read_trace(EventStore& store, const std::string& path, const LoadOptions& opt,
                                        Health& health, LoadStats& st) {
  using clock = std::chrono::steady_clock;
  auto done = [&](const char* stage) {
    if (opt.stage_done) opt.stage_done(stage);
  };
  auto t = clock::now();
  InputSource in(path, InputSource::kMaxKept, false, opt.reuse ? &opt.reuse->window : nullptr);
  st.file_bytes = in.file_bytes();
  st.read_s = seconds_since(t);
  done("read");

  t = clock::now();
  auto trace = std::make_unique<LoadedTrace>();
  trace->id = (int64_t)store.traces.size();
  trace->uid_base = store.first_uid + store.total_rows;
  // Reserved for small events (~100 bytes of JSON each); pages never written are never resident.
  // Where the process takes 2 MiB pages (a large input: repl/main.cpp), a small trace's rows lie in
  // the store's RowSpace, beside the traces loaded before it (fitted after the tree stage, which
  // may add rows: src/loader.cpp).
  if (TextArena::huge_pages()) trace->rows.take_from(&store.row_space);
  trace->rows.reserve((in.gzip() ? in.file_bytes() * 8 : in.file_bytes()) / 100 + 16);
  // `threads` threads: the scanner cuts chunks and, whenever the parsers have enough waiting,
  // parses one itself; the main thread and threads - 2 more parse. Each has its own health
  // counts, string cache and arena blocks; rows go to disjoint ranges of one array. One thread:
  // the scanner parses every chunk as it cuts it.
  const size_t threads = std::max<size_t>(1, opt.threads ? opt.threads : load_threads());
  const ReaderFormat& format = choose_format(opt.formats, head_of(in), path);
  std::unique_ptr<TraceReader> reader =
      format.open(in, path, chunk_size(opt.chunk_bytes, in.known_text_bytes(), threads));
  reader->use_threads(threads);
  size_t parsers = threads - 1;  // besides the scanner (0 when no thread could be started)
  // (What a folder's next load is given: chunk buffers of up to two chunks and 1 MB, and staged
  // rows that took no more; rows take ~88 bytes an event, less than a Kineto event's text.)
  const size_t keep_bytes = 2 * opt.chunk_bytes + (1u << 20);
  ChunkQueue queue(parsers + 1, opt.reuse ? &opt.reuse->chunks : nullptr, keep_bytes);
  std::shared_mutex rows_mu;   // held shared while parsing; exclusively to grow the row array
  std::deque<Worker> workers;  // [0]: the scanner thread's; [1]: the main thread's; then the others
  for (size_t i = 0; i < threads; ++i) workers.emplace_back(*trace, store, *reader);
  Worker& scan_worker = workers[0];
  reader->use_keys(&scan_worker.args.keys());  // (the scan runs on the thread scan_worker parses on)
  Health scan_health;
  std::exception_ptr scan_error;  // the scan's own (truncation, a gzip bomb, ...)
  size_t seq = 0;                 // chunks cut so far
  double scan_parse_s = 0;        // the scanner thread's time parsing chunks itself
  Placement placement(trace->rows, rows_mu, threads, opt.reuse ? &opt.reuse->staged : nullptr, keep_bytes);
  placement.help = [&] {  // while the scan settles its guesses: parse a queued chunk
    Numbered n;
    if (!queue.try_pop(n)) return false;
    const auto p0 = clock::now();
    if (!scan_worker.parse(n, rows_mu, placement)) queue.cancel();
    scan_parse_s += seconds_since(p0);
    queue.recycle(std::move(n.chunk.text));
    return true;
  };
  if (in.random_access()) reader->allow_speculation(&placement);
  auto scan = [&] {
    const auto s0 = clock::now();
    try {
      reader->scan(
          [&](Chunk&& c) {
            if (c.speculative()) {
              placement.note_issued(seq);
            } else {
              placement.place_counted(c, seq);
              // Real traces hold well under one event per compressed byte; a few KB of gzip'd
              // "{}," would inflate to millions of 88-byte rows (GBs): refuse it early, by name.
              const size_t rows = placement.rows();
              if (in.gzip() && rows > std::max<size_t>(size_t{1} << 20, in.progress() * 16))
                throw LoadError(
                    fmt::format("{}: at byte {}: {} events from {} compressed bytes (over 16 per byte): "
                                "a gzip bomb, not a trace",
                                path, c.source_offset, rows, in.progress()));
            }
            if (opt.progress) opt.progress(in.progress(), in.progress_total());
            Numbered n{std::move(c), seq++};
            if (parsers == 0 || queue.pending() >= parsers) {  // the parsers are behind: help
              const auto p0 = clock::now();
              bool ok = scan_worker.parse(n, rows_mu, placement);
              scan_parse_s += seconds_since(p0);
              queue.recycle(std::move(n.chunk.text));
              return ok;  // (a failed chunk stops the scan: nothing after it can come first)
            }
            return queue.push(std::move(n));
          },
          [&] { return queue.spare(); }, scan_health);
      queue.close();
      st.scan_s = seconds_since(s0) - scan_parse_s;
      if (!scan_worker.error) scan_worker.drain(queue, rows_mu, placement);  // then help with what is left
    } catch (...) {
      scan_error = std::current_exception();
    }
    queue.cancel();  // (after an error; else everything was cut and the queue is closed anyway)
  };
  // A thread the system refuses (a process limit) is one parser fewer, never a lost chunk: the
  // scanner drains what is left when it is done, on whatever thread it runs.
  std::vector<std::thread> pool;
  auto spawn = [&](auto&& fn) {
    try {
      pool.emplace_back(fn);
      return true;
    } catch (const std::system_error&) {
      return false;
    }
  };
  if (parsers > 0 && spawn(scan)) {
    for (size_t i = 2; i < threads; ++i)
      if (!spawn([&, i] { workers[i].drain(queue, rows_mu, placement); })) break;
    workers[1].drain(queue, rows_mu, placement);
  } else {
    // Alone, the scanner parses every chunk as it cuts it: a chunk it queued would wait for a
    // thread that is not there, and a speculative chunk parsed after it would wait for that one.
    parsers = 0;
    scan();
  }
  for (std::thread& t : pool) t.join();
  // The first error in file order wins: a failed chunk's (the first chunk's, whichever thread
  // parsed it) lies before the scanner's, which only ever cuts chunks behind where it reads.
  const Worker* failed = nullptr;
  for (const Worker& w : workers)
    if (w.error && (!failed || w.error_seq < failed->error_seq)) failed = &w;
  if (failed) std::rethrow_exception(failed->error);
  if (scan_error) std::rethrow_exception(scan_error);
  trace->rows.set_size(placement.rows());
  st.chunks = placement.placed();
  st.chunks_guessed = placement.guessed();
  st.wrong_guesses = placement.wrong();
  for (const auto& [check, row] : scan_health.rows()) health.add(check, row.example, row.detail, row.count);
  for (const Worker& w : workers)
    for (const auto& [check, row] : w.health.rows()) health.add(check, row.example, row.detail, row.count);
  st.json_bytes = in.base() + in.avail();
  reader->finish(*trace, health);
  st.parse_s = seconds_since(t);
  done("parse");
  return trace;
}

}  // namespace tlsql
