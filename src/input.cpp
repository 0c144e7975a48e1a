#include "input.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

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

char* map_anonymous(size_t len) {
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

}  // namespace

InputSource::InputSource(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw LoadError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw LoadError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw LoadError(fmt::format("{}: cannot read: is a directory", path));
  file_bytes_ = (size_t)st.st_size;
  if (file_bytes_ == 0) return;
  // The file is mapped with one spare page so reads a little past the end (SIMD loops) are safe.
  map_len_ = (file_bytes_ + 2 * kPage) & ~(kPage - 1);
  map_ = map_anonymous(map_len_);
  if (!map_) throw LoadError(fmt::format("{}: out of memory mapping {} bytes", path, file_bytes_));
  if (::mmap(map_, file_bytes_, PROT_READ, MAP_PRIVATE | MAP_FIXED, f.fd, 0) == MAP_FAILED)
    throw LoadError(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
  ::madvise(map_, file_bytes_, MADV_SEQUENTIAL);
  data_ = map_;
  size_ = file_bytes_;
  if (size_ < 2 || (unsigned char)data_[0] != 0x1f || (unsigned char)data_[1] != 0x8b) return;

  // gzip: inflate every member with libdeflate (about twice zlib's speed). The trailer's ISIZE is
  // the size mod 2^32, so larger outputs are found by trying ISIZE + k * 4 GiB.
  gzip_ = true;
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  const unsigned char* in = (const unsigned char*)map_;
  size_t in_size = file_bytes_, in_pos = 0, out_size = 0, out_cap = 0;
  char* out = nullptr;
  auto grow = [&](size_t cap) {
    size_t len = (cap + 2 * kPage) & ~(kPage - 1);
    char* n = map_anonymous(len);
    if (!n) throw LoadError(fmt::format("{}: out of memory inflating to {} bytes", path, cap));
    if (out) {
      std::memcpy(n, out, out_size);
      ::munmap(out, (out_cap + 2 * kPage) & ~(kPage - 1));
    }
    out = n;
    out_cap = cap;
  };
  try {
    while (in_pos < in_size) {
      if (in_size - in_pos < 18) throw LoadError(fmt::format("{}: corrupt gzip: truncated member at byte {}", path, in_pos));
      uint32_t isize;
      std::memcpy(&isize, in + in_size - 4, 4);  // exact for the last (usually only) member
      for (uint64_t guess = isize;; guess += (uint64_t)1 << 32) {
        if (out_cap < out_size + std::max<uint64_t>(guess, 1)) grow(out_size + std::max<uint64_t>(guess, 1));
        size_t used = 0, produced = 0;
        auto r = libdeflate_gzip_decompress_ex(d.get(), in + in_pos, in_size - in_pos, out + out_size,
                                               out_cap - out_size, &used, &produced);
        if (r == LIBDEFLATE_SUCCESS) {
          out_size += produced;
          in_pos += used;
          break;
        }
        if (r != LIBDEFLATE_INSUFFICIENT_SPACE || guess > ((uint64_t)1 << 40))
          throw LoadError(fmt::format("{}: corrupt gzip data (member at byte {}): {}", path, in_pos,
                                      r == LIBDEFLATE_BAD_DATA ? "bad data or checksum" : "cannot decompress"));
      }
      while (in_pos < in_size && in[in_pos] == 0) ++in_pos;  // zero padding after the last member
    }
  } catch (...) {
    if (out) ::munmap(out, (out_cap + 2 * kPage) & ~(kPage - 1));
    throw;
  }
  ::munmap(map_, map_len_);
  map_ = out;
  map_len_ = (out_cap + 2 * kPage) & ~(kPage - 1);
  data_ = out;
  size_ = out_size;
}

InputSource::~InputSource() {
  if (map_) ::munmap(map_, map_len_);
}

void InputSource::release_before(size_t offset) {
  size_t end = std::min(offset, size_) & ~(kPage - 1);
  if (end > released_) {
    ::madvise(map_ + released_, end - released_, MADV_DONTNEED);
    released_ = end;
  }
}

TextBuffer repair_strings(const char* p, size_t n, Health& health) {
  std::string out;
  out.reserve(n + n / 16);
  bool in_string = false;
  int64_t bad_utf8 = 0, controls = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)p[i];
    if (c < 0x80) {
      if (in_string && c == '\\' && i + 1 < n) {
        out.append(p + i, 2);
        i += 2;
        continue;
      }
      if (c == '"') in_string = !in_string;
      if (in_string && c < 0x20) {
        out += fmt::format("\\u{:04x}", c);
        ++controls;
      } else {
        out += (char)c;
      }
      ++i;
      continue;
    }
    // Validate one UTF-8 sequence (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    bool ok = len != 0 && c <= 0xF4 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = ((unsigned char)p[i + k] & 0xC0) == 0x80;
    if (ok && len == 3) {
      unsigned char c1 = (unsigned char)p[i + 1];
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && len == 4) {
      unsigned char c1 = (unsigned char)p[i + 1];
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(p + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++bad_utf8;
      ++i;
    }
  }
  if (bad_utf8) health.add("invalid_utf8", -1, "bytes that are not valid UTF-8 replaced by U+FFFD", bad_utf8);
  if (controls) health.add("control_characters", -1, "raw control characters inside strings escaped as \\u00XX", controls);
  TextBuffer b(out.size());
  std::memcpy(b.data(), out.data(), out.size());
  return b;
}

}  // namespace tlsql
