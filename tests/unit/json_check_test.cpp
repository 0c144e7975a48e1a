#include "src/json_check.h"

#include <doctest/doctest.h>

#include <string>

using tlsql::check_json;
using tlsql::JsonCheck;

namespace {
JsonCheck check(const std::string& s) { return check_json(s.data(), s.size()); }
JsonCheck::Result result(const std::string& s) { return check(s).result; }
std::string repaired(const std::string& s, tlsql::Health& h) {
  tlsql::TextBuffer b = tlsql::repair_json(s.data(), s.size(), h);
  return std::string(b.data(), b.size());
}
}  // namespace

TEST_CASE("check_json accepts RFC 8259 JSON") {
  for (const char* ok :
       {"[]", "{}", " [1, -0, 0.5, 1e3, -2E-2, 1.5e+7] ", R"({"a":{"b":[true,false,null,"x\"\\\/\b\f\n\r\t"]}})",
        R"(["\u00e9\ud83d\ude00", "é"])", "\"a string on its own\"", "0"})
    CHECK_MESSAGE(result(ok) == JsonCheck::ok, ok);
}

TEST_CASE("check_json rejects what is not JSON, at the first bad byte") {
  struct Case {
    const char* text;
    size_t offset;
  };
  for (Case c :
       {Case{"[tru]", 1}, {"[nulll]", 5}, {"[0x10]", 2}, {"[012]", 1},     {"[1.]", 1},  {"[.5]", 1},       {"[-]", 1},
        {"[1e]", 1},      {"[1,]", 3},    {"[1 2]", 3},  {"{\"a\" 1}", 5}, {"{a:1}", 1}, {"{\"a\":1,}", 7}, {"[1]]", 3},
        {"[1}", 2},       {"[\"abc", 1},  {"[+1]", 1},   {"[Nan]", 1},     {"", 0},      {"[", 1}}) {
    JsonCheck r = check(c.text);
    CHECK_MESSAGE(r.result == JsonCheck::invalid, c.text);
    CHECK_MESSAGE(r.offset == c.offset, c.text, " -> ", r.message);
  }
  JsonCheck nul = check_json("[1,\0 2]", 7);  // a NUL byte between tokens
  CHECK(nul.result == JsonCheck::invalid);
  CHECK(nul.offset == 3);
  CHECK(nul.message == "malformed JSON: expected a value, found byte 0x00");
}

TEST_CASE("check_json never recurses: deep nesting is checked with a heap stack") {
  std::string deep(1 << 20, '[');
  deep += std::string(1 << 20, ']');
  CHECK(result(deep) == JsonCheck::ok);
  deep.pop_back();
  CHECK(result(deep) == JsonCheck::invalid);
}

TEST_CASE("string defects, NaN and Infinity are repairable, and repair_json fixes and counts them") {
  tlsql::Health h;
  CHECK(result(R"(["a\ud800b"])") == JsonCheck::repairable);
  CHECK(repaired(R"(["a\ud800b", "\udc00", "\ud83d\ude00"])", h) == R"(["a\ufffdb", "\ufffd", "\ud83d\ude00"])");
  CHECK(h.count("lone_surrogate") == 2);
  CHECK(result(R"(["a\qb"])") == JsonCheck::repairable);
  CHECK(repaired(R"(["a\qb", "\u12"])", h) == R"(["a\\qb", "\\u12"])");
  CHECK(h.count("invalid_escape") == 2);
  CHECK(repaired(R"(["x\u0000y"])", h) == R"(["x\ufffdy"])");
  CHECK(h.count("nul_character") == 1);
  CHECK(result("[NaN, -Infinity]") == JsonCheck::repairable);
  CHECK(repaired(R"([NaN, -Infinity, Infinity, "NaN"])", h) == R"([null, null, null, "NaN"])");
  CHECK(h.count("non_finite_number") == 3);
  CHECK(result("[\"a\x01\"]") == JsonCheck::repairable);
  CHECK(result("[\"\xff\"]") == JsonCheck::repairable);
  CHECK(result("[\xff]") == JsonCheck::invalid);  // outside a string it is not JSON, repaired or not
  for (const char* fixed : {R"(["a\ufffdb"])", R"(["a\\qb"])", "[null]"}) CHECK(result(fixed) == JsonCheck::ok);
}

TEST_CASE("check_json counts the top-level array's elements (a speculative chunk's rows)") {
  auto elements = [](std::string_view s) {
    JsonCheck c = check_json(s.data(), s.size());
    REQUIRE(c.result != JsonCheck::invalid);
    return c.elements;
  };
  CHECK(elements("[]") == 0);
  CHECK(elements(" [ ] ") == 0);
  CHECK(elements("[{}]") == 1);
  CHECK(elements(R"([{"a":[1,2,3]},{"b":{"c":1,"d":2}}, "x,y", 4])") == 4);  // nested commas not counted
  CHECK(elements("[[1,2],[3]]") == 2);
  CHECK(elements(R"({"a":1,"b":2})") == 0);  // not an array
  CHECK(elements("7") == 0);
}
