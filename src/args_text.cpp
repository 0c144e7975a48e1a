#include "src/args_text.h"

#include <algorithm>
#include <cstring>

namespace tlsql::args_text {

namespace {

void put_token(uint32_t id, std::string& out) {
  out.push_back(kToken);
  do {
    const auto low = (uint8_t)(id & 0x7f);
    id >>= 7;
    out.push_back((char)(id ? low | 0x80 : low));
  } while (id);
}

}  // namespace

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
    if (p < end && *p == ':' && (size_t)(p + 1 - open) <= kMaxKeyBytes) {
      const uint32_t id = keys.intern({open, (size_t)(p + 1 - open)}, kMaxKeys);
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

std::string_view decode(std::string_view stored, const StringPool& keys, std::string& buf) {
  buf.clear();
  const char* p = stored.data();
  const char* end = p + stored.size();
  while (p < end) {
    const auto* t = static_cast<const char*>(std::memchr(p, kToken, (size_t)(end - p)));
    if (!t) {
      buf.append(p, end);
      break;
    }
    buf.append(p, t);
    uint32_t id = 0;
    int shift = 0;
    for (p = t + 1; p < end && shift < 32; shift += 7) {
      const auto b = (uint8_t)*p++;
      id |= (uint32_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    if (id < keys.size()) buf.append(keys.get(id));
  }
  const size_t n = buf.size();
  buf.append(TextArena::kSlack, ' ');
  return {buf.data(), n};
}

std::string key_token(std::string_view key, const StringPool& keys) {
  // (The pool is read-only once the store is loaded: a linear search of a few hundred keys.)
  std::string text;
  text.reserve(key.size() + 3);
  text.append(1, '"').append(key).append("\":");
  for (size_t id = 0; id < keys.size(); ++id)
    if (keys.get((uint32_t)id) == text) {
      std::string token;
      put_token((uint32_t)id, token);
      return token;
    }
  return {};
}

}  // namespace tlsql::args_text
