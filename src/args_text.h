// How the store keeps an event's args text: minified JSON whose object keys are written as short
// tokens into a per-store dictionary. Keys were 50-65% of the args bytes of the shared traces
// ("Profiler Event Index", "registers per thread", ... repeated on every event), and args text
// about half of a loaded trace's memory: a diff of two 1 GB traces held 0.9 GB of it.
//
// A token is the byte 0x01 and the key's id as a little-endian base-128 varint (1-3 bytes); the
// dictionary holds the key with its quotes and colon (`"External id":`), byte for byte as written,
// so decoding gives back exactly the minified text. Minified JSON never holds a byte below 0x20
// (control characters in strings must be escaped), so 0x01 cannot be part of the text; a text
// that holds one anyway is kept as it is, unencoded (the caller is told).
//
// A key is in the dictionary or not, for the whole store: every occurrence of a key the
// dictionary holds is a token, and a key it refused (full: kMaxKeys, or longer than kMaxKeyBytes)
// is always written as it is. A reader looking for one key can therefore search the encoded text
// for its token or its text, without decoding (key_token).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "src/event_store.h"

namespace tlsql::args_text {

constexpr char kToken = 0x01;
constexpr size_t kMaxKeys = 1 << 16;  // a hostile trace with a new key per event stays bounded
constexpr size_t kMaxKeyBytes = 256;

// Appends `json` (minified) to `out` with its keys as tokens, adding new keys to `keys`. False,
// with `out` unchanged, when `json` holds a byte below 0x20: it must be stored as it is.
bool encode(std::string_view json, StringPool::Cache& keys, std::string& out);

// The text `stored` encodes, written into `buf` followed by kSlack readable spaces (simdjson
// parses it in place). `stored` must come from encode() with the same dictionary.
std::string_view decode(std::string_view stored, const StringPool& keys, std::string& buf);

// The token of `key` (`"name":` with quotes and colon) when the dictionary holds it, else "".
std::string key_token(std::string_view key, const StringPool& keys);

}  // namespace tlsql::args_text
