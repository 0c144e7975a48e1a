#include "src/json_check.h"

#include <emmintrin.h>
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

// What one escape at d[p] == '\\' (inside a string) is, and how many bytes it spans.
struct Escape {
  enum Kind { plain, bad, lone_surrogate, nul } kind;
  size_t len;
};
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

// p just past the opening quote; returns the index after the closing quote, or npos when the text
// ends first. Sets `repair` for control characters and escapes that repair_json() rewrites.
size_t scan_string(const char* d, size_t n, size_t p, bool& repair) {
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
  for (;;) {
    while (p + 16 <= n) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
      // v <= 0x1F (unsigned) <=> max(v, 0x1F) == 0x1F
      __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                     _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
      if (int m = _mm_movemask_epi8(special)) {
        p += __builtin_ctz(m);
        goto special;
      }
      p += 16;
    }
    while (p < n && d[p] != '"' && d[p] != '\\' && (unsigned char)d[p] >= 0x20) ++p;
    if (p >= n) return std::string_view::npos;
  special:
    if (d[p] == '"') return p + 1;
    if (d[p] == '\\') {
      Escape e = classify_escape(d, n, p);
      if (e.kind != Escape::plain) repair = true;
      p += e.len;
    } else {
      repair = true;  // a raw control character
      ++p;
    }
  }
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

}  // namespace

JsonCheck check_json(const char* d, size_t n) {
  bool repair = !simdjson::validate_utf8(d, n);  // bytes outside strings are checked as grammar below
  std::vector<char> open;                        // '{' or '[' per nesting level
  size_t p = 0, commas = 0;                      // commas: between the top-level array's elements
  bool filled = false;                           // the top-level value is a non-empty array
  auto fail = [&](size_t at, std::string what) {
    return JsonCheck{JsonCheck::invalid, at, "malformed JSON: " + what + found(d, n, at)};
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
      size_t e = scan_string(d, n, p + 1, repair);
      if (e == std::string_view::npos) return JsonCheck{JsonCheck::invalid, p, "unclosed string"};
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
        size_t e = scan_number(d, n, p, why);
        if (e == std::string_view::npos) return JsonCheck{JsonCheck::invalid, p, why};
        p = e;
        goto after;
      }
      return fail(p, "expected a value");
  }
key:
  skip_ws();
  if (p >= n || d[p] != '"') return fail(p, "expected a string key");
  {
    size_t e = scan_string(d, n, p + 1, repair);
    if (e == std::string_view::npos) return JsonCheck{JsonCheck::invalid, p, "unclosed string"};
    p = e;
  }
  skip_ws();
  if (p >= n || d[p] != ':') return fail(p, "expected ':' after a key");
  ++p;
  goto value;
after:
  skip_ws();
  if (open.empty()) {
    if (p < n) return fail(p, "expected the end of the value");
    return JsonCheck{repair ? JsonCheck::repairable : JsonCheck::ok, 0, {}, filled ? commas + 1 : 0};
  }
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

TextBuffer repair_json(const char* p, size_t n, Health& health) {
  std::string out;
  out.reserve(n + n / 16);
  bool in_string = false;
  int64_t bad_utf8 = 0, controls = 0, bad_escapes = 0, surrogates = 0, nuls = 0, non_finite = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)p[i];
    if (c < 0x80) {
      if (in_string && c == '\\') {
        Escape e = classify_escape(p, n, i);
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
