#include "src/json_check.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cstring>
#include <vector>

namespace tlsql {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// The 4 hex digits at d[p, p+4) as a code unit, or -1.
int hex4(const char* d, size_t n, size_t p) {
  if (p + 4 > n) return -1;
  int v = 0;
  for (size_t i = 0; i < 4; ++i) {
    int h = hex_value(d[p + i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}
bool starts(const char* d, size_t n, size_t p, std::string_view lit) {
  return p + lit.size() <= n && std::memcmp(d + p, lit.data(), lit.size()) == 0;
}

// p at '-' or a digit; returns the index past the number, or npos with `why` set.
size_t scan_number(const char* d, size_t n, size_t p, const char*& why) {
  if (d[p] == '-') ++p;
  if (p >= n || !is_digit(d[p])) return why = "malformed number: expected a digit", std::string_view::npos;
  if (d[p] == '0') {
    ++p;
    if (p < n && is_digit(d[p])) return why = "malformed number: leading zero", std::string_view::npos;
  } else {
    while (p < n && is_digit(d[p])) ++p;
  }
  if (p < n && d[p] == '.') {
    ++p;
    if (p >= n || !is_digit(d[p])) return why = "malformed number: expected a digit after '.'", std::string_view::npos;
    while (p < n && is_digit(d[p])) ++p;
  }
  if (p < n && (d[p] == 'e' || d[p] == 'E')) {
    ++p;
    if (p < n && (d[p] == '+' || d[p] == '-')) ++p;
    if (p >= n || !is_digit(d[p]))
      return why = "malformed number: expected a digit in the exponent", std::string_view::npos;
    while (p < n && is_digit(d[p])) ++p;
  }
  return p;
}

// Python's non-finite literals at d[p], or 0.
size_t non_finite_len(const char* d, size_t n, size_t p) {
  for (std::string_view lit : {"NaN", "Infinity", "-Infinity"})
    if (starts(d, n, p, lit)) return lit.size();
  return 0;
}

std::string found(const char* d, size_t n, size_t p) {
  if (p >= n) return " (end of text)";
  unsigned char c = (unsigned char)d[p];
  return c >= 0x20 && c < 0x7F ? fmt::format(", found '{}'", (char)c) : fmt::format(", found byte 0x{:02x}", c);
}

constexpr size_t npos = std::string_view::npos;

// check_json's walk of the value starting at or after p (white space first): p past it, or the
// error in `err`. `commas` counts the commas between the outermost array's elements and `filled`
// says it has some, when the value is an array. Never recurses: nesting costs a byte of heap a level.
bool walk_value(const char* d, size_t n, size_t& p, bool& repair, size_t& commas, bool& filled, JsonCheck& err) {
  std::vector<char> open;  // '{' or '[' per nesting level
  auto fail = [&](size_t at, std::string what) {
    err = JsonCheck{JsonCheck::invalid, at, "malformed JSON: " + what + found(d, n, at)};
    return false;
  };
  auto skip_ws = [&] {
    while (p < n && is_ws(d[p])) ++p;
  };
value:
  skip_ws();
  if (p >= n) return fail(p, "expected a value");
  switch (d[p]) {
    case '{':
    case '[': {
      const char kind = d[p], close = kind == '{' ? '}' : ']';
      open.push_back(kind);
      ++p;
      skip_ws();
      if (p < n && d[p] == close) {  // empty container
        open.pop_back();
        ++p;
        goto after;
      }
      if (open.size() == 1) filled = kind == '[';
      if (kind == '{') goto key;
      goto value;
    }
    case '"': {
      bool escaped = false;
      const size_t e = json_check::string_end(d, n, p + 1, repair, escaped);
      if (e == npos) return err = JsonCheck{JsonCheck::invalid, p, "unclosed string"}, false;
      p = e;
      goto after;
    }
    case 't':
    case 'f':
    case 'n':
      for (std::string_view lit : {"true", "false", "null"})
        if (starts(d, n, p, lit)) {
          p += lit.size();
          goto after;
        }
      return fail(p, "invalid literal: expected true, false or null");
    default:
      if (size_t len = non_finite_len(d, n, p)) {
        repair = true;
        p += len;
        goto after;
      }
      if (d[p] == '-' || is_digit(d[p])) {
        const char* why = nullptr;
        const size_t e = scan_number(d, n, p, why);
        if (e == npos) return err = JsonCheck{JsonCheck::invalid, p, why}, false;
        p = e;
        goto after;
      }
      return fail(p, "expected a value");
  }
key:
  skip_ws();
  if (p >= n || d[p] != '"') return fail(p, "expected a string key");
  {
    bool escaped = false;
    const size_t e = json_check::string_end(d, n, p + 1, repair, escaped);
    if (e == npos) return err = JsonCheck{JsonCheck::invalid, p, "unclosed string"}, false;
    p = e;
  }
  skip_ws();
  if (p >= n || d[p] != ':') return fail(p, "expected ':' after a key");
  ++p;
  goto value;
after:
  if (open.empty()) return true;
  skip_ws();
  if (p < n && d[p] == ',') {
    ++p;
    if (open.back() == '{') goto key;
    commas += open.size() == 1;
    goto value;
  }
  if (p < n && d[p] == (open.back() == '{' ? '}' : ']')) {
    open.pop_back();
    ++p;
    goto after;
  }
  return fail(p, open.back() == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
}

}  // namespace

JsonCheck check_json(const char* d, size_t n) {
  bool repair = !simdjson::validate_utf8(d, n);  // bytes outside strings are checked as grammar below
  size_t p = 0, commas = 0;                      // commas: between the top-level array's elements
  bool filled = false;                           // the top-level value is a non-empty array
  JsonCheck err;
  if (!walk_value(d, n, p, repair, commas, filled, err)) return err;
  while (p < n && is_ws(d[p])) ++p;
  if (p < n) return JsonCheck{JsonCheck::invalid, p, "malformed JSON: expected the end of the value" + found(d, n, p)};
  return JsonCheck{repair ? JsonCheck::repairable : JsonCheck::ok, 0, {}, filled ? commas + 1 : 0};
}

namespace json_check {

Escape classify_escape(const char* d, size_t n, size_t p) {
  if (p + 1 >= n) return {Escape::bad, 1};
  switch (d[p + 1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': return {Escape::plain, 2};
    case 'u': break;
    default: return {Escape::bad, 1};
  }
  int u = hex4(d, n, p + 2);
  if (u < 0) return {Escape::bad, 1};
  if (u == 0) return {Escape::nul, 6};
  if (u >= 0xDC00 && u <= 0xDFFF) return {Escape::lone_surrogate, 6};
  if (u >= 0xD800 && u <= 0xDBFF) {
    int lo = p + 7 < n && d[p + 6] == '\\' && d[p + 7] == 'u' ? hex4(d, n, p + 8) : -1;
    if (lo >= 0xDC00 && lo <= 0xDFFF) return {Escape::plain, 12};
    return {Escape::lone_surrogate, 6};
  }
  return {Escape::plain, 6};
}

size_t value_end(const char* d, size_t n, size_t p, bool& repair) {
  size_t commas = 0;
  bool filled = false;
  JsonCheck err;
  return walk_value(d, n, p, repair, commas, filled, err) ? p : npos;
}

}  // namespace json_check

TextBuffer repair_json(const char* p, size_t n, Health& health) {
  std::string out;
  out.reserve(n + n / 16);
  bool in_string = false;
  int64_t bad_utf8 = 0, controls = 0, bad_escapes = 0, surrogates = 0, nuls = 0, non_finite = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)p[i];
    if (c < 0x80) {
      if (in_string && c == '\\') {
        using json_check::Escape;
        const Escape e = json_check::classify_escape(p, n, i);
        switch (e.kind) {
          case Escape::plain: out.append(p + i, e.len); break;
          case Escape::bad: out += "\\\\", ++bad_escapes; break;  // the backslash becomes a character
          case Escape::lone_surrogate: out += "\\ufffd", ++surrogates; break;
          case Escape::nul: out += "\\ufffd", ++nuls; break;
        }
        i += e.len;
        continue;
      }
      if (!in_string) {
        if (size_t len = non_finite_len(p, n, i)) {
          out += "null";
          ++non_finite;
          i += len;
          continue;
        }
      }
      if (c == '"') in_string = !in_string;
      if (in_string && c < 0x20) {
        out += fmt::format("\\u{:04x}", c);
        ++controls;
      } else {
        out += (char)c;
      }
      ++i;
      continue;
    }
    // Validate one UTF-8 sequence (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    bool ok = len != 0 && c <= 0xF4 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = ((unsigned char)p[i + k] & 0xC0) == 0x80;
    if (ok && len == 3) {
      unsigned char c1 = (unsigned char)p[i + 1];
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && len == 4) {
      unsigned char c1 = (unsigned char)p[i + 1];
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(p + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++bad_utf8;
      ++i;
    }
  }
  if (bad_utf8) health.add("invalid_utf8", -1, "bytes that are not valid UTF-8 replaced by U+FFFD", bad_utf8);
  if (controls)
    health.add("control_characters", -1, "raw control characters inside strings escaped as \\u00XX", controls);
  if (bad_escapes)
    health.add("invalid_escape", -1, "escapes JSON does not have (\\x, \\u12): the backslash kept as a character",
               bad_escapes);
  if (surrogates)
    health.add("lone_surrogate", -1, "\\u escapes of half a UTF-16 surrogate pair replaced by U+FFFD", surrogates);
  if (nuls) health.add("nul_character", -1, "\\u0000 in strings replaced by U+FFFD (SQLite text stops at NUL)", nuls);
  if (non_finite)
    health.add("non_finite_number", -1, "NaN / Infinity (Python json's extension, not JSON) stored as null",
               non_finite);
  TextBuffer b(out.size());
  std::memcpy(b.data(), out.data(), out.size());
  return b;
}

}  // namespace tlsql
