// src/readers/kineto_text.h: the JSON text the readers that translate records write (the args of
// rocprofv3 and Nsight records, the memory timeline's Kineto events). escape() skips
// plain bytes eight at a time; it must equal the byte-by-byte rule (RFC 8259: '"', '\' and
// control characters escaped, every other byte passed) on any input.
#include "src/readers/kineto_text.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <random>

namespace {

std::string escape_bytewise(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = (unsigned char)c;
    if (c == '"' || c == '\\') {
      out += '\\', out += c;
    } else if (u < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", u);
      out += b;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string escaped(std::string_view s) {
  std::string out;
  tlsql::kineto_text::escape(out, s);
  return out;
}

std::string micros(int64_t ns) {
  std::string out;
  tlsql::kineto_text::micros(out, ns);
  return out;
}

}  // namespace

TEST_CASE("kineto_text::escape equals the byte-by-byte rule") {
  CHECK(escaped("") == "\"\"");
  CHECK(escaped("void gemm<float, 128>(float const*)") == "\"void gemm<float, 128>(float const*)\"");
  CHECK(escaped("a\"b\\c\n\x1f") == "\"a\\\"b\\\\c\\u000a\\u001f\"");
  // Bytes the eight-at-a-time test must not mistake: 0x20 and 0x7f..0xff pass, 0x1f does not.
  CHECK(escaped("        \x7f\x80\xff !#[]") == "\"        \x7f\x80\xff !#[]\"");
  CHECK(escaped("0123456789abcde\"") == "\"0123456789abcde\\\"\"");
  std::mt19937 g(48);
  const char special[] = {'"', '\\', '\x01', '\x1f', ' ', '\x7f', '\x80', '\xff', '!', '#', '\x21', '\x5b', '\x5d'};
  for (int t = 0; t < 20000; ++t) {
    std::string s;
    for (int i = 0, n = (int)(g() % 40); i < n; ++i)
      s += g() % 4 ? (char)('a' + g() % 26) : special[g() % sizeof special];
    REQUIRE(escaped(s) == escape_bytewise(s));
  }
}

TEST_CASE("kineto_text::micros writes ns as Kineto's decimal µs") {
  CHECK(micros(0) == "0.000");
  CHECK(micros(999) == "0.999");
  CHECK(micros(1000) == "1.000");
  CHECK(micros(63857982592007) == "63857982592.007");
  CHECK(micros(-1500) == "-1.500");
  CHECK(micros(INT64_MIN) == "-9223372036854775.808");
}
