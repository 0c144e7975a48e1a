// How results are written (session/output.h): the aligned modes' REALs (readable_real) and CSV quoting, by hand.
#include "session/output.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

using tlsql::readable_real;

TEST_CASE("3 decimals from 1 up, thousands separated") {
  CHECK(readable_real(13214.178693) == "13,214.179");
  CHECK(readable_real(45.0) == "45.0");
  CHECK(readable_real(7.86107361511838) == "7.861");
  CHECK(readable_real(-1234567.5) == "-1,234,567.5");
  CHECK(readable_real(999.9996) == "1,000.0");
  CHECK(readable_real(100.0) == "100.0");
}

TEST_CASE("3 significant digits below 1, never an exponent") {
  CHECK(readable_real(3.8e-05) == "0.000038");
  CHECK(readable_real(0.0573208882178706) == "0.0573");
  CHECK(readable_real(-0.5) == "-0.5");
  CHECK(readable_real(0.0) == "0.0");
  CHECK(readable_real(0.9996) == "1.0");
}

TEST_CASE("csv: a field with a comma, quote or line break is quoted, its quotes doubled (RFC 4180)") {
  tlsql::ResultSet rs;
  rs.columns = {"a,b", "plain"};
  rs.rows = {{std::string("x\"y,z"), std::string("p")},
             {std::string("\"\""), std::string("line\nbreak")},
             {std::string("cr\r"), std::nullopt},
             {std::string("[\"k1\",\"k2\"]"), std::string("")}};
  rs.numeric = {false, false};
  rs.is_real = {{false, false}, {false, false}, {false, false}, {false, false}};
  tlsql::OutputOptions opt;
  opt.mode = tlsql::OutputMode::csv;
  FILE* f = tmpfile();
  REQUIRE(f);
  tlsql::print_result(f, rs, opt);
  std::rewind(f);
  std::string got;
  for (int c; (c = std::fgetc(f)) != EOF;) got += (char)c;
  std::fclose(f);
  CHECK(got ==
        "\"a,b\",plain\n"
        "\"x\"\"y,z\",p\n"
        "\"\"\"\"\"\",\"line\nbreak\"\n"
        "\"cr\r\",\n"
        "\"[\"\"k1\"\",\"\"k2\"\"]\",\n");
}

namespace {

std::string printed(const tlsql::ResultSet& rs, const tlsql::OutputOptions& opt) {
  FILE* f = tmpfile();
  REQUIRE(f);
  tlsql::print_result(f, rs, opt);
  std::rewind(f);
  std::string got;
  for (int c; (c = std::fgetc(f)) != EOF;) got += (char)c;
  std::fclose(f);
  return got;
}

// Terminal columns of the widest line (UTF-8 continuation bytes take none).
size_t widest_line(const std::string& s) {
  size_t best = 0, cols = 0;
  for (unsigned char c : s) {
    if (c == '\n')
      best = std::max(best, cols), cols = 0;
    else if ((c & 0xC0) != 0x80)
      ++cols;
  }
  return std::max(best, cols);
}

}  // namespace

TEST_CASE("numbers: what the aligned modes never wrap or cut") {
  using tlsql::looks_numeric;
  for (const char* n : {"8,663.617", "-12", "0.000038", "1.5e-05", "42%", "1,234,567.5", "+3"}) CHECK(looks_numeric(n));
  for (const char* t : {"", "-", "aten::mm", "1.2.3", "12 us", ",12", "1e", "[1]", "0x1f"}) CHECK(!looks_numeric(t));
}

TEST_CASE("wrap_cell: breaks after separators in a piece's second half, at most max_lines with an ellipsis") {
  using tlsql::wrap_cell;
  CHECK(wrap_cell("abc", 5) == std::vector<std::string>{"abc"});
  // "void at::native::" is 17 columns: the break after "::" (at 9 of 12) keeps "native" whole.
  CHECK(wrap_cell("void at::native::kernel", 12) == std::vector<std::string>{"void at::", "native::", "kernel"});
  CHECK(wrap_cell("[[16,559],[16,559]]", 10) == std::vector<std::string>{"[[16,559],", "[16,559]]"});
  CHECK(wrap_cell("abcdefghij", 4) == std::vector<std::string>{"abcd", "efgh", "ij"});  // no break: at the width
  CHECK(wrap_cell("abcdefghij", 4, 2) == std::vector<std::string>{"abcd", "efg\xE2\x80\xA6"});
  CHECK(wrap_cell("abcdefgh", 4, 2) == std::vector<std::string>{"abcd", "efgh"});  // nothing left out
  CHECK(wrap_cell("\xC2\xB5s \xC2\xB5s \xC2\xB5s", 3) ==
        std::vector<std::string>{"\xC2\xB5s ", "\xC2\xB5s ", "\xC2\xB5s"});  // µ is one column, never split
}

TEST_CASE("box on a terminal: numbers whole, text cut to 3 lines, rules dropped, then rows as lines") {
  tlsql::ResultSet rs;
  rs.columns = {"name", "gpu_us", "count"};
  const std::string kernel(300, 'k');
  rs.rows = {{kernel, std::string("8663.6172"), std::string("12")},
             {std::string("aten::mm"), std::nullopt, std::string("7")}};
  rs.numeric = {false, true, true};
  rs.is_real = {{false, true, false}, {false, false, false}};
  tlsql::OutputOptions opt;
  opt.fit = 40;
  // Box: 40 = 1 + (name + 3) + (9 + 3) + (5 + 3): name 16 wide, 3 lines of it with an ellipsis.
  std::string got = printed(rs, opt);
  CHECK(widest_line(got) == 40);
  CHECK(got.find("8,663.617") != std::string::npos);
  CHECK(got.find(std::string(16, 'k') + " │") != std::string::npos);
  CHECK(got.find(std::string(15, 'k') + "\xE2\x80\xA6 │") != std::string::npos);
  CHECK(std::count(got.begin(), got.end(), '\n') == 3 + 1 + 3 + 1);  // rules, header, 3 + 1 row lines
  // 24 columns: the box needs 1 + 8+3 + 9+3 + 5+3 = 32; without rules 8 + 2 + 9 + 2 + 5 = 26; as lines.
  opt.fit = 24;
  got = printed(rs, opt);
  CHECK(widest_line(got) <= 24);
  CHECK(got.find("gpu_us = 8,663.617\n") != std::string::npos);
  CHECK(got.find(" count = 12\n\n  name = aten::mm\n") != std::string::npos);
  // 28: no rules (column mode's layout, 2 columns between cells): name 28 - 9 - 5 - 4 = 10 wide.
  opt.fit = 28;
  got = printed(rs, opt);
  CHECK(widest_line(got) <= 28);
  CHECK(got.rfind("name        gpu_us     count\n", 0) == 0);
  CHECK(got.find("kkkkkkkkkk  8,663.617     12\n") != std::string::npos);
  CHECK(got.find("8,663.617") != std::string::npos);
  // Not a terminal: nothing cut.
  opt.fit = 0;
  got = printed(rs, opt);
  CHECK(got.find(kernel) != std::string::npos);
  // --wrap 4 wraps text, never the number.
  opt.wrap = 4;
  got = printed(rs, opt);
  CHECK(got.find("8,663.617") != std::string::npos);
}

TEST_CASE("wrap_hanging: the text under its column") {
  using tlsql::wrap_hanging;
  CHECK(wrap_hanging(".bail on|off", "stop at the first error", 10, 0) == ".bail on|off  stop at the first error\n");
  CHECK(wrap_hanging(".x", "one two three four", 6, 16) == ".x    one two\n      three four\n");
  CHECK(wrap_hanging(".longer", "a b", 4, 0) == ".longer  a b\n");
  CHECK(wrap_hanging("", "aaa bbb ccc", 2, 9) == "  aaa bbb\n  ccc\n");
}

TEST_CASE("json mode: a text holding a JSON array or object is that JSON") {
  using tlsql::json_value;
  CHECK(json_value("[[512],[141,512]]"));
  CHECK(json_value(" {\"kernel\": 60}"));
  CHECK(json_value("[]"));
  CHECK(!json_value("[memory]"));
  CHECK(!json_value("[1, 2"));
  CHECK(!json_value("\"[1]\""));
  CHECK(!json_value("12"));
  tlsql::ResultSet rs;
  rs.columns = {"dims", "name"};
  rs.rows = {{std::string("[[2,3],[]]"), std::string("[memory]")}};
  rs.numeric = {false, false};
  rs.is_real = {{false, false}};
  tlsql::OutputOptions opt;
  opt.mode = tlsql::OutputMode::json;
  CHECK(printed(rs, opt) == "[{\"dims\":[[2,3],[]],\"name\":\"[memory]\"}]\n");
  opt.mode = tlsql::OutputMode::csv;
  CHECK(printed(rs, opt) == "dims,name\n\"[[2,3],[]]\",[memory]\n");
}

// sqlite_real_text formats REALs itself where it can: it must give SQLite's own text for every
// double, checked against what SQLite returns for the same value bound to a statement.
TEST_CASE("sqlite_real_text: SQLite's text of a REAL (%!.15g) for every kind of double") {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT ?1", -1, &q, nullptr) == SQLITE_OK);
  auto sqlite_text = [&](double v) {
    sqlite3_reset(q);
    sqlite3_bind_double(q, 1, v);
    REQUIRE(sqlite3_step(q) == SQLITE_ROW);
    return std::string((const char*)sqlite3_column_text(q, 0));
  };
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                0.5,
                                6601.0,
                                1e15,
                                1e14,
                                999999999999999.0,
                                123456789012345.0,
                                1234567890123456.0,
                                1e-4,
                                1e-5,
                                0.00012345,
                                9.5e-5,
                                0.1,
                                0.2,
                                0.3,
                                1.0 / 3,
                                2.0 / 3,
                                1e100,
                                1e-100,
                                1.7976931348623157e308,
                                2.2250738585072014e-308,
                                4.9e-324,
                                1e308,
                                1e-320,
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity()};
  for (int p = -320; p <= 308; ++p) {  // powers of ten and their neighbours, on both sides of each layout's edge
    const double v = std::pow(10.0, p);
    values.insert(values.end(), {v, std::nextafter(v, 0.0), std::nextafter(v, std::numeric_limits<double>::infinity()),
                                 9.99999999999999 * v, 5 * v, 1.5 * v});
  }
  std::mt19937_64 rng(51);
  for (int i = 0; i < 200000; ++i) {  // any bit pattern: mostly 17 digits (SQLite's printf) ...
    const uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) values.push_back(v);
  }
  for (int i = 0; i < 200000; ++i) {  // ... and what reports print: microseconds to 3 decimals, percents
    const auto k = (int64_t)(rng() % 100000000000ULL) - 50000000000LL;
    values.push_back((double)k / std::pow(10.0, (double)(rng() % 8)));
    values.push_back(std::round((double)(rng() % 1000000000) / 7.0) / 1e3);
  }
  size_t wrong = 0;
  for (double v : values)
    if (tlsql::sqlite_real_text(v) != sqlite_text(v) && ++wrong <= 5)
      CHECK_MESSAGE(false, v, ": ", tlsql::sqlite_real_text(v), " but SQLite writes ", sqlite_text(v));
  CHECK(wrong == 0);
  sqlite3_finalize(q);
  sqlite3_close(db);
}
