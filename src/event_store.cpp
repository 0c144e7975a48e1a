#include "src/event_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>

#include "src/args_text.h"

namespace tlsql {

uint32_t StringPool::intern(std::string_view s, size_t cap) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  if (strings_.size() >= cap) return kNone;
  const std::string& stored = strings_.emplace_back(s);
  uint32_t id = (uint32_t)strings_.size() - 1;
  ids_.emplace(stored, id);
  return id;
}

namespace {

uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
uint32_t load4(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}
// A string of at most 16 bytes as two words that hold all of its bytes: its first and last 8
// (overlapping), 4, or its first, middle and last byte. With the length, they tell it from every
// other string of its length.
void short_words(const char* p, size_t n, uint64_t& a, uint64_t& b) {
  if (n >= 8) {
    a = load8(p), b = load8(p + n - 8);
  } else if (n >= 4) {
    a = load4(p), b = load4(p + n - 4);
  } else {
    a = n ? (uint64_t)(uint8_t)p[0] | (uint64_t)(uint8_t)p[n / 2] << 8 | (uint64_t)(uint8_t)p[n - 1] << 16 : 0;
    b = 0;
  }
}
bool same_bytes(const char* x, const char* y, size_t n) {
  if (n > 16) return std::memcmp(x, y, n) == 0;
  uint64_t xa, xb, ya, yb;
  short_words(x, n, xa, xb);
  short_words(y, n, ya, yb);
  return ((xa ^ ya) | (xb ^ yb)) == 0;
}

}  // namespace

uint64_t StringPool::Cache::hash(std::string_view s) {
  // Multiply-xorshift over 8-byte words (splitmix64's constants): a hash for a private table of
  // a few thousand names, not for hostile input (a collision costs a probe, never a wrong id:
  // slots compare the bytes). Most of what a trace interns (categories, args keys, short names)
  // is 16 bytes or less: two words and one 128-bit product, without a loop.
  constexpr uint64_t kMul = 0xbf58476d1ce4e5b9ull;
  const char* p = s.data();
  size_t n = s.size();
  if (n <= 16) {
    uint64_t a, b;
    short_words(p, n, a, b);
    const unsigned __int128 m = (unsigned __int128)(a ^ 0x9e3779b97f4a7c15ull ^ n) * (b ^ kMul);
    const uint64_t h = (uint64_t)m ^ (uint64_t)(m >> 64);
    return (h ^ (h >> 29)) * 0x94d049bb133111ebull;
  }
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  if (n >= 32) {  // kernel names run to hundreds of bytes: four independent lanes, 32 bytes a step
    uint64_t lane[4] = {h, h ^ 0x6a09e667f3bcc909ull, h ^ 0xbb67ae8584caa73bull, h ^ 0x3c6ef372fe94f82bull};
    for (; n >= 32; p += 32, n -= 32)
      for (int k = 0; k < 4; ++k) {
        lane[k] = (lane[k] ^ load8(p + 8 * k)) * kMul;
        lane[k] ^= lane[k] >> 31;
      }
    h = lane[0];
    for (int k = 1; k < 4; ++k) h = (h ^ lane[k]) * kMul, h ^= h >> 31;
  }
  for (; n >= 8; p += 8, n -= 8) {
    h = (h ^ load8(p)) * kMul;
    h ^= h >> 31;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * kMul;
    h ^= h >> 31;
  }
  return (h ^ (h >> 29)) * 0x94d049bb133111ebull;
}

void StringPool::Cache::insert(const Slot& s) {
  const size_t mask = slots_.size() - 1;
  size_t i = s.hash & mask;
  while (slots_[i].data) i = (i + 1) & mask;
  slots_[i] = s;
}

uint32_t StringPool::Cache::intern(std::string_view s, size_t cap) {
  const uint64_t h = hash(s);
  if (!slots_.empty()) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask; slots_[i].data; i = (i + 1) & mask) {
      const Slot& e = slots_[i];
      if (e.hash == h && e.size == s.size() && same_bytes(e.data, s.data(), s.size())) return e.id;
    }
  }
  uint32_t id = pool_.intern(s, cap);
  if (id == kNone) return kNone;
  const char* stored;
  {
    std::lock_guard<std::mutex> l(pool_.mu_);  // the deque may be growing in another thread
    stored = pool_.strings_[id].data();
  }
  if (2 * (used_ + 1) > slots_.size()) {  // grow to keep probes short
    std::vector<Slot> old(std::max<size_t>(1024, slots_.size() * 2));
    old.swap(slots_);
    for (const Slot& e : old)
      if (e.data) insert(e);
  }
  insert({h, stored, (uint32_t)s.size(), id});
  ++used_;
  return id;
}

namespace {
// Fibonacci hashing, the product's top `bits` bits: they depend on every bit of the value, so ids
// alike in their low bits (counters scoped by a process in their high ones) spread evenly.
size_t wide_slot(int64_t value, int bits) { return (size_t)(((uint64_t)value * 0x9E3779B97F4A7C15ull) >> (64 - bits)); }
}  // namespace

Id32 WideIds::id(int64_t value) {
  if (value == kNull) return {};
  if (value >= kLow && value <= INT32_MAX) return {(int32_t)value};
  std::lock_guard<std::mutex> l(mu_);
  if (2 * (values_.size() + 1) > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  size_t at = wide_slot(value, slot_bits_);
  for (; slots_[at]; at = (at + 1) & mask)
    if (values_[slots_[at] - 1] == value) return {(int32_t)(INT32_MIN + (int64_t)slots_[at])};
  if (values_.size() >= (size_t)(kLow - (INT32_MIN + 1)))
    throw std::length_error("over 2^30 distinct ids (correlation, pid, ...) beyond 32 bits");
  values_.push_back(value);
  slots_[at] = (uint32_t)values_.size();
  return {(int32_t)(INT32_MIN + (int64_t)values_.size())};
}

void WideIds::grow() {
  // (Made aside and swapped in: a bad_alloc leaves the table as it was, for the session's next load.)
  const int bits = slots_.empty() ? 10 : slot_bits_ + 1;
  std::vector<uint32_t> slots(size_t{1} << bits, 0);
  const size_t mask = slots.size() - 1;
  for (size_t i = 0; i < values_.size(); ++i) {
    size_t at = wide_slot(values_[i], bits);
    while (slots[at]) at = (at + 1) & mask;
    slots[at] = (uint32_t)(i + 1);
  }
  slots_.swap(slots);
  slot_bits_ = bits;
}

// An arena block is written once, front to back, and kept: on 4 KiB pages each of its pages cost a
// fault (~10-15 us on a VM), and a block from malloc (its own mmap, placed anywhere) got 2 MiB
// pages only for the whole 2 MiB ranges inside it, seven of a 16 MB block's eight. Mapped here on a
// 2 MiB boundary, the whole block takes 2 MiB pages where the system gives them on request
// (`madvise`), when the process asks malloc for them (use_huge_pages: repl/main.cpp decides, by the
// input's size, since a 2 MiB page a writer is a small trace's largest cost); else, and under
// AddressSanitizer (where reads past a heap block are caught), a block is a heap allocation.
std::atomic<bool> TextArena::huge_pages_{false};

namespace {

constexpr size_t kHuge = 2u << 20;

// `bytes` (a multiple of kHuge) mapped on a 2 MiB boundary, asking for 2 MiB pages. (Not
// MAP_NORESERVE, unlike RowArray's own mappings: the kernel would merge one with a trace's rows
// mapped beside it, and smaps, where shell/huge_pages looks for an args block, would show one
// mapping.)
char* map_huge(size_t bytes) {
  void* p = ::mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // (the mapping's ends outside the 2 MiB boundaries go back at once)
  char* const start = static_cast<char*>(p);
  char* const aligned =
      reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(start) + kHuge - 1) & ~uintptr_t(kHuge - 1));
  if (aligned > start) ::munmap(start, (size_t)(aligned - start));
  ::munmap(aligned + bytes, (size_t)(start + kHuge - aligned));
  ::madvise(aligned, bytes, MADV_HUGEPAGE);
  return aligned;
}

}  // namespace

TextArena::Block TextArena::new_block(size_t bytes, bool huge_pages) {
#if defined(__SANITIZE_ADDRESS__)
  huge_pages = false;
#endif
  if (!huge_pages || bytes < kHuge) return Block(new char[bytes], Unmap{0});  // (an arena's first blocks)
  bytes = (bytes + kHuge - 1) & ~(kHuge - 1);
  return Block(map_huge(bytes), Unmap{bytes});
}

void TextArena::Unmap::operator()(char* p) const {
  if (!bytes)
    delete[] p;  // (a heap block)
  else
    ::munmap(p, bytes);
}

TextArena::Writer::Writer(TextArena& arena) : arena_(arena), keys_(arena.keys_) {
  std::lock_guard<std::mutex> l(arena_.mu_);
  if (arena_.unfilled_.empty()) return;
  const Unfilled u = arena_.unfilled_.back();
  arena_.unfilled_.pop_back();
  data_ = u.data, size_ = u.size, used_ = u.used, block_ = u.block;
}

TextArena::Writer::~Writer() {
  if (!data_ || used_ + kSlack >= size_) return;
  std::lock_guard<std::mutex> l(arena_.mu_);
  arena_.unfilled_.push_back({data_, size_, used_, block_});
}

uint64_t TextArena::Writer::add(std::string_view s) {
  if (!data_ || used_ + s.size() + kSlack > size_) {
    // The arena's nth block is 64 KiB << n, up to 16 MB, taken under the lock (only writers that
    // need a new block wait on it). The writer's state changes only once the block is the
    // arena's: a writer left half-changed by a failed allocation would leave a block it does not
    // hold to the next writer.
    std::lock_guard<std::mutex> l(arena_.mu_);
    const size_t size = std::max(kFirstBlock << std::min<size_t>(arena_.blocks_.size(), kDoublings), s.size() + kSlack);
    arena_.blocks_.push_back(new_block(size, huge_pages_));
    data_ = arena_.blocks_.back().get();
    size_ = size;
    block_ = arena_.blocks_.size() - 1;
    used_ = 0;
  }
  uint64_t handle = (block_ << 32) | used_;
  std::memcpy(data_ + used_, s.data(), s.size());
  used_ += s.size();
  std::memset(data_ + used_, ' ', std::min(kSlack, size_ - used_));  // readable slack for in-place parsing
  return handle;
}

uint64_t TextArena::Writer::add_args(std::string_view json, uint32_t& len, bool& keyed) {
  encoded_.clear();
  keyed = args_text::encode(json, keys_, encoded_);
  const std::string_view stored = keyed ? std::string_view(encoded_) : json;
  len = (uint32_t)stored.size();
  return add(stored);
}

bool TextArena::Writer::add_raw_args(std::string_view raw, uint64_t& handle, uint32_t& len) {
  encoded_.clear();
  if (!args_text::minify_encode(raw, keys_, encoded_)) return false;
  len = (uint32_t)encoded_.size();
  handle = add(encoded_);
  return true;
}

std::string_view args_of(const TextArena& arena, const EventRec& e, std::string& buf) {
  if (!e.is(EventRec::has_args)) return {};
  const std::string_view stored = arena.get(e.args, e.args_len);
  return e.is(EventRec::keyed_args) ? args_text::decode(stored, arena.keys(), buf) : stored;
}

RowSpace::~RowSpace() {
  for (char* b : blocks_) ::munmap(b, kBlock);
}

char* RowSpace::take(size_t bytes) {
  if (bytes > kLargest) return nullptr;
  if ((size_t)(end_ - next_) < bytes) {  // (the rest of the block is left: never touched, never resident)
    blocks_.reserve(blocks_.size() + 1);
    blocks_.push_back(next_ = map_huge(kBlock));
    end_ = next_ + kBlock;
  }
  char* const p = next_;
  next_ += bytes;
  return p;
}

bool RowSpace::resize_last(const char* end, char* new_end) {
  if (end != next_ || new_end > end_) return false;
  next_ = new_end;
  return true;
}

namespace {
// The bytes of a RowSpace range holding `rows` rows: whole 64-byte lines (RowSpace::take's unit).
size_t range_bytes(size_t rows) { return (rows * sizeof(EventRec) + 63) & ~size_t{63}; }
}  // namespace

RowArray::~RowArray() {
  if (in_space_)
    space_->resize_last(reinterpret_cast<char*>(data_) + bytes_, reinterpret_cast<char*>(data_));
  else if (data_)
    ::munmap(data_, bytes_);
}

void RowArray::reserve(size_t n) {
  if (n <= capacity_) return;
  char* const at = reinterpret_cast<char*>(data_);
  if (space_ && (!data_ || in_space_)) {  // a new range, or the last one grown in place
    const size_t bytes = range_bytes(n);
    if (char* p = !data_ ? space_->take(bytes) : space_->resize_last(at + bytes_, at + bytes) ? at : nullptr) {
      data_ = reinterpret_cast<EventRec*>(p);
      capacity_ = n, bytes_ = bytes, in_space_ = true;
      return;
    }
  }
  size_t bytes = (n * sizeof(EventRec) + 4095) & ~(size_t)4095;
  // Parser threads fill slots out of order and size_ is set only at the end, so growth must keep
  // every page of the old mapping, not the first size_ rows: mremap moves the pages themselves (a
  // range of a RowSpace is copied whole to a mapping of its own, and given back).
  void* p = data_ && !in_space_
                ? ::mremap(data_, bytes_, bytes, MREMAP_MAYMOVE)
                : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // 2 MiB pages where the system gives them on request: the rows are written once, in order, and
  // 4 KiB page faults cost more than the writing (a hint; mremap keeps it for the grown mapping).
  if ((!data_ || in_space_) && huge_pages_) ::madvise(p, bytes, MADV_HUGEPAGE);
  if (in_space_) {
    std::memcpy(p, at, bytes_);
    space_->resize_last(at + bytes_, at);
    in_space_ = false;
  }
  data_ = static_cast<EventRec*>(p);
  capacity_ = n;
  bytes_ = bytes;
}

void RowArray::fit() {
  char* const at = reinterpret_cast<char*>(data_);
  const size_t bytes = range_bytes(size_);
  if (in_space_ && bytes < bytes_ && space_->resize_last(at + bytes_, at + bytes))
    capacity_ = bytes / sizeof(EventRec), bytes_ = bytes;
}

const LoadedTrace& EventStore::trace_at(int64_t pos, int64_t& local) const {
  // Binary: a folder of hundreds of traces asks this for every uid a join looks up, and a walk
  // over the traces from the back made each lookup O(traces).
  const int64_t uid = first_uid + pos;
  auto after = std::upper_bound(traces.begin(), traces.end(), uid,
                                [](int64_t u, const std::unique_ptr<LoadedTrace>& t) { return u < t->uid_base; });
  if (after == traces.begin()) {
    local = pos;
    return *traces.front();
  }
  const LoadedTrace& t = **(after - 1);
  local = uid - t.uid_base;
  return t;
}

EventStore::EventStore()
    : generation([] {
        static std::atomic<uint64_t> next{1};
        return next++;
      }()) {}

void EventStore::index_new_kinds() {
  // Only the traces added since the last call: each trace's positions follow every earlier one's
  // (uid_base is the next free uid), so appending keeps the lists ascending. Indexing every trace
  // again on each load made a folder of N traces cost N^2/2 trace walks (400 traces of 7,000
  // rows: 2.4 s of a 7.5 s load).
  rows_of_kind.resize(kKindCount);
  // A list is grown once a load, to its final size: grown by push_back, a GB trace's lists took 26
  // allocations (46 MB, each a fresh mapping, its pages faulted in and the list so far copied).
  std::vector<size_t> adds(kKindCount, 0);
  for (size_t k = kind_indexed_traces_; k < traces.size(); ++k)
    for (const EventRec& e : traces[k]->rows) ++adds[(size_t)e.kind];
  for (size_t kind = 0; kind < kKindCount; ++kind) {
    std::vector<uint32_t>& list = rows_of_kind[kind];
    // (geometric past the first trace: a folder's loads each add a little)
    if (const size_t need = list.size() + adds[kind]; need > list.capacity())
      list.reserve(std::max(need, list.capacity() + list.capacity() / 2));
  }
  for (; kind_indexed_traces_ < traces.size(); ++kind_indexed_traces_) {
    const LoadedTrace& t = *traces[kind_indexed_traces_];
    for (size_t i = 0; i < t.rows.size(); ++i)
      rows_of_kind[(size_t)t.rows[i].kind].push_back((uint32_t)(t.uid_base - first_uid + (int64_t)i));
  }
}

}  // namespace tlsql
