// src/readers/line_text.h: chunks of whole lines with their row counts and input offsets at every
// chunk size, blank lines and "\r\n" handled, a last line without '\n' read, and each field error
// naming the byte offset in the input (counted by hand below).
#include "src/readers/line_text.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace tlsql;

std::string write_file(const std::string& text) {
  std::string path = fmt::format("/tmp/tlsql-line-text-test-{}", getpid());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

struct Scanned {
  std::vector<Chunk> chunks;
  size_t rows = 0;
  std::string lines;  // every row line parsed back, '|' after each, with its offset
};

Scanned scan(const std::string& text, size_t start, size_t chunk_bytes) {
  std::string path = write_file(text);
  InputSource in(path);
  Scanned s;
  line_text::scan_lines(
      in, start, chunk_bytes,
      [&](Chunk&& c) {
        s.rows += c.rows;
        s.chunks.push_back(std::move(c));
        return true;
      },
      [] { return TextBuffer(); });
  for (const Chunk& c : s.chunks) {
    size_t n = 0;
    for (line_text::Lines lines(c, path); lines.next(); ++n)
      s.lines += fmt::format("{}@{}|", lines.line(), lines.offset());
    CHECK(n == c.rows);  // the scan's count is the parser's
  }
  unlink(path.c_str());
  return s;
}

}  // namespace

TEST_CASE("scan_lines: whole lines, counted rows, offsets, at every chunk size") {
  // offsets: "#h\n" 0-2, "a,1\n" 3-6, "\n" 7, "b,2\r\n" 8-12, "  \n" 13-15, "c,3" 16-18 (no '\n')
  const std::string text = "#h\na,1\n\nb,2\r\n  \nc,3";
  for (size_t chunk_bytes : {size_t{1}, size_t{4}, size_t{7}, size_t{1} << 20}) {
    CAPTURE(chunk_bytes);
    Scanned s = scan(text, 3, chunk_bytes);
    CHECK(s.rows == 3);
    CHECK(s.lines == "a,1@3|b,2@8|c,3@16|");
    size_t at = 3;
    for (const Chunk& c : s.chunks) {  // contiguous, each ending at a line end (or the text's end)
      CHECK(c.source_offset == at);
      at += c.text.size();
      CHECK((at == text.size() || text[at - 1] == '\n'));
    }
    CHECK(at == text.size());
  }
  CHECK(scan(text, 3, 1).chunks.size() == 3);        // one per row, blank lines with the row after them
  CHECK(scan("a\n\n \n", 0, 1).chunks.size() == 1);  // trailing blank lines: no chunk of no rows
  CHECK(scan("", 0, 1).chunks.empty());
}

TEST_CASE("Fields: typed reads, and errors with the input's byte offset") {
  const std::string path = "t.txt";
  auto fields = [&](std::string_view line) { return line_text::Fields(line, 100, ',', path); };
  auto f = fields("gemm,1234.567,7");
  CHECK(f.text("a name") == "gemm");
  CHECK(f.micros("a start in µs") == 1234567);
  CHECK(f.integer("a count") == 7);
  CHECK(f.done());
  // "gemm,x5,7": the field "x5" starts at byte 100 + 5
  auto g = fields("gemm,x5,7");
  g.text("a name");
  CHECK_THROWS_WITH_AS(g.micros("a start in µs"), "t.txt: at byte 105: expected a start in µs, found 'x5'", LoadError);
  auto h = fields("gemm");
  h.text("a name");
  CHECK_THROWS_WITH_AS(h.integer("a count"), "t.txt: at byte 104: expected a count, found 'end of line'", LoadError);
  auto e = fields("a,,3");
  e.text("x");
  CHECK_THROWS_WITH_AS(e.integer("a count"), "t.txt: at byte 102: expected a count, found ''", LoadError);
}
