#include "input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <isa-l/igzip_lib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tlsql {

void TextBuffer::resize(size_t size) {
  if (size + kPadding > capacity_) {
    size_t cap = size + kPadding + size / 8;  // chunk sizes vary a little: leave room to reuse
    std::unique_ptr<char[]> d(new char[cap]);
    if (size_) std::memcpy(d.get(), data_.get(), std::min(size_, size));
    data_ = std::move(d);
    capacity_ = cap;
  }
  size_ = size;
  std::memset(data_.get() + size_, 0, kPadding);
}

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kWindow = 64u << 20;
constexpr size_t kMaxKept = 256u << 20;  // the most of a .gz kept in memory for one value

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

}  // namespace

struct InputSource::Inflater {
  inflate_state state;
  size_t in_pos = 0;  // compressed bytes consumed
};

InputSource::InputSource(const std::string& path) : path_(path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw LoadError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw LoadError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw LoadError(fmt::format("{}: cannot read: is a directory", path));
  file_bytes_ = (size_t)st.st_size;
  if (file_bytes_ == 0) return;
  // Mapped with a spare zero page after the end, so reads a little past it (SIMD loops) are safe.
  map_len_ = (file_bytes_ + 2 * kPage) & ~(kPage - 1);
  void* anon = ::mmap(nullptr, map_len_, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (anon == MAP_FAILED) throw LoadError(fmt::format("{}: out of memory mapping {} bytes", path, file_bytes_));
  map_ = static_cast<char*>(anon);
  if (::mmap(map_, file_bytes_, PROT_READ, MAP_PRIVATE | MAP_FIXED, f.fd, 0) == MAP_FAILED) {
    ::munmap(map_, map_len_);
    map_ = nullptr;
    throw LoadError(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
  }
  ::madvise(map_, file_bytes_, MADV_SEQUENTIAL);
  if (file_bytes_ >= 2 && (unsigned char)map_[0] == 0x1f && (unsigned char)map_[1] == 0x8b) {
    gzip_ = true;
    eof_ = false;
    inflater_ = std::make_unique<Inflater>();
    isal_inflate_init(&inflater_->state);
    inflater_->state.crc_flag = ISAL_GZIP;
    buffer_.resize(kWindow);
    window_ = buffer_.data();
    refill(0);
    return;
  }
  window_ = map_;
  avail_ = file_bytes_;
}

InputSource::~InputSource() {
  if (map_) ::munmap(map_, map_len_);
}

bool InputSource::refill(size_t keep) {
  if (!gzip_ || eof_) return false;
  // Slide what must be kept to the front; grow the window only if it is all still needed.
  size_t kept = base_ + avail_ - std::clamp(keep, base_, base_ + avail_);
  if (kept) std::memmove(buffer_.data(), buffer_.data() + (avail_ - kept), kept);
  base_ += avail_ - kept;
  avail_ = kept;
  // A single value that the scanner must keep whole (one event, one top-level member) bounds
  // memory: past kMaxKept of decompressed text it is a corrupt or hostile file (a gzip bomb).
  if (kept > kMaxKept)
    throw LoadError(
        fmt::format("{}: at byte {}: one JSON value runs over {} MiB of decompressed text from byte {} "
                    "(corrupt or hostile .gz?)",
                    path_, base_ + avail_, kMaxKept >> 20, base_));
  if (buffer_.size() - avail_ < kWindow / 4) buffer_.resize(buffer_.size() * 2);
  window_ = buffer_.data();
  inflate_state& z = inflater_->state;
  size_t before = avail_;
  while (avail_ < buffer_.size()) {
    if (z.block_state == ISAL_BLOCK_FINISH) {
      // Next gzip member, if any (zero padding after the last one is tolerated).
      while (inflater_->in_pos < file_bytes_ && map_[inflater_->in_pos] == 0) ++inflater_->in_pos;
      if (inflater_->in_pos >= file_bytes_) {
        eof_ = true;
        break;
      }
      isal_inflate_reset(&z);
      z.crc_flag = ISAL_GZIP;
    }
    size_t in_left = file_bytes_ - inflater_->in_pos;
    z.next_in = reinterpret_cast<uint8_t*>(map_ + inflater_->in_pos);
    z.avail_in = (uint32_t)std::min<size_t>(in_left, 1u << 30);
    z.next_out = reinterpret_cast<uint8_t*>(buffer_.data() + avail_);
    z.avail_out = (uint32_t)std::min<size_t>(buffer_.size() - avail_, 1u << 30);
    uint32_t out_before = z.avail_out, in_before = z.avail_in;
    int rc = isal_inflate(&z);
    inflater_->in_pos += in_before - z.avail_in;
    avail_ += out_before - z.avail_out;
    if (rc < 0)
      throw LoadError(fmt::format("{}: corrupt gzip data near compressed byte {}: {}", path_, inflater_->in_pos,
                                  rc == ISAL_INCORRECT_CHECKSUM ? "checksum mismatch" : "invalid deflate stream"));
    if (z.block_state != ISAL_BLOCK_FINISH && z.avail_in == 0 && inflater_->in_pos >= file_bytes_)
      throw LoadError(fmt::format("{}: corrupt gzip data: the compressed stream ends early (truncated file?)", path_));
  }
  std::memset(buffer_.data() + avail_, 0, std::min<size_t>(TextBuffer::kPadding, buffer_.capacity() - avail_));
  return avail_ > before;
}

size_t InputSource::progress() const { return gzip_ ? inflater_->in_pos : std::min(released_ + kPage, file_bytes_); }

void InputSource::release_before(size_t offset) {
  if (gzip_ || !map_) return;
  size_t end = std::min(offset, file_bytes_) & ~(kPage - 1);
  if (end > released_) {
    ::madvise(map_ + released_, end - released_, MADV_DONTNEED);
    released_ = end;
  }
}

}  // namespace tlsql
