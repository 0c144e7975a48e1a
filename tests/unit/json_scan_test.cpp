// json_scan::walk_array, the serial walk that cuts traceEvents into chunks: its 64-byte block
// path (SSE2 masks, '[' / '{' and ']' / '}' found by one compare each) must report exactly what a
// byte-by-byte walk of the same rule reports, wherever the windows end.
#include "src/json_scan.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <random>
#include <string>
#include <vector>

namespace {

struct Walked {
  std::vector<size_t> commas;
  size_t close = std::string::npos;  // the array's closing bracket, npos if none
};

// The rule, one byte at a time, written apart from json_scan.h: inside the array (depth 1), a
// comma outside strings and nested values separates elements; a quote not escaped by a
// backslash opens or closes a string; the bracket that takes the depth to 0 closes the array.
Walked reference(const std::string& s) {
  Walked w;
  int depth = 1;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) {
        w.close = i;
        return w;
      }
    } else if (c == ',' && depth == 1) {
      w.commas.push_back(i);
    }
  }
  return w;
}

// walk_array over s, shown in windows that grow by the given steps (the scanner's refills).
Walked walked(const std::string& s, const std::vector<size_t>& steps) {
  Walked w;
  tlsql::json_scan::ArrayWalk st;
  size_t p = 0, n = 0;
  for (size_t k = 0; p < s.size(); ++k) {
    n = std::min(s.size(), n + steps[k % steps.size()]);
    size_t r = tlsql::json_scan::walk_array(s.data(), n, p, st, [&](size_t c) { w.commas.push_back(c); });
    if (r < n) {
      w.close = r;
      return w;
    }
    p = n;
  }
  return w;
}

}  // namespace

TEST_CASE("walk_array's block path agrees with a byte-by-byte walk") {
  // The bytes that matter, and near misses for the OR-0x20 compares ('K' 'M' ';' '=' '+' are
  // '[' ']' '{' '}' with one other bit changed), with filler.
  const std::string alphabet = "{}[],\"\\:aKM;=+ ";
  std::mt19937 rng(51);
  for (int round = 0; round < 3000; ++round) {
    const bool with_backslash = round % 3 == 0;  // a backslash sends its block byte by byte
    std::string s;
    size_t len = rng() % 600;
    for (size_t i = 0; i < len; ++i) {
      char c = alphabet[rng() % alphabet.size()];
      if (c == '\\' && !with_backslash) c = 'a';
      // Keep the depth from reaching 0 early most of the time, so long texts are walked.
      if ((c == '}' || c == ']') && rng() % 4) c = '{';
      s += c;
    }
    if (round % 2) s += "]";
    const Walked want = reference(s);
    for (const std::vector<size_t>& steps :
         std::vector<std::vector<size_t>>{{s.size() + 1}, {1}, {63, 65}, {64}, {7, 200, 1, 128}}) {
      const Walked got = walked(s, steps);
      CHECK_MESSAGE(got.commas == want.commas, s);
      CHECK_MESSAGE(got.close == want.close, s);
    }
  }
}

TEST_CASE("walk_array: Kineto-shaped events, cut at their commas only") {
  // Two events, the second's args holding a nested array and a string with "},{" inside: the
  // only element comma is the one between the events.
  const std::string s = R"({"ph":"X","a":1},{"args":{"l":[1,2],"s":"},{\"x"},"n":"]"}])";
  // ^ hand count: `{"ph":"X","a":1}` is 16 bytes, so the comma is at 16.
  const Walked w = walked(s, {s.size()});
  REQUIRE(w.commas.size() == 1);
  CHECK(w.commas[0] == 16);
  CHECK(w.close == s.size() - 1);
  CHECK(reference(s).commas == w.commas);
}

TEST_CASE("guess_cut: the first '}' ',' '{' followed by '\"' or '}', white space allowed between") {
  using tlsql::json_scan::guess_cut;
  using tlsql::json_scan::npos;
  auto cut = [](std::string_view s, size_t from = 0) { return guess_cut(s.data(), s.size(), from); };
  CHECK(cut(R"({"a":1},{"b":2})") == 7);
  CHECK(cut("{\"a\":1}\n  ,\n  {\n    \"b\":2}") == 10);  // Kineto's pretty-printed form
  CHECK(cut(R"({"a":1},{})") == 7);                       // an empty object follows
  CHECK(cut(R"({"a":1},{"b":2},{"c":3})", 8) == 15);      // from an offset
  // No guess: a '{' not starting an object's key, no comma, an array's numbers, the text ending early.
  CHECK(cut(R"({"a":1},{1})") == npos);
  CHECK(cut(R"({"a":1}{"b":2})") == npos);
  CHECK(cut("[1,2,3]") == npos);
  CHECK(cut(R"({"a":1},)") == npos);
  CHECK(cut(R"({"a":1},{)") == npos);
  // Inside a string: `"a},{\"b"` is no guess ('{' is followed by a backslash); `"x},{"` is one (the
  // string's closing quote follows the '{'), and so is a nested array of objects: guesses only,
  // which the chunk ending there disproves (the loader's tests below).
  CHECK(cut(R"({"s":"a},{\"b"})") == npos);
  CHECK(cut(R"({"s":"x},{"})") == 8);
  CHECK(cut(R"({"l":[{"a":1},{"a":2}]})") == 13);  // the comma after {"a":1}: bytes 6-12
}

// json_scan::unescape, which the Kineto reader's walk uses for strings with escapes, against
// simdjson's string parser (what the reader used before): random strings of raw ASCII and UTF-8,
// every escape JSON has, \u escapes of every kind of code unit and surrogate pairs. Half a pair
// and escapes JSON does not have fail both ways.
TEST_CASE("unescape: the content simdjson parses from the same string") {
  std::mt19937 rng(51);
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           " ",
                                           "<>",
                                           "\xC3\xA9",
                                           "\xE2\x82\xAC",
                                           "\xF0\x9F\x98\x80",
                                           "\\\"",
                                           "\\\\",
                                           "\\/",
                                           "\\b",
                                           "\\f",
                                           "\\n",
                                           "\\r",
                                           "\\t",
                                           "\\u0041",
                                           "\\u00e9",
                                           "\\u20AC",
                                           "\\u0001",
                                           "\\u001f",
                                           "\\uFFFD",
                                           "\\uffff",
                                           "\\ud83d\\ude00",
                                           "\\uD800\\uDC00",
                                           "\\udbff\\udfff",
                                           "::",
                                           "{}"};
  simdjson::dom::parser parser;
  for (int i = 0; i < 3000; ++i) {
    std::string content;
    for (int k = (int)(rng() % 12); k > 0; --k) content += pieces[rng() % pieces.size()];
    const std::string text = "\"" + content + "\"";
    CAPTURE(text);
    std::string_view expected;
    REQUIRE(parser.parse(text).get_string().get(expected) == simdjson::SUCCESS);
    std::string got;
    bool escaped = false;
    REQUIRE(tlsql::json_scan::unescape(text.data() + 1, text.data() + text.size(), got, &escaped));
    CHECK(got == expected);
    CHECK(escaped == (content.find('\\') != std::string::npos));
  }
  for (const char* bad : {R"("\ud800")", R"("\udc00 x")", R"("\ud800\u0041")", R"("\x41")", R"("\u12")", R"("open)"}) {
    CAPTURE(bad);
    const std::string text = bad;
    std::string_view parsed;
    CHECK(parser.parse(text).get_string().get(parsed) != simdjson::SUCCESS);
    std::string got;
    CHECK_FALSE(tlsql::json_scan::unescape(text.data() + 1, text.data() + text.size(), got));
  }
}
