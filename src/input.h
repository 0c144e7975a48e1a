// Reading a trace file: plain JSON is memory-mapped, gzip (detected by magic, not by name) is
// inflated whole with libdeflate into anonymous memory. Either way the loader walks the text once,
// front to back, and hands back pages it has passed (release_before), so peak memory stays near
// the size of what is kept rather than the size of the file.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "health.h"

namespace tlsql {

// A user-facing failure: the message names the file and what went wrong, in one line.
struct LoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A heap buffer with the zero padding simdjson needs past the end of the text.
class TextBuffer {
 public:
  static constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING
  TextBuffer() = default;
  explicit TextBuffer(size_t size) { resize(size); }
  void resize(size_t size);  // keeps the content up to min(old, new) size
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

class InputSource {
 public:
  // Opens `path`; throws LoadError.
  explicit InputSource(const std::string& path);
  ~InputSource();
  InputSource(const InputSource&) = delete;
  InputSource& operator=(const InputSource&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }        // JSON text bytes
  size_t file_bytes() const { return file_bytes_; }
  bool gzip() const { return gzip_; }
  // Drops the pages wholly before `offset` from memory; the loader never reads them again.
  void release_before(size_t offset);

 private:
  char* map_ = nullptr;
  size_t map_len_ = 0, released_ = 0;
  const char* data_ = nullptr;
  size_t size_ = 0, file_bytes_ = 0;
  bool gzip_ = false;
};

// Rewrites the text so that every JSON string holds valid UTF-8 and no raw control characters:
// invalid bytes become U+FFFD and control characters \u00XX. Counts both in `health`.
// Real traces carry both (pytorch issue 130622); JSON parsers reject them.
TextBuffer repair_strings(const char* data, size_t size, Health& health);

}  // namespace tlsql
