// Reading a line-based text format (one row per line: CSV, a profiler's text dump), the helper
// beside kineto_text.h's for formats that write Kineto JSON: the scan cuts the input into chunks
// of whole lines and counts the rows in each before it is parsed (the seam's rule, reader.h), and
// the parser walks a chunk's row lines and their fields, every message naming the file and the
// byte offset in the input. docs/extending.md, "An input format", is a whole format written on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "src/readers/reader.h"

namespace tlsql::line_text {

// Which lines are rows: by default every line with a character other than blanks and '\r'
// (blank lines are skipped, as CSV readers do). A format with comments passes its own.
bool nonblank(std::string_view line);
using RowTest = bool (*)(std::string_view line);

// Reads `in` from byte `start` (after a header the format read itself; `in.window()` holds the
// text from base() on when the scan starts, the head the format was chosen by included) to its
// end, emitting chunks of whole lines of about `chunk_bytes`, each with its row count and input
// offset. The last line may lack its '\n'. Returns false when `emit` cancelled the load.
bool scan_lines(InputSource& in, size_t start, size_t chunk_bytes, const std::function<bool(Chunk&&)>& emit,
                const std::function<TextBuffer()>& spare, RowTest is_row = nonblank);

// The row lines of one chunk, in order, for a ChunkParser:
//   for (Lines lines(chunk, path); lines.next();) { Fields f = lines.fields(','); ... }
class Fields;
class Lines {
 public:
  Lines(const Chunk& chunk, const std::string& path, RowTest is_row = nonblank);
  bool next();                                     // to the next row line; false after the last
  std::string_view line() const { return line_; }  // without its '\n' (and a '\r' before it)
  size_t offset() const { return offset_; }        // of the line's first byte in the input
  Fields fields(char separator) const;

 private:
  std::string_view text_, line_;
  size_t source_offset_, at_ = 0, offset_ = 0;
  const std::string& path_;
  RowTest is_row_;
};

// A line's fields, read left to right; a field that is missing or not of the asked form throws
// LoadError "PATH: at byte N: expected WHAT, found 'TEXT'".
class Fields {
 public:
  Fields(std::string_view line, size_t offset, char separator, const std::string& path)
      : line_(line), offset_(offset), separator_(separator), path_(path) {}
  std::string_view text(const char* what);          // the next field as it is (may be empty)
  int64_t integer(const char* what);                // a decimal integer (src/decimal.h parse_int64)
  int64_t micros(const char* what);                 // microseconds as decimal text -> ns, exact (micros_to_ns)
  bool done() const { return at_ > line_.size(); }  // every field read

 private:
  [[noreturn]] void fail(const char* what, size_t at, std::string_view found) const;
  std::string_view line_;
  size_t offset_, at_ = 0;
  char separator_;
  const std::string& path_;
};

}  // namespace tlsql::line_text
