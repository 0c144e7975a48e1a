// The columnar home of loaded traces (Perfetto's design): compact rows, interned strings and an
// arena holding each event's args text. The `event` virtual table reads it; nothing is copied into
// SQLite until a database is saved.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/trace_model.h"

namespace tlsql {

// Interned strings: names, categories and text pids repeat millions of times but take a few
// thousand distinct values.
// Safe to intern from several threads (the parser threads); get() is for after loading.
class StringPool {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  // kNone when `s` is new and the pool already holds `cap` strings.
  uint32_t intern(std::string_view s, size_t cap = SIZE_MAX);
  std::string_view get(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

  // A parser thread's view of the pool: lookups hit a private table, the shared one only on a
  // miss. The table is flat (open addressing, one probe in the common case) and its hash reads
  // 8 bytes a step: a GB trace interns names, categories and args keys ~20 M times, and
  // unordered_map's node walk and byte-wise hash were ~8% of a load.
  class Cache {
   public:
    explicit Cache(StringPool& pool) : pool_(pool) {}
    uint32_t intern(std::string_view s, size_t cap = SIZE_MAX);
    static uint64_t hash(std::string_view s);

   private:
    struct Slot {
      uint64_t hash = 0;
      const char* data = nullptr;  // into the pool's string (stable: a deque of strings)
      uint32_t size = 0, id = kNone;
    };
    void insert(const Slot& s);
    StringPool& pool_;
    std::vector<Slot> slots_;  // a power of two of them, at most half used
    size_t used_ = 0;
  };

 private:
  std::mutex mu_;
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

// Append-only storage of args texts, their keys as tokens (src/args_text.h); views stay valid
// (blocks never move). Each block keeps 64 spare bytes past its end so simdjson can read a text
// in place.
class TextArena {
 public:
  static constexpr size_t kSlack = 64;
  // Each writing thread appends into blocks of its own; only taking a new block is shared.
  // A writer goes on in the block an earlier writer left unfilled (a folder's loads each ended
  // two writers' 16 MB blocks part-way: the last 2 MB page of each resident and mostly empty).
  class Writer {
   public:
    explicit Writer(TextArena& arena);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    uint64_t add(std::string_view s);  // returns a handle for get()
    // Adds an args text (minified JSON), its keys as tokens where it can be encoded (`keyed`).
    uint64_t add_args(std::string_view json, uint32_t& len, bool& keyed);
    // Adds an args value as it lies in the trace (whitespace and all), minified and keyed in one
    // walk (args_text::minify_encode). False, nothing added, when that walk cannot decide: then
    // minify it and call add_args.
    bool add_raw_args(std::string_view raw, uint64_t& handle, uint32_t& len);
    // This thread's cache of the args keys' dictionary (args_text::encode_key).
    StringPool::Cache& keys() { return keys_; }

   private:
    TextArena& arena_;
    StringPool::Cache keys_;
    std::string encoded_;
    char* data_ = nullptr;
    size_t size_ = 0, used_ = 0;
    uint64_t block_ = 0;
  };
  // The bytes as stored (an args text's keys as tokens: see args_of).
  std::string_view get(uint64_t handle, uint32_t len) const {
    return {blocks_[handle >> 32].get() + (handle & 0xffffffffu), len};
  }
  const StringPool& keys() const { return keys_; }
  // Blocks taken from now on ask for 2 MiB pages (for the whole process: where malloc asks for
  // them too, repl/main.cpp).
  static void use_huge_pages(bool on) { huge_pages_ = on; }
  static bool huge_pages() { return huge_pages_; }

 private:
  static std::atomic<bool> huge_pages_;
  struct Unfilled {  // a block a writer left: data[used, size) is free
    char* data;
    size_t size, used;
    uint64_t block;
  };
  struct Unmap {  // a block of 2 MiB pages is a mapping of its own (event_store.cpp, new_block)
    size_t bytes = 0;
    void operator()(char* p) const;
  };
  using Block = std::unique_ptr<char, Unmap>;
  static Block new_block(size_t bytes, bool huge_pages);
  // Blocks double from 64 KiB to 16 MB: a store of a few events (a small trace, each of a test's
  // thousands of one-chunk reads) takes a small one, where a 16 MB allocation each cost 25 ms
  // under AddressSanitizer on a VM whose page faults are dear.
  static constexpr size_t kFirstBlock = 64u << 10, kDoublings = 8;  // (16 MB: 64 KiB << 8)
  std::mutex mu_;
  std::deque<Block> blocks_;
  std::vector<Unfilled> unfilled_;
  StringPool keys_;  // the args keys' dictionary
};

// An event's id (correlation, external id, sequence number, stream, pid, tid, flow id) in 32 bits.
// Ids are counters and small numbers in every trace we know of, and these seven were a quarter of
// the row as int64s. A value outside [-2^30, 2^31) is kept once in the store's WideIds and the
// field holds its code (below -2^30): equal values have equal codes, so ids compare and group
// without decoding; WideIds::value() gives the value (kNull for NULL). The order of codes is not
// the values' order: code that orders by an id decodes it.
struct Id32 {
  int32_t v = INT32_MIN;  // INT32_MIN: NULL
  bool null() const { return v == INT32_MIN; }
  auto operator<=>(const Id32&) const = default;
};

class WideIds {
 public:
  static constexpr int64_t kLow = -(int64_t(1) << 30);  // values in [kLow, INT32_MAX] are stored as they are
  // Safe from several threads (the parser threads). kNull gives NULL. Throws std::length_error
  // past 2^30 - 1 distinct wide values (more than a store's rows could hold).
  Id32 id(int64_t value);
  // For after loading (no id() running).
  int64_t value(Id32 id) const {
    if (id.null()) return kNull;
    return id.v >= kLow ? id.v : values_[(size_t)(id.v - (INT32_MIN + 1))];
  }
  size_t size() const { return values_.size(); }

 private:
  void grow();
  std::mutex mu_;
  std::vector<int64_t> values_;  // code INT32_MIN + 1 + i holds values_[i]
  // Open addressing over values_ (0: empty, else i + 1), at most half full: 8-16 bytes of slots a
  // value where a node map took ~40 (an Nsight export of several processes has a wide correlation
  // id per launch).
  std::vector<uint32_t> slots_;
  int slot_bits_ = 0;  // slots_.size() is 2^slot_bits_
};

// One event, 88 bytes. Integers that may be absent hold kNull (int64), kNull32 (int32) or a NULL
// Id32.
struct EventRec {
  static constexpr int32_t kNull32 = INT32_MIN;
  // keyed_args: the args text's keys are tokens (src/args_text.h)
  enum Flags : uint8_t { pid_text = 1, tid_text = 2, flow_text = 4, backward = 8, has_args = 16, keyed_args = 32 };
  int64_t ts = kNull, dur = kNull;
  uint64_t args = 0;  // TextArena handle
  uint32_t args_len = 0;
  uint32_t name = StringPool::kNone, cat = StringPool::kNone;
  Id32 correlation, external_id, seq, stream;
  Id32 pid, tid, flow_id;                    // string ids when the text flag is set
  int32_t parent = -1, fwd = -1, depth = 0;  // parent / fwd: index in the same trace
  int32_t device = kNull32, step = kNull32;
  Kind kind = Kind::other;
  char ph = 0;
  uint8_t flags = 0;

  int64_t end() const {
    int64_t e;
    return ts == kNull || dur == kNull || __builtin_add_overflow(ts, dur, &e) ? kNull : e;
  }
  bool is(Flags f) const { return flags & f; }
};
static_assert(sizeof(EventRec) == 88, "a GB trace holds millions of rows: keep the row small");

// The args text of `e` ("" when it has none): decoded into `buf` when its keys are tokens, else
// where it lies in the arena; kSlack readable bytes follow it either way.
std::string_view args_of(const TextArena& arena, const EventRec& e, std::string& buf);

// Rows of a folder's small traces side by side on 2 MiB pages. A trace's rows in a mapping of their
// own under 2 MiB (a 2.2 MB file's: 860 KB) get no 2 MiB page and fault in 4 KiB at a time: 84,000
// faults for 400 such files, two thirds of that folder's (~10-15 us each on a VM). Ranges are taken
// front to back from blocks of 64 MiB mapped on a 2 MiB boundary; the last range taken can grow or
// shrink in place (a trace's rows, reserved by its file's size, are fitted once final). One
// store's: its loads run one after another, and a RowArray grows only while no parser holds a row.
class RowSpace {
 public:
  static constexpr size_t kBlock = 64u << 20, kLargest = kBlock / 4;  // (larger: a mapping of its own)
  RowSpace() = default;
  ~RowSpace();
  RowSpace(const RowSpace&) = delete;
  RowSpace& operator=(const RowSpace&) = delete;
  // `bytes` (a multiple of 64) after the last range, or in a new block; nullptr over kLargest.
  char* take(size_t bytes);
  // Moves the end of the last range taken from `end` to `new_end` (back to its start: given back);
  // false when `end` does not end the last range or `new_end` is past its block.
  bool resize_last(const char* end, char* new_end);

 private:
  std::vector<char*> blocks_;
  char *next_ = nullptr, *end_ = nullptr;  // the current block's free part
};

// Rows of one trace in one anonymous mapping (or a RowSpace's range): pages never written are never
// resident, and parser threads fill disjoint ranges at once. Growth (mremap) happens only while no
// parser holds a row.
class RowArray {
 public:
  // `huge_pages`: asks for 2 MiB pages (a trace's rows); a small array reused many times (a
  // chunk's staged rows) keeps 4 KiB ones, so that it holds only the pages its rows fill.
  explicit RowArray(bool huge_pages = true) : huge_pages_(huge_pages) {}
  ~RowArray();
  RowArray(const RowArray&) = delete;
  RowArray& operator=(const RowArray&) = delete;
  void reserve(size_t n);  // keeps every slot below the old capacity
  // From the first reserve on, rows are taken from `space` while they fit there (RowSpace).
  void take_from(RowSpace* space) { space_ = space; }
  // Gives capacity past size() back to the RowSpace the rows lie in, when they are its last range.
  void fit();
  EventRec* slot(size_t i) { return data_ + i; }  // i < capacity: construct with placement new
  void set_size(size_t n) { size_ = n; }
  // Appends after the rows (rows made after parsing, such as a graph replay's capture-time ops).
  void push_back(const EventRec& r) {
    if (size_ == capacity_) reserve(std::max<size_t>(16, capacity_ + capacity_ / 2));
    new (data_ + size_) EventRec(r);
    ++size_;
  }
  EventRec& operator[](size_t i) { return data_[i]; }
  const EventRec& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  EventRec* begin() { return data_; }
  EventRec* end() { return data_ + size_; }
  const EventRec* begin() const { return data_; }
  const EventRec* end() const { return data_ + size_; }

 private:
  EventRec* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0, bytes_ = 0;
  bool huge_pages_ = true;
  RowSpace* space_ = nullptr;
  bool in_space_ = false;  // data_ is a range of space_'s
};

// One loaded file.
struct LoadedTrace {
  int64_t id = 0, uid_base = 0;
  RowArray rows;
  std::string metadata;  // top-level keys except traceEvents, as a JSON object ("" for a bare array)
  // Filled after the tree is built: children of each row, as CSR over row indexes.
  std::vector<uint32_t> child_start, children;
};

// All traces loaded into one schema. Strings and args are shared across its traces.
struct EventStore {
  EventStore();
  // Unique per store in the process: what derived data (perf tables) was computed from, even when
  // a later store reuses a freed one's address.
  const uint64_t generation;
  StringPool strings;
  TextArena args;
  WideIds ids;         // the rows' Id32 fields beyond 32 bits
  RowSpace row_space;  // small traces' rows (before traces: it outlives them)
  std::vector<std::unique_ptr<LoadedTrace>> traces;
  // Rows of each kind, as global positions (uid - first uid), ascending: the views' fast path.
  std::vector<std::vector<uint32_t>> rows_of_kind;
  int64_t first_uid = 0, total_rows = 0;

  // The trace holding global row position `pos` (0 <= pos < total_rows).
  const LoadedTrace& trace_at(int64_t pos, int64_t& local) const;
  // Adds the rows of the traces pushed since the last call to rows_of_kind (a trace's rows are
  // final once pushed).
  void index_new_kinds();

 private:
  size_t kind_indexed_traces_ = 0;  // traces[0, this) are in rows_of_kind
};

}  // namespace tlsql
