#include "input.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace tlsql {

void TextBuffer::resize(size_t size) {
  if (size + kPadding > capacity_) {
    size_t cap = size + kPadding;
    std::unique_ptr<char[]> d(new char[cap]);
    if (size_) std::memcpy(d.get(), data_.get(), std::min(size_, size));
    data_ = std::move(d);
    capacity_ = cap;
  }
  size_ = size;
  std::memset(data_.get() + size_, 0, kPadding);
}

namespace {

TextBuffer read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw LoadError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw LoadError(fmt::format("{}: cannot read: {}", path, S_ISDIR(st.st_mode) ? "is a directory" : std::strerror(errno)));
  }
  TextBuffer buf((size_t)st.st_size);
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t r = ::read(fd, buf.data() + got, buf.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = errno;
      ::close(fd);
      throw LoadError(fmt::format("{}: read failed after {} bytes: {}", path, got, r == 0 ? "file shrank" : std::strerror(e)));
    }
    got += (size_t)r;
  }
  ::close(fd);
  return buf;
}

// gzip members are decompressed whole with libdeflate (about twice zlib's speed). The trailer's
// ISIZE is the size mod 2^32, so larger outputs are found by trying ISIZE + k * 4 GiB.
TextBuffer gunzip(const std::string& path, const TextBuffer& in) {
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  TextBuffer out;
  size_t in_pos = 0, out_size = 0;
  while (in_pos < in.size()) {
    const unsigned char* src = (const unsigned char*)in.data() + in_pos;
    size_t avail = in.size() - in_pos;
    if (avail < 18) throw LoadError(fmt::format("{}: corrupt gzip: truncated member at byte {}", path, in_pos));
    uint32_t isize;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);  // exact for the last (usually only) member
    for (uint64_t guess = isize;; guess += (uint64_t)1 << 32) {
      out.resize(out_size + std::max<uint64_t>(guess, 1));
      size_t in_used = 0, produced = 0;
      auto r = libdeflate_gzip_decompress_ex(d.get(), src, avail, out.data() + out_size,
                                             out.size() - out_size, &in_used, &produced);
      if (r == LIBDEFLATE_SUCCESS) {
        out_size += produced;
        in_pos += in_used;
        break;
      }
      if (r != LIBDEFLATE_INSUFFICIENT_SPACE || guess > ((uint64_t)1 << 40))
        throw LoadError(fmt::format("{}: corrupt gzip data (member at byte {}): {}", path, in_pos,
                                    r == LIBDEFLATE_BAD_DATA ? "bad data or checksum" : "cannot decompress"));
    }
    // Trailing zero bytes after the last member are tolerated (some writers pad).
    while (in_pos < in.size() && in.data()[in_pos] == 0) ++in_pos;
  }
  out.resize(out_size);
  return out;
}

}  // namespace

InputText read_input(const std::string& path, Health& health) {
  InputText r;
  TextBuffer raw = read_file(path);
  r.file_bytes = raw.size();
  if (raw.size() >= 2 && (unsigned char)raw.data()[0] == 0x1f && (unsigned char)raw.data()[1] == 0x8b) {
    r.gzip = true;
    r.text = gunzip(path, raw);
  } else {
    r.text = std::move(raw);
  }
  if (r.text.size() >= 3 && std::memcmp(r.text.data(), "\xEF\xBB\xBF", 3) == 0) {
    r.offset = 3;
    health.add("utf8_bom", -1, "UTF-8 byte order mark at the start of the file skipped");
  }
  return r;
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
