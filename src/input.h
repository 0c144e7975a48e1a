// Reading a trace file into memory: plain or gzip'd JSON (detected by magic, not by name),
// with the zero padding simdjson needs past the end of the text.
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

struct InputText {
  TextBuffer text;
  size_t file_bytes = 0;  // size on disk
  bool gzip = false;
  size_t offset = 0;      // bytes skipped at the start (a UTF-8 byte order mark)
};

// Reads `path`, gunzips if needed. Throws LoadError.
InputText read_input(const std::string& path, Health& health);

// Rewrites the text so that every JSON string holds valid UTF-8 and no raw control characters:
// invalid bytes become U+FFFD and control characters \u00XX. Counts both in `health`.
// Real traces carry both (pytorch issue 130622); JSON parsers reject them.
TextBuffer repair_strings(const char* data, size_t size, Health& health);

}  // namespace tlsql
