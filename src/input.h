// Reading a trace file as a stream through a window of text that moves forward (see InputSource):
// peak memory stays near the size of what is kept, not the size of the file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/health.h"

namespace tlsql {

// A user-facing failure: the message names the file and what went wrong, in one line.
struct LoadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A file whose document shows from its start that it is no Kineto trace (not JSON, JSON without a
// traceEvents array: a PyTorch execution trace, a config file). A folder of traces skips such
// files; a trace that breaks later (truncated, malformed) is a LoadError, never skipped.
struct NotATrace : LoadError {
  using LoadError::LoadError;
};

// A file tlsql reads that is not a trace: a script (-f, .read), --models, a CSV (.import), a capture
// folder's execution_details.json. The one rule for opening them, as InputSource's for traces: a
// regular file or a pipe only (a device such as /dev/zero never ends, and the read would grow
// until memory ran out), noted as an input (note_input) so that no output of this process replaces
// it. Throws LoadError "cannot open 'PATH'" or "PATH: cannot read: not a regular file or a pipe".
std::ifstream open_input_file(const std::string& path);
// The whole of such a file.
std::string read_input_file(const std::string& path);

// The most tlsql reads of a file's metadata: a sidecar read whole (TraceLens's
// execution_details.json beside capture traces, a --models file) and a trace's top-level members
// besides traceEvents (deviceProperties, distributedInfo, ...). Such text is a few KB, at most a few
// hundred KB for many ranks; a whole-file JSON parser (nlohmann::json) takes ~30 times the text in
// memory, so a 55 MB sidecar took 1.7 GB. Past the bound the file is refused, with its name.
constexpr size_t kMetadataMaxBytes = 16u << 20;

// A sidecar file's text (see kMetadataMaxBytes): a regular file or a pipe, read to the bound;
// LoadError naming the file and `what` it should be when it is larger, a device or unreadable.
std::string read_sidecar(const std::string& path, std::string_view what);

// About how many bytes of text the trace file `path` holds, for a choice made before any is read
// (huge pages, repl/main.cpp): a regular file's size; for gzip (by magic), the smallest size its
// trailer allows (ISIZE is the inflated size modulo 2^32, and no trace inflates to less than its
// compressed size); nullopt for a pipe or FIFO (a stream: not known until read); 0 for anything
// else (missing, a folder, a device). Never blocks or throws.
std::optional<uint64_t> estimated_input_bytes(const std::string& path);

// A heap buffer with the zero padding simdjson needs past the end of the text.
class TextBuffer {
 public:
  static constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING
  TextBuffer() = default;
  explicit TextBuffer(size_t size) { resize(size); }
  // A buffer moved from is empty: the default move kept its size and capacity without its bytes,
  // and a later resize within that capacity wrote through a null pointer (a folder load whose
  // window had not been given back took such a one).
  TextBuffer(TextBuffer&& o) noexcept
      : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)), capacity_(std::exchange(o.capacity_, 0)) {}
  TextBuffer& operator=(TextBuffer&& o) noexcept {
    data_ = std::move(o.data_);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    return *this;
  }
  void resize(size_t size);  // keeps the content up to min(old, new) size
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;  // (malloc'd: grown by realloc)
  size_t size_ = 0, capacity_ = 0;
};

// The JSON text of a trace file, seen through a window that moves forward. The file is read as a
// stream with read(2), never mapped: a file truncated or rewritten while loading (torch.profiler
// rewrites in place) ends the text early instead of raising SIGBUS, and pipes and FIFOs
// (`<(zcat ...)`) read like files. Gzip (detected by magic, not by name) is inflated with ISA-L into
// the same window, so a multi-GB .json.gz never needs its inflated size in memory (and a gzip bomb
// cannot exhaust it).
class InputSource {
 public:
  // Opens `path`; throws LoadError. A single value the reader must keep whole past `max_kept`
  // bytes of text is refused (a gzip bomb, or a file that is not a trace). A device is refused;
  // with `regular_only` a pipe too (a path read from a database, not given by the user). With
  // `reuse`, the window is taken from it and given back to it (a folder's loads: ReadBuffers).
  static constexpr size_t kMaxKept = 256u << 20;
  explicit InputSource(const std::string& path, size_t max_kept = kMaxKept, bool regular_only = false,
                       TextBuffer* reuse = nullptr);
  ~InputSource();
  InputSource(const InputSource&) = delete;
  InputSource& operator=(const InputSource&) = delete;

  // Bytes [base(), base() + avail()) of the text are at window(); SIMD reads may run 64 bytes on.
  const char* window() const { return window_; }
  size_t base() const { return base_; }
  size_t avail() const { return avail_; }
  bool at_end() const { return eof_; }
  // Keeps the text from offset `keep` on and appends more. Returns false at the end of the text.
  // Throws LoadError for read errors and corrupt gzip data.
  bool refill(size_t keep);
  // Refills read at most `bytes` of text past what they keep (by default, to the window's end): a
  // reader that keeps only small values need not hold, nor have the system zero, a 64 MiB window.
  void read_ahead(size_t bytes) { read_ahead_ = std::max<size_t>(bytes, 1); }

  // Speculative cuts (issue 51) read a regular uncompressed file at any offset, from any thread:
  // whether this input is one.
  bool random_access() const { return regular_ && !gzip_; }
  // Up to n bytes of the text from `offset` into `to` (pread: thread-safe, the window untouched);
  // fewer at the end of the file (or a file cut short since it was opened). Random access only.
  // Throws LoadError for a read error.
  size_t read_at(size_t offset, char* to, size_t n) const;
  // Moves the window to start at `offset` when it is past the text read so far (the text between
  // is never read into it); else keeps it. Random access only. For progress, `done` marks text a
  // speculative scan has handed on (read by other threads).
  void skip_to(size_t offset);
  void note_done(size_t done) { read_ = std::max(read_, std::min(done, file_bytes_)); }

  size_t file_bytes() const { return file_bytes_; }  // 0 for a pipe
  // The text's size where it is known before it is read (estimated_input_bytes's rule, on the open
  // file): a plain file's size, a .gz's by its trailer (a multi-member .gz's gives its last member's
  // size); 0 for a pipe.
  size_t known_text_bytes() const;
  bool gzip() const { return gzip_; }
  // How far through the file reading has come (compressed bytes for gzip), for progress bars.
  size_t progress() const { return read_; }
  size_t progress_total() const { return file_bytes_; }

 private:
  size_t read_some(char* to, size_t n);  // read(2) with EINTR retried; 0 at the end of the file
  void inflate_more(size_t to);          // until avail_ is `to` or the text ends

  std::string path_;
  int fd_ = -1;
  size_t file_bytes_ = 0, read_ = 0, max_kept_;
  bool gzip_ = false, eof_ = false, in_eof_ = false, regular_ = false;
  const char* window_ = nullptr;
  size_t base_ = 0, avail_ = 0;
  size_t fill_to_ = SIZE_MAX;  // a refill reads to the window's size or this many bytes of it
  size_t read_ahead_ = SIZE_MAX;
  TextBuffer buffer_;
  TextBuffer* reuse_;
  // gzip streaming state: compressed bytes [in_pos_, in_len_) of in_ are not inflated yet
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
  std::unique_ptr<char[]> in_;
  size_t in_pos_ = 0, in_len_ = 0;
};

}  // namespace tlsql
