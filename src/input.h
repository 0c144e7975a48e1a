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

// The JSON text of a trace file, seen through a window that moves forward. A plain file is
// memory-mapped whole (the window is the file); a gzip file (detected by magic, not by name) is
// inflated as a stream with ISA-L into a reused window, so a multi-GB .json.gz never needs its
// inflated size in memory (and a gzip bomb cannot exhaust it).
class InputSource {
 public:
  // Opens `path`; throws LoadError.
  explicit InputSource(const std::string& path);
  ~InputSource();
  InputSource(const InputSource&) = delete;
  InputSource& operator=(const InputSource&) = delete;

  // Bytes [base(), base() + avail()) of the text are at window(); SIMD reads may run 64 bytes on.
  const char* window() const { return window_; }
  size_t base() const { return base_; }
  size_t avail() const { return avail_; }
  bool at_end() const { return eof_; }
  // Keeps the text from offset `keep` on and appends more. Returns false at the end of the text.
  // Throws LoadError for corrupt gzip data.
  bool refill(size_t keep);
  // Drops the pages wholly before `offset` from memory; the loader never reads them again.
  void release_before(size_t offset);

  size_t file_bytes() const { return file_bytes_; }
  bool gzip() const { return gzip_; }
  // How far through the file the window has come (compressed bytes for gzip), for progress bars.
  size_t progress() const;
  size_t progress_total() const { return file_bytes_; }

 private:
  std::string path_;
  char* map_ = nullptr;  // the mapped file
  size_t map_len_ = 0, released_ = 0, file_bytes_ = 0;
  bool gzip_ = false, eof_ = true;
  const char* window_ = nullptr;
  size_t base_ = 0, avail_ = 0;
  // gzip streaming state
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
  TextBuffer buffer_;
};

}  // namespace tlsql
