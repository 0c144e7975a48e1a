#include "src/btree_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tlsql {

namespace {

constexpr uint8_t kTableLeaf = 0x0d, kTableInterior = 0x05, kIndexLeaf = 0x0a, kIndexInterior = 0x02;
// Pages are written in runs of this much, one run encoded while the last is written. 256 KiB: the
// two runs' buffers are part of a save's peak memory, which is an Nsight export's (a 24 MB one
// saved to 73 MiB peaked 2.1 MiB lower than at 1 MiB runs, medians of 9; 16 MB at 8 MB runs), and
// a larger pwrite is no faster.
constexpr size_t kFlushBytes = 1 << 18;

uint32_t get16(const uint8_t* p) { return (uint32_t)p[0] << 8 | p[1]; }
uint32_t get32(const uint8_t* p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
void put16(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}
void put32(uint8_t* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = (uint8_t)v;
}

int varint_len(uint64_t v) {
  int n = 1;
  if (v >> 56) return 9;
  while (v >>= 7) ++n;
  return n;
}
// SQLite's varint: big-endian 7-bit groups, the ninth byte (if any) holds 8 bits. Returns the
// byte after it.
uint8_t* put_long_varint(uint8_t* p, uint64_t v) {
  const int n = varint_len(v);
  if (n == 9) {
    p[8] = (uint8_t)v;
    v >>= 8;
    for (int i = 7; i >= 0; --i, v >>= 7) p[i] = (uint8_t)((v & 0x7f) | 0x80);
    return p + 9;
  }
  for (int i = n - 1; i >= 0; --i, v >>= 7) p[i] = (uint8_t)((v & 0x7f) | (i == n - 1 ? 0 : 0x80));
  return p + n;
}
// (Most varints a save writes, serial types and small sizes, are one byte: that case inlined.)
inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  if (v <= 0x7f) {
    *p = (uint8_t)v;
    return p + 1;
  }
  return put_long_varint(p, v);
}
void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  uint8_t b[9];
  out.insert(out.end(), b, put_varint(b, v));
}

// Serial type and body size of a value (https://www.sqlite.org/fileformat2.html#record_format).
std::pair<uint64_t, uint32_t> serial_type(const RecordValue& v, bool format4) {
  switch (v.type) {
    case RecordValue::null: return {0, 0};
    case RecordValue::text: return {2 * (uint64_t)v.len + 13, v.len};
    case RecordValue::integer: break;
  }
  if (format4 && (v.i == 0 || v.i == 1)) return {8 + (uint64_t)v.i, 0};
  uint64_t u = v.i < 0 ? ~(uint64_t)v.i : (uint64_t)v.i;
  if (u <= 127) return {1, 1};
  if (u <= 32767) return {2, 2};
  if (u <= 8388607) return {3, 3};
  if (u <= 2147483647) return {4, 4};
  if (u <= 0x7fffffffffffull) return {5, 6};
  return {6, 8};
}

}  // namespace

uint64_t BtreeFile::Record::plan(std::span<const RecordValue> values, bool format4) {
  types_.resize(values.size());
  uint64_t header = 0, body = 0;
  for (size_t c = 0; c < values.size(); ++c) {
    const auto [type, size] = serial_type(values[c], format4);
    types_[c] = {type, size};
    header += type <= 0x7f ? 1 : varint_len(type);
    body += size;
  }
  const uint64_t types = header;
  header = types + 1;  // the header's size counts its own varint
  while (types + varint_len(header) != header) header = types + varint_len(header);
  header_ = header;
  return header + body;
}

void BtreeFile::Record::write(uint8_t* out, std::span<const RecordValue> values) const {
  out = put_varint(out, header_);
  for (auto [type, size] : types_) out = put_varint(out, type);
  for (size_t c = 0; c < values.size(); ++c) {
    const RecordValue& v = values[c];
    const uint32_t size = types_[c].second;
    if (v.type == RecordValue::text) {
      std::memcpy(out, v.s, size);
    } else if constexpr (std::endian::native == std::endian::little) {  // the big-endian value's last `size` bytes
      const uint64_t be = __builtin_bswap64((uint64_t)v.i);
      const uint8_t* b = (const uint8_t*)&be;
      switch (size) {  // (each a fixed-size copy, not a call)
        case 1: *out = b[7]; break;
        case 2: std::memcpy(out, b + 6, 2); break;
        case 3: std::memcpy(out, b + 5, 3); break;
        case 4: std::memcpy(out, b + 4, 4); break;
        case 6: std::memcpy(out, b + 2, 6); break;
        case 8: std::memcpy(out, b, 8); break;
      }
    } else {
      for (uint32_t i = 0; i < size; ++i) out[i] = (uint8_t)((uint64_t)v.i >> (8 * (size - 1 - i)));
    }
    out += size;
  }
}

namespace {

// A b-tree page under construction: header, cell pointers growing up, cells growing down.
struct Page {
  std::vector<uint8_t>& bytes;
  uint32_t& cells;
  uint32_t& content;
  uint32_t header;  // 8 for leaves, 12 for interior pages

  static void init(std::vector<uint8_t>& b, uint32_t size, uint8_t type, uint32_t& cells, uint32_t& content) {
    b.resize(size);
    std::memset(b.data(), 0, 12);  // the rest is zeroed when sealed
    b[0] = type;
    cells = 0;
    content = size;
  }
  bool fits(size_t cell) const { return header + 2 * (cells + 1) + cell <= content; }
  uint8_t* alloc(size_t n) {  // room for a cell of n bytes, last in the pointer array
    content -= (uint32_t)n;
    put16(bytes.data() + header + 2 * cells, content);
    ++cells;
    return bytes.data() + content;
  }
  void add(const uint8_t* cell, size_t n) { std::memcpy(alloc(n), cell, n); }
  void seal() {
    const uint32_t used = header + 2 * cells;
    std::memset(bytes.data() + used, 0, content - used);  // unused space, not an earlier page's bytes
    put16(bytes.data() + 3, cells);
    put16(bytes.data() + 5, content & 0xffff);  // 65536 (an empty 64 KiB page) is written as 0
  }
};

// Splits an interior level's children into pages: [first, last] children per page, each page
// holding a cell for every child but its last (the right-most pointer). `cell_size(i)` is the
// size of child i's cell. No page is left with only a right-most pointer.
std::vector<std::pair<size_t, size_t>> group_children(size_t n, uint32_t page_size,
                                                      const std::function<size_t(size_t)>& cell_size) {
  std::vector<std::pair<size_t, size_t>> groups;
  size_t first = 0, used = 12;
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 == n) {
      groups.push_back({first, i});
      break;
    }
    size_t c = cell_size(i) + 2;
    if (used + c > page_size) {  // child i becomes this page's right-most pointer
      groups.push_back({first, i});
      first = i + 1, used = 12;
    } else {
      used += c;
    }
  }
  if (groups.size() > 1 && groups.back().first == groups.back().second) {
    // The last page would hold one child and no cell: move the previous page's last child over.
    --groups[groups.size() - 2].second;
    --groups.back().first;
  }
  return groups;
}

}  // namespace

int compare_records(std::span<const RecordValue> a, std::span<const RecordValue> b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const RecordValue &x = a[i], &y = b[i];
    if (x.type != y.type) return x.type < y.type ? -1 : 1;
    if (x.type == RecordValue::integer && x.i != y.i) return x.i < y.i ? -1 : 1;
    if (x.type == RecordValue::text) {
      int c = std::memcmp(x.s, y.s, std::min(x.len, y.len));
      if (c || x.len != y.len) return c ? c : x.len < y.len ? -1 : 1;
    }
  }
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}

BtreeFile::BtreeFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  header_.resize(100);
  if (::pread(fd_, header_.data(), 100, 0) != 100 || std::memcmp(header_.data(), "SQLite format 3", 16) != 0)
    throw std::runtime_error(fmt::format("{}: not an SQLite database", path));
  page_size_ = get16(&header_[16]) == 1 ? 65536 : get16(&header_[16]);
  format4_ = get32(&header_[44]) >= 4;  // schema format 4 stores integers 0 and 1 in the header alone
  // Reserved bytes change every local-payload limit; auto-vacuum needs pointer-map pages; other
  // text encodings would need the text re-encoded.
  if (header_[20] != 0 || get32(&header_[52]) != 0 || get32(&header_[56]) != 1)
    throw std::runtime_error(
        fmt::format("{}: the database has reserved page bytes, auto-vacuum or a UTF-16 encoding", path));
  off_t size = ::lseek(fd_, 0, SEEK_END);
  pages_ = get32(&header_[24]) == get32(&header_[92]) ? get32(&header_[28]) : (uint32_t)(size / page_size_);
  flushed_ = pages_;
}

BtreeFile::~BtreeFile() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();  // (after the run it holds, if any)
  if (fd_ >= 0) ::close(fd_);
}

void BtreeFile::write_page(uint32_t pgno, const uint8_t* page) {
  if (::pwrite(fd_, page, page_size_, (off_t)(pgno - 1) * page_size_) != (ssize_t)page_size_)
    throw std::runtime_error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
}

uint32_t BtreeFile::append(const uint8_t* page) {
  if (pages_ == UINT32_MAX - 1) throw std::runtime_error(fmt::format("{}: more pages than SQLite allows", path_));
  buf_.insert(buf_.end(), page, page + page_size_);
  if (buf_.size() >= kFlushBytes) flush();
  return ++pages_;
}

void BtreeFile::wait_written() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !busy_; });
  if (!error_.empty()) throw std::runtime_error(error_);
}

void BtreeFile::flush() {
  wait_written();
  std::swap(buf_, writing_);
  buf_.clear();
  writing_at_ = (off_t)flushed_ * page_size_;
  flushed_ += (uint32_t)(writing_.size() / page_size_);
  if (!writer_.joinable()) writer_ = std::thread([this] { write_runs(); });
  {
    std::lock_guard lock(mu_);
    busy_ = true;
  }
  cv_.notify_all();
}

void BtreeFile::write_runs() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return busy_ || stop_; });
    if (!busy_) return;  // stopped, nothing handed over
    lock.unlock();
    std::string error;
    try {  // (nothing may leave this thread: an exception here would end the process)
      for (size_t done = 0; done < writing_.size();) {
        const ssize_t n = ::pwrite(fd_, writing_.data() + done, writing_.size() - done, writing_at_ + (off_t)done);
        if (n <= 0) {
          error = fmt::format("{}: cannot write: {}", path_, n < 0 ? std::strerror(errno) : "nothing written");
          break;
        }
        done += (size_t)n;
      }
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "cannot write";
    }
    lock.lock();
    if (error_.empty()) error_ = std::move(error);
    busy_ = false;
    cv_.notify_all();
  }
}

void BtreeFile::finish() {
  flush();
  wait_written();
  put32(&header_[24], get32(&header_[24]) + 1);  // change counter; the page count is valid for it
  std::memcpy(&header_[92], &header_[24], 4);
  put32(&header_[28], pages_);
  if (::pwrite(fd_, header_.data(), 100, 0) != 100 || ::close(fd_) != 0) {
    fd_ = -1;
    throw std::runtime_error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
  }
  fd_ = -1;
}

void BtreeFile::payload_cell(std::vector<uint8_t>& cell, const std::vector<uint8_t>& payload, bool table_leaf) {
  const uint64_t u = page_size_, p = payload.size();
  const uint64_t max_local = table_leaf ? u - 35 : max_index_local();
  if (p <= max_local) {
    cell.insert(cell.end(), payload.begin(), payload.end());
    return;
  }
  const uint64_t min_local = (u - 12) * 32 / 255 - 23;
  uint64_t local = min_local + (p - min_local) % (u - 4);
  if (local > max_local) local = min_local;
  cell.insert(cell.end(), payload.begin(), payload.begin() + (ptrdiff_t)local);
  uint8_t first[4];
  put32(first, pages_ + 1);  // overflow pages are appended next, consecutively
  cell.insert(cell.end(), first, first + 4);
  std::vector<uint8_t> page(page_size_);
  for (uint64_t at = local; at < p; at += u - 4) {
    uint64_t n = std::min(u - 4, p - at);
    std::memset(page.data(), 0, page_size_);
    put32(page.data(), at + n < p ? pages_ + 2 : 0);
    std::memcpy(page.data() + 4, payload.data() + at, n);
    append(page.data());
  }
}

BtreeFile::Table::Table(BtreeFile& file, uint32_t root) : f_(file), root_(root) {
  Page::init(leaf_, f_.page_size_, kTableLeaf, cells_, content_);
}

void BtreeFile::Table::new_leaf() {
  Page{leaf_, cells_, content_, 8}.seal();
  leaves_.push_back({f_.append(leaf_.data()), last_rowid_});
  Page::init(leaf_, f_.page_size_, kTableLeaf, cells_, content_);
}

void BtreeFile::Table::add(int64_t rowid, std::span<const RecordValue> columns) {
  if (any_ && rowid <= last_rowid_)
    throw std::logic_error(fmt::format("btree writer: rowid {} after {}", rowid, last_rowid_));
  const uint64_t size = record_.plan(columns, f_.format4_);
  Page page{leaf_, cells_, content_, 8};
  if (size <= f_.page_size_ - 35) {  // fits a leaf (the usual case): encoded in place
    const size_t n = varint_len(size) + varint_len((uint64_t)rowid) + size;
    if (!page.fits(n)) new_leaf();
    uint8_t* cell = put_varint(put_varint(page.alloc(n), size), (uint64_t)rowid);
    record_.write(cell, columns);
  } else {
    bytes_.resize(size);
    record_.write(bytes_.data(), columns);
    cell_.clear();
    put_varint(cell_, size);
    put_varint(cell_, (uint64_t)rowid);
    f_.payload_cell(cell_, bytes_, true);
    if (!page.fits(cell_.size())) new_leaf();
    page.add(cell_.data(), cell_.size());
  }
  last_rowid_ = rowid;
  any_ = true;
}

void BtreeFile::Table::finish() {
  Page{leaf_, cells_, content_, 8}.seal();
  if (leaves_.empty()) return f_.write_page(root_, leaf_.data());
  leaves_.push_back({f_.append(leaf_.data()), last_rowid_});
  // Interior levels, bottom-up: a cell per child (page, largest rowid below it) but the last.
  std::vector<std::pair<uint32_t, int64_t>> level = std::move(leaves_);
  for (;;) {
    auto groups = group_children(level.size(), f_.page_size_,
                                 [&](size_t i) { return 4 + (size_t)varint_len((uint64_t)level[i].second); });
    std::vector<uint32_t> pages = f_.interior_level(
        kTableInterior, root_, groups, [&](size_t i) { return level[i].first; },
        [&](size_t i, std::vector<uint8_t>& cell) { put_varint(cell, (uint64_t)level[i].second); });
    if (pages.empty()) return;
    std::vector<std::pair<uint32_t, int64_t>> up;
    for (size_t g = 0; g < groups.size(); ++g) up.push_back({pages[g], level[groups[g].second].second});
    level = std::move(up);
  }
}

std::vector<uint32_t> BtreeFile::interior_level(uint8_t type, uint32_t root,
                                                const std::vector<std::pair<size_t, size_t>>& groups,
                                                const std::function<uint32_t(size_t)>& child,
                                                const std::function<void(size_t, std::vector<uint8_t>&)>& tail) {
  std::vector<uint32_t> pages;
  std::vector<uint8_t> bytes, cell;
  uint32_t cells, content;
  for (auto [first, last] : groups) {
    Page::init(bytes, page_size_, type, cells, content);
    Page page{bytes, cells, content, 12};
    for (size_t i = first; i < last; ++i) {
      cell.assign(4, 0);
      put32(cell.data(), child(i));
      tail(i, cell);
      page.add(cell.data(), cell.size());
    }
    put32(bytes.data() + 8, child(last));
    page.seal();
    if (groups.size() == 1) {
      write_page(root, bytes.data());
      return {};
    }
    pages.push_back(append(bytes.data()));
  }
  return pages;
}

BtreeFile::Index::Index(BtreeFile& file, uint32_t root) : f_(file), root_(root) {
  Page::init(leaf_, f_.page_size_, kIndexLeaf, cells_, content_);
}

void BtreeFile::Index::add(std::span<const RecordValue> entry) {
  if (any_ && compare_records(last_, entry) >= 0) throw std::logic_error("btree writer: index entries out of order");
  last_.assign(entry.begin(), entry.end());
  any_ = true;
  const uint64_t size = record_.plan(entry, f_.format4_);
  Page page{leaf_, cells_, content_, 8};
  const size_t n = varint_len(size) + size;
  if (size <= f_.max_index_local() && page.fits(n)) {  // the usual case: encoded in place
    record_.write(put_varint(page.alloc(n), size), entry);
    return;
  }
  bytes_.resize(size);
  record_.write(bytes_.data(), entry);
  cell_.clear();
  put_varint(cell_, size);
  f_.payload_cell(cell_, bytes_, false);
  if (page.fits(cell_.size())) return page.add(cell_.data(), cell_.size());
  // A full leaf: this entry goes up, between it and the next leaf (an index b-tree keeps each
  // entry once, interior pages included).
  page.seal();
  children_.push_back(f_.append(leaf_.data()));
  seps_.push_back(cell_);
  Page::init(leaf_, f_.page_size_, kIndexLeaf, cells_, content_);
}

void BtreeFile::Index::finish() {
  Page leaf{leaf_, cells_, content_, 8};
  if (cells_ == 0 && !seps_.empty()) {  // the last entry went up with nothing after it: bring it back
    leaf.add(seps_.back().data(), seps_.back().size());
    seps_.pop_back();
  }
  leaf.seal();
  if (children_.empty()) return f_.write_page(root_, leaf_.data());
  children_.push_back(f_.append(leaf_.data()));
  std::vector<uint32_t> level = std::move(children_);
  std::vector<std::vector<uint8_t>> seps = std::move(seps_);
  for (;;) {
    auto groups = group_children(level.size(), f_.page_size_, [&](size_t i) { return 4 + seps[i].size(); });
    std::vector<uint32_t> pages = f_.interior_level(
        kIndexInterior, root_, groups, [&](size_t i) { return level[i]; },
        [&](size_t i, std::vector<uint8_t>& cell) { cell.insert(cell.end(), seps[i].begin(), seps[i].end()); });
    if (pages.empty()) return;
    // The entry after each page's last child goes up, between that page and the next.
    std::vector<std::vector<uint8_t>> up_seps;
    for (size_t g = 0; g + 1 < groups.size(); ++g) up_seps.push_back(std::move(seps[groups[g].second]));
    level = std::move(pages);
    seps = std::move(up_seps);
  }
}

}  // namespace tlsql
