#include "src/readers/line_text.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>

#include "src/decimal.h"

namespace tlsql::line_text {

bool nonblank(std::string_view line) { return line.find_first_not_of(" \t\r") != std::string_view::npos; }

bool scan_lines(InputSource& in, size_t start, size_t chunk_bytes, const std::function<bool(Chunk&&)>& emit,
                const std::function<TextBuffer()>& spare, RowTest is_row) {
  size_t line_start = start, p = start, rows = 0;
  auto flush = [&] {  // the whole lines [start, p)
    Chunk c{spare(), start, rows};
    c.text.resize(p - start);
    std::memcpy(c.text.data(), in.window() + (start - in.base()), p - start);
    start = p, rows = 0;
    return emit(std::move(c));
  };
  auto end_line = [&] {  // the line [line_start, p), seen as Lines::line() sees it
    std::string_view line(in.window() + (line_start - in.base()), p - line_start);
    if (line.ends_with('\n')) line.remove_suffix(1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (is_row(line)) ++rows;
    line_start = p;
  };
  for (;;) {
    if (p >= in.base() + in.avail() && !in.refill(start)) break;  // keeps the chunk being cut
    const size_t at = p - in.base();
    const char* nl = static_cast<const char*>(std::memchr(in.window() + at, '\n', in.avail() - at));
    if (!nl) {
      p = in.base() + in.avail();
      continue;
    }
    p = in.base() + (nl - in.window()) + 1;
    end_line();
    if (rows && p - start >= chunk_bytes && !flush()) return false;  // blank lines join the next row's chunk
  }
  if (p != line_start) end_line();  // a last line without '\n'
  return rows == 0 || flush();      // trailing blank lines are no chunk
}

Lines::Lines(const Chunk& chunk, const std::string& path, RowTest is_row)
    : text_(chunk.text.data(), chunk.text.size()), source_offset_(chunk.source_offset), path_(path), is_row_(is_row) {}

bool Lines::next() {
  while (at_ < text_.size()) {
    size_t end = text_.find('\n', at_);
    if (end == std::string_view::npos) end = text_.size();
    line_ = text_.substr(at_, end - at_);
    offset_ = source_offset_ + at_;
    at_ = end + 1;
    if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
    if (is_row_(line_)) return true;
  }
  return false;
}

Fields Lines::fields(char separator) const { return Fields(line_, offset_, separator, path_); }

void Fields::fail(const char* what, size_t at, std::string_view found) const {
  throw LoadError(
      fmt::format("{}: at byte {}: expected {}, found '{}'", path_, offset_ + at, what, found.substr(0, 40)));
}

std::string_view Fields::text(const char* what) {
  if (at_ > line_.size()) fail(what, line_.size(), "end of line");
  size_t end = line_.find(separator_, at_);
  if (end == std::string_view::npos) end = line_.size();
  std::string_view field = line_.substr(at_, end - at_);
  at_ = end + 1;
  return field;
}

int64_t Fields::integer(const char* what) {
  size_t at = at_;
  std::string_view field = text(what);
  std::optional<int64_t> v = field.empty() ? std::nullopt : parse_int64(field);
  if (!v) fail(what, at, field);
  return *v;
}

int64_t Fields::micros(const char* what) {
  size_t at = at_;
  std::string_view field = text(what);
  std::optional<int64_t> v = field.empty() ? std::nullopt : micros_to_ns(field);
  if (!v) fail(what, at, field);
  return *v;
}

}  // namespace tlsql::line_text
