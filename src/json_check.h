// What the loader accepts as JSON, in one place. The readers read only the members tlsql uses and
// skip the rest, so every piece of text is held to these rules: checked whole by check_json(), or,
// by the Kineto reader's checked walk, piece by piece with the json_check:: functions below as it
// reads (falling back to check_json() wherever it is not sure).
// Anything that is not JSON (RFC 8259) is an error with its offset; the string defects real
// traces carry are repaired by repair_json() and counted in health, never dropped silently.
#pragma once

#include <emmintrin.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "src/health.h"
#include "src/input.h"

namespace tlsql {

struct JsonCheck {
  enum Result {
    ok,
    repairable,  // valid structure, but repair_json() must rewrite some strings or NaN / Infinity first
    invalid      // not JSON: `offset` is the first byte that cannot be, `message` what was expected
  } result = ok;
  size_t offset = 0;
  std::string message;
  // When the value is an array (and not invalid): its elements, counted in the same walk (a
  // speculative chunk's rows, issue 51: the parse threads count them, not the serial scan).
  size_t elements = 0;
};

// Checks that d[0, n) is exactly one JSON value (surrounding whitespace allowed). Never recurses:
// nesting depth costs one byte of heap per level. Repairable defects:
//   - invalid UTF-8 and raw control characters inside strings,
//   - escapes JSON does not have (\x, \u12), lone UTF-16 surrogates and \u0000 (SQLite's text
//     functions stop at NUL),
//   - NaN, Infinity, -Infinity (Python's json writes them; SQLite's JSON functions refuse them).
JsonCheck check_json(const char* d, size_t n);

// Rewrites text that check_json() called repairable: invalid UTF-8 bytes and lone surrogates become
// U+FFFD, raw control characters \u00XX, \u0000 becomes \ufffd, an unknown escape keeps its
// backslash as a character (\x -> \\x), NaN / Infinity become null. Counts each kind in `health`.
TextBuffer repair_json(const char* d, size_t n, Health& health);

// check_json's rules one value at a time, for a reader that checks the text in the walk that
// reads it (the Kineto reader's checked walk, issue 51: the bytes walked once, not twice). Each
// accepts exactly what check_json accepts at that place and sets `repair` where check_json would
// call the text repairable; `npos` where it would call it invalid.
namespace json_check {

constexpr size_t npos = std::string_view::npos;

// What one escape at d[p] == '\\' (inside a string) is, and how many bytes it spans.
struct Escape {
  enum Kind { plain, bad, lone_surrogate, nul } kind;
  size_t len;
};
Escape classify_escape(const char* d, size_t n, size_t p);

// p just past a string's opening quote: the index past its closing quote, or npos when the text
// ends first. Sets `repair` for a raw control character or an escape repair_json() rewrites, and
// `escaped` when the string holds any escape. (Inline: called once per string of a GB trace.)
inline size_t string_end(const char* d, size_t n, size_t p, bool& repair, bool& escaped) {
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
  for (;;) {
    while (p + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
      // v <= 0x1F (unsigned) <=> max(v, 0x1F) == 0x1F
      const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                           _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
      if (const int m = _mm_movemask_epi8(special)) {
        p += (size_t)__builtin_ctz(m);
        goto special;
      }
      p += 16;
    }
    while (p < n && d[p] != '"' && d[p] != '\\' && (unsigned char)d[p] >= 0x20) ++p;
    if (p >= n) return npos;
  special:
    if (d[p] == '"') return p + 1;
    if (d[p] == '\\') {
      escaped = true;
      const Escape e = classify_escape(d, n, p);
      if (e.kind != Escape::plain) repair = true;
      p += e.len;
    } else {
      repair = true;  // a raw control character
      ++p;
    }
  }
}

// d[p] is the first byte of a value (no white space before it): the index past the value, or
// npos where check_json finds an error in it. Never recurses.
size_t value_end(const char* d, size_t n, size_t p, bool& repair);

// d[p] is the first byte of a number or a literal (true, false, null): the index past it when it
// is one and what follows it may (white space, ',', '}', ']' or the text's end), else npos.
// NaN and Infinity are not: check_json calls them repairable. Inline and one pass: an args text
// holds a number every few bytes (shapes, strides).
inline size_t scalar_end(const char* d, size_t n, size_t p) {
  auto digit = [&](size_t i) { return i < n && d[i] >= '0' && d[i] <= '9'; };
  size_t q = p;
  if (q < n && d[q] == '-') ++q;
  if (digit(q)) {
    if (d[q++] != '0')
      while (digit(q)) ++q;
    if (q < n && d[q] == '.') {
      if (!digit(++q)) return npos;
      while (digit(q)) ++q;
    }
    if (q < n && (d[q] == 'e' || d[q] == 'E')) {
      if (++q < n && (d[q] == '+' || d[q] == '-')) ++q;
      if (!digit(q)) return npos;
      while (digit(q)) ++q;
    }
  } else if (q > p) {
    return npos;  // '-' alone
  } else {
    const std::string_view rest(d + p, std::min<size_t>(n - p, 5));
    q = rest.starts_with("true") || rest.starts_with("null") ? p + 4 : rest.starts_with("false") ? p + 5 : p;
    if (q == p) return npos;
  }
  if (q < n && d[q] != ' ' && d[q] != '\n' && d[q] != '\r' && d[q] != '\t' && d[q] != ',' && d[q] != '}' && d[q] != ']')
    return npos;
  return q;
}

}  // namespace json_check

}  // namespace tlsql
