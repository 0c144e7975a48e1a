#include "src/input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <isa-l/igzip_lib.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "src/output_file.h"

namespace tlsql {

void TextBuffer::resize(size_t size) {
  if (size + kPadding > capacity_) {
    size_t cap = size + kPadding + size / 8;  // chunk sizes vary a little: leave room to reuse
    // realloc keeps the content and, for a large block, moves its pages (mremap) rather than
    // copying them: a growing input window never holds its old and new buffers at once (a
    // 256 MiB value held both, twice its size, until the gzip-bomb check refused it).
    char* d = static_cast<char*>(std::realloc(data_.get(), cap));
    if (!d) throw std::bad_alloc();
    (void)data_.release();
    data_.reset(d);
    capacity_ = cap;
  }
  size_ = size;
  std::memset(data_.get() + size_, 0, kPadding);
}

namespace {

constexpr size_t kWindow = 64u << 20;    // text window
constexpr size_t kInBlock = 4u << 20;    // compressed bytes read at a time
constexpr size_t kFirstFill = 1u << 20;  // a random-access file's first read (see the constructor)

// Gzip is told by its magic, never by the file's name: its first two bytes (n of them read).
bool gzip_magic(const void* first, size_t n) {
  const auto* b = static_cast<const unsigned char*>(first);
  return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

// A FIFO opened for reading blocks open(2) until a writer appears, forever if none does: it is
// opened non-blocking instead and waited for here (Ctrl-C interrupts the wait, 60 s end it).
void wait_for_writer(int fd, const std::string& path) {
  for (int waited_ms = 0;; waited_ms += 100) {
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r < 0 && errno == EINTR) throw LoadError(fmt::format("{}: interrupted while waiting for a writer", path));
    if (r > 0) break;  // data, or a writer that came and went (POLLHUP): read() tells which
    if (waited_ms >= 60000) throw LoadError(fmt::format("{}: nothing wrote to this FIFO within 60 s", path));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

// The text bytes of the regular file open as `fd`, `size` bytes long: its size, or for gzip (by
// magic) the smallest size its trailer allows (estimated_input_bytes says why).
uint64_t text_bytes_of(int fd, uint64_t size) {
  unsigned char magic[2] = {0, 0}, trailer[4] = {0, 0, 0, 0};
  const bool gzip = size >= 18 && ::pread(fd, magic, 2, 0) == 2 && gzip_magic(magic, 2) &&
                    ::pread(fd, trailer, 4, (off_t)size - 4) == 4;
  if (!gzip) return size;
  const uint64_t isize =
      trailer[0] | (uint64_t)trailer[1] << 8 | (uint64_t)trailer[2] << 16 | (uint64_t)trailer[3] << 24;
  // The least n >= size with n = isize (mod 2^32).
  return isize >= size ? isize : isize + ((size - isize + 0xffffffffull) >> 32 << 32);
}

}  // namespace

std::optional<uint64_t> estimated_input_bytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  if (S_ISFIFO(st.st_mode)) return std::nullopt;
  if (!S_ISREG(st.st_mode)) return 0;
  const auto size = (uint64_t)st.st_size;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // (replaced by a FIFO since: no wait)
  if (fd < 0) return size;
  const uint64_t bytes = text_bytes_of(fd, size);
  ::close(fd);
  return bytes;
}

std::string read_sidecar(const std::string& path, std::string_view what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw LoadError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw LoadError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw LoadError(fmt::format("{}: cannot read: not a regular file or a pipe", path));
  auto too_big = [&](const std::string& size) {
    return LoadError(fmt::format("{}: {}more than the {} MiB tlsql reads of {} (a few KB expected)", path, size,
                                 kMetadataMaxBytes >> 20, what));
  };
  if (S_ISREG(st.st_mode)) {
    note_input(path, st.st_dev, st.st_ino);
    if ((size_t)st.st_size > kMetadataMaxBytes) throw too_big(fmt::format("{} bytes, ", st.st_size));
  }
  if (S_ISFIFO(st.st_mode)) wait_for_writer(fd, path);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // Read to one byte past the bound whatever the size said: a file may grow, a pipe has none.
  std::string text;
  char block[65536];
  for (;;) {
    ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw LoadError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    if (n == 0) break;
    text.append(block, (size_t)n);
    if (text.size() > kMetadataMaxBytes) throw too_big("");
  }
  return text;
}

struct InputSource::Inflater {
  inflate_state state;
};

InputSource::InputSource(const std::string& path, size_t max_kept, bool regular_only, TextBuffer* reuse)
    : path_(path), max_kept_(max_kept), reuse_(reuse) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw LoadError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw LoadError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw LoadError(fmt::format("{}: cannot read: is a directory", path));
  // A trace comes from a file or a pipe; a device (/dev/zero, a terminal) would be read forever.
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw LoadError(fmt::format("{}: cannot read: not a regular file or a pipe", path));
  if (regular_only && !S_ISREG(st.st_mode)) throw LoadError(fmt::format("{}: cannot read: not a regular file", path));
  if (S_ISREG(st.st_mode)) note_input(path, st.st_dev, st.st_ino);  // what no output may replace
  if (S_ISFIFO(st.st_mode))
    wait_for_writer(fd_, path);
  else
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  if (S_ISREG(st.st_mode)) {
    regular_ = true;
    file_bytes_ = (size_t)st.st_size;
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  // The first bytes tell gzip from text (a regular file's first read is small: see kFirstFill).
  // They are read into the window, where text stays; only gzip needs a block for compressed bytes
  // (a block touched and freed for every plain file cost a folder of small traces a page clear each).
  if (reuse_) buffer_ = std::move(*reuse_);
  buffer_.resize(kWindow);
  window_ = buffer_.data();
  while (avail_ < 2) {
    size_t n = read_some(buffer_.data() + avail_, std::min(kInBlock, regular_ ? kFirstFill : kInBlock) - avail_);
    if (n == 0) break;
    avail_ += n;
  }
  if (gzip_magic(buffer_.data(), avail_)) {
    gzip_ = true;
    in_.reset(new char[kInBlock]);
    std::memcpy(in_.get(), buffer_.data(), avail_);
    in_len_ = avail_;
    avail_ = 0;
    inflater_ = std::make_unique<Inflater>();
    isal_inflate_init(&inflater_->state);
    inflater_->state.crc_flag = ISAL_GZIP;
  }
  // Only the text's head is read here (what the formats' claims and the top-level members before
  // the events need), not a whole window: a regular uncompressed file's traceEvents is cut
  // speculatively and read by the parse threads (issue 51), and a format may read ahead less
  // than a window (read_ahead). Later refills fill the window.
  fill_to_ = kFirstFill;
  refill(0);
  fill_to_ = SIZE_MAX;
}

InputSource::~InputSource() {
  if (fd_ >= 0) ::close(fd_);
  // A window grown for one long value is not kept: the next load would hold all of it.
  if (reuse_ && buffer_.size() == kWindow) *reuse_ = std::move(buffer_);
}

size_t InputSource::known_text_bytes() const { return regular_ ? (size_t)text_bytes_of(fd_, file_bytes_) : 0; }

size_t InputSource::read_some(char* to, size_t n) {
  for (;;) {
    ssize_t r = ::read(fd_, to, n);
    if (r >= 0) {
      read_ += (size_t)r;
      return (size_t)r;
    }
    if (errno != EINTR) throw LoadError(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
  }
}

size_t InputSource::read_at(size_t offset, char* to, size_t n) const {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, to + got, n - got, (off_t)(offset + got));
    if (r == 0) break;
    if (r > 0) {
      got += (size_t)r;
    } else if (errno != EINTR) {
      throw LoadError(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
    }
  }
  return got;
}

void InputSource::skip_to(size_t offset) {
  if (offset <= base_ + avail_ || eof_) return;
  if (::lseek(fd_, (off_t)offset, SEEK_SET) < 0)
    throw LoadError(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
  base_ = offset, avail_ = 0, read_ = offset;
  refill(offset);
}

bool InputSource::refill(size_t keep) {
  if (eof_) return false;
  // Slide what must be kept to the front; grow the window only if it is all still needed.
  size_t kept = base_ + avail_ - std::clamp(keep, base_, base_ + avail_);
  if (kept && kept != avail_) std::memmove(buffer_.data(), buffer_.data() + (avail_ - kept), kept);
  base_ += avail_ - kept;
  avail_ = kept;
  // A single value that the scanner must keep whole (one event, one top-level member) bounds
  // memory: past max_kept_ of text it is a corrupt or hostile file (a gzip bomb).
  if (kept > max_kept_)
    throw LoadError(fmt::format(
        "{}: at byte {}: one JSON value runs over {} MiB of {}text from byte {} "
        "(corrupt or hostile {}?)",
        path_, base_ + avail_, max_kept_ >> 20, gzip_ ? "decompressed " : "", base_, gzip_ ? ".gz" : "file"));
  if (buffer_.size() - avail_ < kWindow / 4) buffer_.resize(buffer_.size() * 2);
  window_ = buffer_.data();
  size_t before = avail_;
  const size_t to = std::min({buffer_.size(), fill_to_, avail_ + std::min(read_ahead_, buffer_.size())});
  if (gzip_) {
    inflate_more(to);
  } else {
    while (avail_ < to) {
      size_t n = read_some(buffer_.data() + avail_, to - avail_);
      if (n == 0) {
        eof_ = true;
        break;
      }
      avail_ += n;
    }
  }
  std::memset(buffer_.data() + avail_, 0, std::min<size_t>(TextBuffer::kPadding, buffer_.capacity() - avail_));
  return avail_ > before;
}

void InputSource::inflate_more(size_t to) {
  inflate_state& z = inflater_->state;
  auto fill_in = [&] {
    in_pos_ = 0;
    in_len_ = read_some(in_.get(), kInBlock);
    return in_len_ > 0;
  };
  while (avail_ < to) {
    if (z.block_state == ISAL_BLOCK_FINISH) {
      // Next gzip member, if any (zero padding after the last one is tolerated).
      for (;;) {
        while (in_pos_ < in_len_ && in_[in_pos_] == 0) ++in_pos_;
        if (in_pos_ < in_len_) break;
        if (!fill_in()) {
          eof_ = true;
          return;
        }
      }
      isal_inflate_reset(&z);
      z.crc_flag = ISAL_GZIP;
    }
    if (in_pos_ == in_len_ && !fill_in())
      throw LoadError(fmt::format("{}: corrupt gzip data: the compressed stream ends early (truncated file?)", path_));
    z.next_in = reinterpret_cast<uint8_t*>(in_.get() + in_pos_);
    z.avail_in = (uint32_t)(in_len_ - in_pos_);
    z.next_out = reinterpret_cast<uint8_t*>(buffer_.data() + avail_);
    z.avail_out = (uint32_t)std::min<size_t>(to - avail_, 1u << 30);
    uint32_t out_before = z.avail_out, in_before = z.avail_in;
    int rc = isal_inflate(&z);
    in_pos_ += in_before - z.avail_in;
    avail_ += out_before - z.avail_out;
    if (rc < 0)
      throw LoadError(fmt::format("{}: corrupt gzip data near compressed byte {}: {}", path_,
                                  read_ - (in_len_ - in_pos_),
                                  rc == ISAL_INCORRECT_CHECKSUM ? "checksum mismatch" : "invalid deflate stream"));
  }
}

std::ifstream open_input_file(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) throw LoadError(fmt::format("cannot open '{}'", path));
  if (S_ISDIR(st.st_mode)) throw LoadError(fmt::format("{}: cannot read: is a directory", path));
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw LoadError(fmt::format("{}: cannot read: not a regular file or a pipe", path));
  if (S_ISREG(st.st_mode)) note_input(path, st.st_dev, st.st_ino);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw LoadError(fmt::format("cannot open '{}'", path));
  return f;
}

std::string read_input_file(const std::string& path) {
  std::ifstream f = open_input_file(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace tlsql
