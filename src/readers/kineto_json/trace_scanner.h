// Splits a trace's JSON text into chunks of whole events (the "tokenizer" half of the importer,
// as in Perfetto's JSON importer): it walks the top-level object, keeps every key but
// traceEvents as metadata, and cuts the traceEvents array into ~2 MB runs of elements, each
// copied into its own padded buffer as a small JSON array that simdjson can parse on its own: a
// Chunk's text is "[" + elements + "]", its source_offset where text[1] was in the input.
#pragma once

#include <functional>
#include <string>

#include "src/health.h"
#include "src/input.h"
#include "src/readers/reader.h"

namespace tlsql {

class TraceScanner {
 public:
  TraceScanner(InputSource& in, std::string path) : in_(in), path_(std::move(path)) {}
  // Calls `emit` for each chunk, in order (`emit` returns false to stop early); `spare` supplies a
  // buffer to reuse for the next chunk. Throws LoadError on a structural error (truncated file,
  // not a trace, trailing content).
  void run(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare, Health& health);
  const std::string& metadata() const { return metadata_; }
  bool bare_array() const { return bare_array_; }
  size_t chunk_bytes = 2u << 20;  // (LoadOptions::chunk_bytes sets it)
  // Set (TraceReader::allow_speculation) when the input is read at any offset: traceEvents is then
  // cut at guessed boundaries without walking it, the parse threads proving each cut.
  CutProof* proof = nullptr;

 private:
  [[noreturn]] void fail(size_t offset, const std::string& what) const;
  [[noreturn]] void not_a_trace(size_t offset, const std::string& what) const;  // NotATrace
  // Offsets are into the whole text; the input shows a window of it.
  char at(size_t p);  // the byte at p, or 0 at the end of the text
  // Whether the text has a byte at p: at() says 0 both for a NUL byte and past the end, and a NUL
  // is no end of file (`doc NUL doc` must not load as `doc`).
  bool has(size_t p) { return at(p) || p < in_.base() + in_.avail(); }
  // at(p) where the document must go on: the end of the text fails as `truncated`, a NUL byte as
  // what it is (nul_at).
  char need(size_t p, const char* truncated);
  [[noreturn]] void nul_at(size_t p);
  // The byte order marks and the NUL pattern of UTF-16 at the start of the text; skips a UTF-8
  // mark (counted) and returns where the JSON starts.
  size_t check_encoding(Health& health);
  size_t skip_ws(size_t p);
  size_t value_end(size_t p);  // just past the value starting at p
  std::string_view text(size_t from, size_t to) const { return {in_.window() + (from - in_.base()), to - from}; }
  // Appends the top-level value text [from, to) to the metadata, checked as JSON (repaired if needed).
  void append_checked(size_t from, size_t to, Health& health);
  size_t scan_events(size_t p, const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare);
  // The speculative part of scan_events from `start` (just past '[' or an event's comma): emits
  // chunks cut at guessed boundaries while a whole chunk and more of the file is left, then settles
  // them. Returns where the serial walk goes on: a proved boundary.
  // After a wrong guess, the chunk from the last proved boundary is re-cut by a walk of its text
  // (walk_cut), and guessing goes on after it.
  size_t cut_speculatively(size_t start, const std::function<bool(Chunk&&)>& emit,
                           const std::function<TextBuffer()>& spare);
  // The first comma between events at least chunk_bytes after `from` (a boundary: the walk starts
  // at one), found by walking [from, from + chunk_bytes + 1 MB) read into `buf`; npos when the
  // array ends first or no comma is there.
  size_t walk_cut(size_t from, TextBuffer& buf);

  InputSource& in_;
  std::string path_, metadata_;
  bool bare_array_ = false, stopped_ = false;
  size_t events_ = 0;       // elements of traceEvents seen so far
  size_t keep_ = SIZE_MAX;  // earliest offset the window must keep (start of a pending chunk)
};

}  // namespace tlsql
