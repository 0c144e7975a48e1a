// estimated_input_bytes (src/input.h), which decides huge pages before anything is read
// (repl/main.cpp): a file's size, a gzip file's inflated size from its trailer (the ISIZE field,
// little-endian, modulo 2^32: written by hand below), unknown for a FIFO (a stream; found without
// opening it: the open would wait for a writer), and 0 for what is not a regular file.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "src/input.h"

namespace {

namespace fs = std::filesystem;

struct Folder {
  fs::path path = fs::temp_directory_path() / fmt::format("tlsql-input-size-test-{}", getpid());
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = (path / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
};

// A gzip member's first bytes (magic 1f 8b), `body` padding, then CRC32 (zeros) and ISIZE.
std::string gzip_like(size_t body, uint32_t isize) {
  std::string s = "\x1f\x8b";
  s += std::string(body, '\0');
  s += std::string(4, '\0');
  for (int i = 0; i < 4; ++i) s += (char)((isize >> (8 * i)) & 0xff);
  return s;
}

}  // namespace

TEST_CASE("estimated_input_bytes: a plain file is its size") {
  Folder f;
  CHECK(tlsql::estimated_input_bytes(f.write("t.json", std::string(1000, 'x'))) == 1000);
  CHECK(tlsql::estimated_input_bytes(f.write("empty.json", "")) == 0);
}

TEST_CASE("estimated_input_bytes: gzip by its trailer, never below the compressed size") {
  Folder f;
  // 2 + 100 + 8 = 110 bytes compressed; ISIZE 5,000,000: inflates to 5,000,000 bytes.
  CHECK(tlsql::estimated_input_bytes(f.write("a.gz", gzip_like(100, 5000000))) == 5000000);
  // ISIZE 10 < 110 bytes compressed: it wrapped past 2^32 once, 10 + 4,294,967,296.
  CHECK(tlsql::estimated_input_bytes(f.write("b", gzip_like(100, 10))) == 4294967306ull);
  // Magic without room for a trailer (under 18 bytes) is not read as gzip: its size.
  CHECK(tlsql::estimated_input_bytes(f.write("c.gz", "\x1f\x8b" + std::string(10, 'z'))) == 12);
}

TEST_CASE("estimated_input_bytes: a FIFO is a stream of unknown size; 0 for what is missing or no file") {
  Folder f;
  const std::string fifo = (f.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(!tlsql::estimated_input_bytes(fifo).has_value());  // (an open would block here: no writer)
  CHECK(tlsql::estimated_input_bytes((f.path / "missing.json").string()) == 0);
  CHECK(tlsql::estimated_input_bytes("SELECT count(*) FROM event") == 0);
  CHECK(tlsql::estimated_input_bytes(f.path.string()) == 0);  // (a folder: its traces are counted one by one)
  CHECK(tlsql::estimated_input_bytes("/dev/zero") == 0);
}

TEST_CASE("TextBuffer: a buffer moved from is empty, and grows again from nothing") {
  tlsql::TextBuffer a(1000);
  std::memcpy(a.data(), "text", 4);
  tlsql::TextBuffer b(std::move(a));
  CHECK(std::string_view(b.data(), 4) == "text");
  CHECK(b.size() == 1000);
  CHECK(a.data() == nullptr);  // NOLINT(bugprone-use-after-move): what is left is the point
  CHECK(a.size() == 0);
  CHECK(a.capacity() == 0);
  a.resize(2000);  // (with the capacity kept, this wrote padding through a null pointer)
  CHECK(a.data() != nullptr);
  CHECK(a.capacity() >= 2000 + tlsql::TextBuffer::kPadding);
  tlsql::TextBuffer c;
  c = std::move(b);
  CHECK(std::string_view(c.data(), 4) == "text");
  CHECK(b.capacity() == 0);  // NOLINT(bugprone-use-after-move)
  b.resize(10);
  CHECK(b.size() == 10);
}
