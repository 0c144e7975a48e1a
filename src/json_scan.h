// Minimal string-aware JSON skipping over trusted-enough text: used to split traceEvents into
// chunks (so the parser's memory stays bounded), by the Kineto reader's walk of a checked chunk,
// and to pull one member out of an args object. Validation is check_json()'s job (json_check.h);
// these only find where values start and end, and undo a string's escapes.
#pragma once

#include <emmintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace tlsql::json_scan {

constexpr size_t npos = std::string_view::npos;

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline size_t skip_ws(const char* d, size_t n, size_t p) {
  while (p < n && is_ws(d[p])) ++p;
  return p;
}

// Where a JSON text's first token is in `head`: after a UTF-8 byte order mark and white space
// (head.size() when there is none). What each JSON format's `claims` looks at.
inline size_t text_start(std::string_view head) {
  return skip_ws(head.data(), head.size(), head.starts_with("\xEF\xBB\xBF") ? 3 : 0);
}

// p at the opening quote; returns the index after the closing quote, or npos if the text ends.
// Sets *escaped when the string holds a backslash.
inline size_t skip_string(const char* d, size_t n, size_t p, bool* escaped = nullptr) {
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
  ++p;
  for (;;) {
    while (p + 16 <= n) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
      int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
      if (m) {
        p += __builtin_ctz(m);
        goto found;
      }
      p += 16;
    }
    while (p < n && d[p] != '"' && d[p] != '\\') ++p;
    if (p >= n) return npos;
  found:
    if (d[p] == '\\') {
      if (escaped) *escaped = true;
      p += 2;
      if (p > n) return npos;
      continue;
    }
    return p + 1;
  }
}

// p at the first byte of a value; returns the index just past it, or npos if the text ends
// inside it. Brackets are matched by count only: simdjson checks their kinds later.
inline size_t skip_value(const char* d, size_t n, size_t p) {
  if (p >= n) return npos;
  char c = d[p];
  if (c == '"') return skip_string(d, n, p);
  if (c == '{' || c == '[') {
    // '[' | 0x20 == '{' and ']' | 0x20 == '}', so two compares find all four brackets.
    const __m128i quote = _mm_set1_epi8('"'), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'),
                  low = _mm_set1_epi8(0x20);
    long depth = 0;
    while (p < n) {
      while (p + 16 <= n) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
        __m128i f = _mm_or_si128(v, low);
        int m = _mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_or_si128(_mm_cmpeq_epi8(f, open), _mm_cmpeq_epi8(f, close))));
        if (m) {
          p += __builtin_ctz(m);
          break;
        }
        p += 16;
      }
      if (p >= n) break;
      c = d[p];
      if (c == '"') {
        p = skip_string(d, n, p);
        if (p == npos) return npos;
        continue;
      }
      if (c == '{' || c == '[')
        ++depth;
      else if (c == '}' || c == ']') {
        if (--depth == 0) return p + 1;
      }
      ++p;
    }
    return npos;
  }
  while (p < n && !is_ws(d[p]) && d[p] != ',' && d[p] != '}' && d[p] != ']') ++p;
  return p;
}

// State of a walk through the inside of a JSON array, carried from one window of text to the next.
struct ArrayWalk {
  int depth = 1;  // 1: between the array's elements
  bool in_string = false, escaped = false;
};

// Walks d[p, n) inside an array: calls on_comma(i) for each comma between elements and returns
// the index of the array's closing bracket, or n if the window ends first. Blocks of 64 bytes are
// classified with SSE2 masks (quotes, brackets, commas; in-string bits by prefix xor) so only
// brackets and element commas cost a step; a block holding a backslash goes byte by byte.
template <class OnComma>
size_t walk_array(const char* d, size_t n, size_t p, ArrayWalk& st, OnComma&& on_comma) {
  auto scalar_step = [&](size_t i) -> bool {  // true when i is the closing bracket
    char c = d[i];
    if (st.in_string) {
      if (st.escaped)
        st.escaped = false;
      else if (c == '\\')
        st.escaped = true;
      else if (c == '"')
        st.in_string = false;
      return false;
    }
    switch (c) {
      case '"': st.in_string = true; break;
      case '{':
      case '[': ++st.depth; break;
      case '}':
      case ']': return --st.depth == 0;
      case ',':
        if (st.depth == 1) on_comma(i);
        break;
      default: break;
    }
    return false;
  };
  // One block's masks from one load of its 64 bytes: '[' and '{' differ only in bit 0x20, as do
  // ']' and '}', so OR-ing 0x20 in finds each pair with one compare (5 compares, not 7 passes of
  // 4 loads each: this walk is the serial part of the load, issue 51).
  struct Masks {
    uint64_t quote, backslash, open, close, comma;
  };
  auto classify = [&](size_t i) {
    Masks m{};
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), comma = _mm_set1_epi8(','),
                  open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), lower = _mm_set1_epi8(0x20);
    for (int k = 0; k < 4; ++k) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i + 16 * k));
      const __m128i folded = _mm_or_si128(x, lower);
      const int sh = 16 * k;
      m.quote |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, quote)) << sh;
      m.backslash |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, backslash)) << sh;
      m.comma |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, comma)) << sh;
      m.open |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)) << sh;
      m.close |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)) << sh;
    }
    return m;
  };
  size_t i = p;
  while (i + 64 <= n) {
    if (st.escaped) {
      for (size_t e = i + 64; i < e; ++i)
        if (scalar_step(i)) return i;
      continue;
    }
    const Masks cls = classify(i);
    if (cls.backslash) {
      for (size_t e = i + 64; i < e; ++i)
        if (scalar_step(i)) return i;
      continue;
    }
    uint64_t in = cls.quote;  // prefix xor: bit k = odd number of quotes at or before k
    for (int sh = 1; sh < 64; sh <<= 1) in ^= in << sh;
    if (st.in_string) in = ~in;
    st.in_string = in >> 63;
    uint64_t open = cls.open & ~in;
    uint64_t close = cls.close & ~in;
    uint64_t comma = cls.comma & ~in;
    uint64_t brackets = open | close;
    int from = 0;
    auto commas_until = [&](int to) {  // element commas in bits [from, to)
      if (st.depth != 1 || from >= 64) return;
      uint64_t m = comma & (to >= 64 ? ~0ull : ((1ull << to) - 1)) & (~0ull << from);
      for (; m; m &= m - 1) on_comma(i + (size_t)__builtin_ctzll(m));
    };
    for (; brackets; brackets &= brackets - 1) {
      int b = __builtin_ctzll(brackets);
      commas_until(b);
      if (open >> b & 1) {
        ++st.depth;
      } else if (--st.depth == 0) {
        return i + (size_t)b;
      }
      from = b + 1;
    }
    commas_until(64);
    i += 64;
  }
  for (; i < n; ++i)
    if (scalar_step(i)) return i;
  return n;
}

// A guess at a boundary between two events of an array, for cutting a file at an offset without
// walking the text before it (issue 51): the first comma in d[p, n) that has a '}' before it and a
// '{' after it (white space between), the '{' followed by '"' or '}' (an object's first key, or an
// empty object), all inside [p, n). npos when there is none. Only a guess: text inside a string
// or a nested array of objects looks the same; the chunk that ends at the guess proves it (a
// chunk that starts at a true boundary and is valid JSON as "[" + chunk + "]" ends at one too).
inline size_t guess_cut(const char* d, size_t n, size_t p) {
  auto skip = [&](size_t i) { return skip_ws(d, n, i); };
  for (size_t i = p; i < n; ++i) {
    const void* brace = std::memchr(d + i, '}', n - i);
    if (!brace) return npos;
    i = (size_t)(static_cast<const char*>(brace) - d);
    const size_t comma = skip(i + 1);
    if (comma >= n || d[comma] != ',') continue;
    const size_t open = skip(comma + 1);
    if (open >= n || d[open] != '{') continue;
    const size_t first = skip(open + 1);
    if (first < n && (d[first] == '"' || d[first] == '}')) return comma;
  }
  return npos;
}

// The raw text of member `key` of the JSON object `obj` (top level only), or empty if absent.
inline std::string_view find_member(std::string_view obj, std::string_view key) {
  const char* d = obj.data();
  size_t n = obj.size(), p = skip_ws(d, n, 0);
  if (p >= n || d[p] != '{') return {};
  ++p;
  for (;;) {
    p = skip_ws(d, n, p);
    if (p >= n || d[p] != '"') return {};
    size_t kend = skip_string(d, n, p);
    if (kend == npos) return {};
    std::string_view k(d + p + 1, kend - p - 2);
    p = skip_ws(d, n, kend);
    if (p >= n || d[p] != ':') return {};
    p = skip_ws(d, n, p + 1);
    size_t vend = skip_value(d, n, p);
    if (vend == npos) return {};
    if (k == key) return {d + p, vend - p};
    p = skip_ws(d, n, vend);
    if (p >= n || d[p] != ',') return {};
    ++p;
  }
}

// Calls fn(raw key text, value text) for each member of object `obj`, in order. False when `obj`
// is not an object or ends early (the members up to there were passed).
template <class Fn>
bool for_each_member(std::string_view obj, Fn&& fn) {
  const char* d = obj.data();
  size_t n = obj.size(), p = skip_ws(d, n, 0);
  if (p >= n || d[p] != '{') return false;
  p = skip_ws(d, n, p + 1);
  if (p < n && d[p] == '}') return true;
  for (;;) {
    if (p >= n || d[p] != '"') return false;
    size_t kend = skip_string(d, n, p);
    if (kend == npos) return false;
    std::string_view k(d + p + 1, kend - p - 2);
    p = skip_ws(d, n, kend);
    if (p >= n || d[p] != ':') return false;
    p = skip_ws(d, n, p + 1);
    size_t vend = skip_value(d, n, p);
    if (vend == npos) return false;
    fn(k, std::string_view(d + p, vend - p));
    p = skip_ws(d, n, vend);
    if (p < n && d[p] == '}') return true;
    if (p >= n || d[p] != ',') return false;
    p = skip_ws(d, n, p + 1);
  }
}

// Drops whitespace outside strings: the form SQLite's json functions return.
inline std::string minify(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (size_t p = 0; p < v.size();) {
    char c = v[p];
    if (c == '"') {
      size_t e = skip_string(v.data(), v.size(), p);
      if (e == npos) e = v.size();
      out.append(v.substr(p, e - p));
      p = e;
    } else {
      if (!is_ws(c)) out += c;
      ++p;
    }
  }
  return out;
}

// The content of the JSON string whose text starts at `raw` (past its opening quote), its escapes
// undone, appended to `out`; sets *escaped when it held one. False when the text ends before its
// closing quote or holds an escape JSON does not have or half a surrogate pair (check_json() calls
// such text repairable, and repair_json() mends it before a reader sees it). Surrogate pairs
// become one UTF-8 character.
inline bool unescape(const char* raw, const char* end, std::string& out, bool* escaped = nullptr) {
  auto hex4 = [&](const char* p, uint32_t& v) {
    if (end - p < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = p[i];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      v = v * 16 + (uint32_t)d;
    }
    return true;
  };
  for (const char* p = raw; p < end;) {
    const char* run = p;  // the bytes up to the next quote or backslash are the content itself
    while (p < end && *p != '"' && *p != '\\') ++p;
    out.append(run, p);
    if (p >= end) return false;
    if (*p == '"') return true;
    if (escaped) *escaped = true;
    if (end - p < 2) return false;
    const char e = p[1];
    p += 2;
    uint32_t cp = 0;
    switch (e) {
      case '"': cp = '"'; break;
      case '\\': cp = '\\'; break;
      case '/': cp = '/'; break;
      case 'b': cp = '\b'; break;
      case 'f': cp = '\f'; break;
      case 'n': cp = '\n'; break;
      case 'r': cp = '\r'; break;
      case 't': cp = '\t'; break;
      case 'u': {
        if (!hex4(p, cp)) return false;
        p += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {  // a high surrogate: its low half must follow
          uint32_t lo = 0;
          if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, lo) || lo < 0xDC00 || lo >= 0xE000)
            return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          p += 6;
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return false;
        }
        break;
      }
      default: return false;
    }
    if (cp < 0x80) {
      out += (char)cp;
    } else if (cp < 0x800) {
      out += (char)(0xC0 | (cp >> 6)), out += (char)(0x80 | (cp & 63));
    } else if (cp < 0x10000) {
      out += (char)(0xE0 | (cp >> 12)), out += (char)(0x80 | ((cp >> 6) & 63)), out += (char)(0x80 | (cp & 63));
    } else {
      out += (char)(0xF0 | (cp >> 18)), out += (char)(0x80 | ((cp >> 12) & 63));
      out += (char)(0x80 | ((cp >> 6) & 63)), out += (char)(0x80 | (cp & 63));
    }
  }
  return false;  // no closing quote
}

// An object key with escapes, as the key it names: `raw` is the text between its quotes (from
// the opening quote's next byte on; it ends at the first quote not escaped). JSON lets a writer
// escape any character of a key ("n\u0061me" is "name"), and an escaped key is the same key.
// Returns the unescaped key when `raw` holds a backslash and the key is plain text (no control
// character, quote or backslash: it can be written back without escapes, and every key tlsql
// reads is such); nullopt otherwise (no escape to undo, or a key no reader looks for). A lone
// surrogate makes the key not plain.
inline std::optional<std::string> plain_key(const char* raw, const char* end) {
  std::string out;
  bool escaped = false;
  if (!unescape(raw, end, out, &escaped) || !escaped) return std::nullopt;
  for (const char c : out)
    if ((unsigned char)c < 0x20 || c == '"' || c == '\\') return std::nullopt;
  return out;
}

}  // namespace tlsql::json_scan
