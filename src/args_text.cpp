#include "src/args_text.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstring>

#include "src/json_check.h"
#include "src/json_scan.h"

namespace tlsql::args_text {

namespace {

void put_token(uint32_t id, std::string& out) {
  out.push_back(kToken);
  for (; id >= 64; id >>= 6) out.push_back((char)(0x80 | (id & 63)));
  out.push_back((char)(0xC0 | id));
}

// Past the token at p (its 0x01): the index after its last digit.
size_t token_end(const char* d, size_t n, size_t p) {
  for (++p; p < n && ((uint8_t)d[p] & 0xC0) == 0x80;) ++p;
  return p < n ? p + 1 : n;
}

// A key as minified JSON writes it before its value: `"key":` (the dictionary's form).
std::string key_text(std::string_view key) {
  std::string text;
  text.reserve(key.size() + 3);
  return text.append(1, '"').append(key).append("\":");
}

// The dictionary's id of the key `key` (`"name":` as minified JSON has it), added when new;
// kNone when it is refused (full, or longer than kMaxKeyBytes). A key written with escapes is kept
// as the key it spells ("Input \u0044ims" is "Input Dims"): the same JSON, and every reader of a
// member finds it by its name.
uint32_t key_id(std::string_view key, StringPool::Cache& keys) {
  if (key.size() > kMaxKeyBytes) return StringPool::kNone;
  std::string plain;
  if (key.find('\\') != std::string_view::npos)
    if (auto k = json_scan::plain_key(key.data() + 1, key.data() + key.size())) plain = key_text(*k), key = plain;
  return keys.intern(key, kMaxKeys);
}

// p at a string's opening quote: its closing quote, or nullptr when the text ends first or a
// byte below 0x20 is met (16 bytes a step; only quotes, backslashes and control bytes stop it).
const char* string_end(const char* p, const char* end, bool& escaped) {
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
  ++p;
  for (;;) {
    while (p + 16 <= end) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // v <= 0x1F (unsigned) <=> max(v, 0x1F) == 0x1F
      const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                           _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
      if (const int m = _mm_movemask_epi8(special)) {
        p += __builtin_ctz(m);
        goto special;
      }
      p += 16;
    }
    while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) ++p;
    if (p >= end) return nullptr;
  special:
    if (*p == '"') return p;
    if (*p != '\\') return nullptr;  // a control byte
    escaped = true;
    p += 2;
    if (p > end) return nullptr;
  }
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// minify_encode's walk from `p`: the whole text, or with `one_value` only the object or array at
// `p` (its end is found by the walk: the caller need not know it). Returns where the walk
// stopped, or nullptr where it cannot decide. `members`, when given, gets the outer object's.
// `Checked`: the text is not known to be JSON, and the walk checks it as check_json would (its
// grammar, each scalar, each string's escapes; json_check.h), giving up (nullptr) on anything
// check_json would not call valid: the bytes of an args value are then walked once, not twice.
// (UTF-8 is the caller's: checked for a whole chunk at once.)
template <bool Checked>
const char* walk(const char* p, const char* end, bool one_value, StringPool::Cache& keys, std::string& out,
                 std::vector<Member>* members) {
  size_t opens = 0, depth = 0;
  std::string joined;  // a key whose closing quote and colon have whitespace between them
  // Checked: what JSON lets come next, and whether each open container is an object.
  enum Next : uint8_t { value, value_or_close, key, key_or_close, colon, after };
  [[maybe_unused]] Next next = value;
  [[maybe_unused]] bool object[kMaxBrackets];
  while (p < end) {
    const char c = *p;
    if (c != '"') {
      if (!is_space(c)) {
        if ((unsigned char)c < 0x20) return nullptr;
        if (c == '{' || c == '[') {
          if constexpr (Checked) {
            if ((next != value && next != value_or_close) || depth == kMaxBrackets) return nullptr;
            object[depth] = c == '{';
            next = c == '{' ? key_or_close : value_or_close;
          }
          ++opens, ++depth;
        } else if (c == '}' || c == ']') {
          if constexpr (Checked) {
            const bool brace = c == '}';
            if (depth == 0 || object[depth - 1] != brace ||
                (next != after && next != (brace ? key_or_close : value_or_close)))
              return nullptr;
            next = after;
          }
          if (depth > 0 && --depth == 0 && one_value) {
            out.push_back(c);
            return opens > kMaxBrackets ? nullptr : p + 1;
          }
        } else if constexpr (Checked) {
          if (c == ',') {
            if (next != after || depth == 0) return nullptr;
            next = object[depth - 1] ? key : value;
          } else if (c == ':') {
            if (next != colon) return nullptr;
            next = value;
          } else {  // a number or a literal, checked whole
            const size_t len = json_check::scalar_end(p, (size_t)(end - p), 0);
            if ((next != value && next != value_or_close) || len == json_check::npos) return nullptr;
            out.append(p, len);
            p += len;
            next = after;
            continue;
          }
        }
        out.push_back(c);
      }
      ++p;
      continue;
    }
    const char* open = p;
    bool escaped = false;
    const char* close = string_end(p, end, escaped);
    if (!close) return nullptr;
    p = close + 1;
    if constexpr (Checked) {
      bool repair = false, any = false;
      if (escaped && (json_check::string_end(open, (size_t)(p - open), 1, repair, any) != (size_t)(p - open) || repair))
        return nullptr;
      if (next == value || next == value_or_close) {  // a value, never a key (even before ':')
        out.append(open, (size_t)(p - open));
        next = after;
        continue;
      }
      if (next != key && next != key_or_close) return nullptr;
      next = colon;
    }
    const char* colon = p;
    while (colon < end && is_space(*colon)) ++colon;
    // A string followed by ':' is an object key: as encode() takes it from the minified text.
    if (colon < end && *colon == ':') {
      if (members && depth == 1) {
        const char* value = colon + 1;
        while (value < end && is_space(*value)) ++value;
        members->push_back({{open + 1, (size_t)(close - open - 1)}, value, escaped});
      }
      std::string_view key{open, (size_t)(close + 2 - open)};
      if (colon != p) key = joined.assign(open, close + 1).append(1, ':');
      const uint32_t id = key_id(key, keys);
      if (id != StringPool::kNone) {
        put_token(id, out);
        p = colon + 1;
        if constexpr (Checked) next = value;
        continue;
      }
    }
    out.append(open, (size_t)(p - open));  // (the (pointer, length) form: the pointer pair is a slow replace())
  }
  if (opens > kMaxBrackets) return nullptr;
  if constexpr (Checked)
    if (depth != 0 || next != after) return nullptr;
  return one_value ? nullptr : p;  // (one value: its text ended before the value did)
}

}  // namespace

bool minify_encode(std::string_view json, StringPool::Cache& keys, std::string& out) {
  return walk<false>(json.data(), json.data() + json.size(), false, keys, out, nullptr) != nullptr;
}

size_t minify_encode_object(const char* p, const char* end, StringPool::Cache& keys, std::string& out,
                            std::vector<Member>& members, bool checked) {
  if (p >= end || *p != '{') return 0;
  const char* stop =
      checked ? walk<true>(p, end, true, keys, out, &members) : walk<false>(p, end, true, keys, out, &members);
  return stop ? (size_t)(stop - p) : 0;
}

bool encode(std::string_view json, StringPool::Cache& keys, std::string& out) {
  // (A min over the bytes vectorizes: the text is checked at memory speed.)
  unsigned char low = 0xff;
  for (char c : json) low = std::min(low, (unsigned char)c);
  if (low < 0x20) return false;
  const char* p = json.data();
  const char* end = p + json.size();
  const char* copied = p;  // the text before it is in `out`
  while (const auto* open = static_cast<const char*>(std::memchr(p, '"', (size_t)(end - p)))) {
    // The string's closing quote: the next one not escaped (preceded by an even run of backslashes).
    const char* close = open + 1;
    for (;; ++close) {
      close = static_cast<const char*>(std::memchr(close, '"', (size_t)(end - close)));
      if (!close) break;
      size_t slashes = 0;
      for (const char* b = close - 1; b > open && *b == '\\'; --b) ++slashes;
      if (slashes % 2 == 0) break;
    }
    if (!close) break;  // unterminated (not JSON): the rest is copied as it is
    p = close + 1;
    // In minified JSON a string followed by ':' is an object key.
    if (p < end && *p == ':') {
      const uint32_t id = key_id({open, (size_t)(p + 1 - open)}, keys);
      if (id != StringPool::kNone) {
        out.append(copied, open);
        put_token(id, out);
        copied = ++p;
      }
    }
  }
  out.append(copied, end);
  return true;
}

void encode_key(std::string_view key, StringPool::Cache& keys, std::string& out) {
  const uint32_t id = key_id(key, keys);
  if (id != StringPool::kNone)
    put_token(id, out);
  else
    out += key;
}

std::string_view decode(std::string_view stored, const StringPool& keys, std::string& buf) {
  // Written through a pointer into `buf`, grown as keys need (no per-append checks): the literal
  // runs between tokens are a few bytes each, and decoding runs once per row a query reads.
  const char* p = stored.data();
  const char* end = p + stored.size();
  size_t room = stored.size() * 3 + 64 + TextArena::kSlack;
  if (buf.size() < room) buf.resize(room);
  char* out = buf.data();
  auto reserve = [&](size_t more) {  // room for `more` bytes, what is left of `stored` and the slack
    const size_t at = (size_t)(out - buf.data()), need = at + more + (size_t)(end - p) + TextArena::kSlack;
    if (need > buf.size()) buf.resize(std::max(need, buf.size() * 2)), out = buf.data() + at;
  };
  while (p < end) {
    const auto* t = static_cast<const char*>(std::memchr(p, kToken, (size_t)(end - p)));
    const char* run_end = t ? t : end;
    std::memcpy(out, p, (size_t)(run_end - p));
    out += run_end - p;
    if (!t) break;
    uint32_t id = 0;
    int shift = 0;
    for (p = t + 1; p < end && shift < 32; shift += 6) {
      const auto b = (uint8_t)*p++;
      id |= (uint32_t)(b & 63) << shift;
      if ((b & 0xC0) == 0xC0) break;
    }
    if (id < keys.size()) {
      const std::string_view key = keys.get(id);
      reserve(key.size());
      std::memcpy(out, key.data(), key.size());
      out += key.size();
    }
  }
  const size_t n = (size_t)(out - buf.data());
  std::memset(out, ' ', TextArena::kSlack);
  return {buf.data(), n};
}

std::string key_token(std::string_view key, const StringPool& keys) {
  // (The pool is read-only once the store is loaded: a linear search of a few hundred keys.)
  const std::string text = key_text(key);
  for (size_t id = 0; id < keys.size(); ++id)
    if (keys.get((uint32_t)id) == text) {
      std::string token;
      put_token((uint32_t)id, token);
      return token;
    }
  return {};
}

std::string stored_key(std::string_view key, const StringPool& keys) {
  std::string token = key_token(key, keys);
  return token.empty() ? key_text(key) : token;
}

namespace {
// Calls fn(key as stored, raw value) for each top-level member of the encoded object `stored`, in
// order, while fn returns true. Returns 1 when the walk reached the object's closing brace, 0
// when fn stopped it, -1 when `stored` is not an object or ends early.
template <class Fn>
int walk_members(std::string_view stored, Fn&& fn) {
  const char* d = stored.data();
  const size_t n = stored.size();
  if (n < 2 || d[0] != '{') return -1;
  if (d[1] == '}') return 1;
  for (size_t p = 1; p < n;) {
    size_t value;  // where the member's value starts
    if (d[p] == kToken) {
      value = token_end(d, n, p);
    } else if (d[p] == '"') {
      value = json_scan::skip_string(d, n, p);
      if (value == json_scan::npos || value >= n || d[value] != ':') return -1;
      ++value;
    } else {
      return -1;
    }
    const size_t after = json_scan::skip_value(d, n, value);
    if (after == json_scan::npos || after == value) return -1;  // (no value: not JSON)
    if (!fn(std::string_view(d + p, value - p), std::string_view(d + value, after - value))) return 0;
    if (after >= n) return -1;
    if (d[after] == '}') return 1;
    if (d[after] != ',') return -1;
    p = after + 1;
  }
  return -1;
}
}  // namespace

void find_members(std::string_view stored, std::span<const std::string_view> keys, std::span<std::string_view> raw) {
  std::fill(raw.begin(), raw.end(), std::string_view());
  size_t left = keys.size();
  if (left == 0) return;
  walk_members(stored, [&](std::string_view key, std::string_view value) {
    for (size_t i = 0; i < keys.size(); ++i)
      if (raw[i].empty() && key == keys[i]) raw[i] = value, --left;
    return left > 0;
  });
}

bool last_members(std::string_view stored, std::span<const std::string_view> keys, std::span<std::string_view> raw) {
  std::fill(raw.begin(), raw.end(), std::string_view());
  bool escaped = false;
  const int walked = walk_members(stored, [&](std::string_view key, std::string_view value) {
    if (key[0] == '"' && key.find('\\') != std::string_view::npos) return escaped = true, false;
    // (Keys are mostly tokens of one length: their last byte, the id's top digit, tells most
    // apart before a memcmp call.)
    for (size_t i = 0; i < keys.size(); ++i)
      if (key.size() == keys[i].size() && key.back() == keys[i].back() && key == keys[i]) raw[i] = value;
    return true;
  });
  return walked == 1 && !escaped;
}

std::string_view member_value(std::string_view raw, const StringPool& keys, std::string& buf) {
  return raw.find(kToken) == std::string_view::npos ? raw : decode(raw, keys, buf);
}

}  // namespace tlsql::args_text
