// How the store keeps an event's args text: minified JSON whose object keys are written as short
// tokens into a per-store dictionary. Keys were 50-65% of the args bytes of the shared traces
// ("Profiler Event Index", "registers per thread", ... repeated on every event), and args text
// about half of a loaded trace's memory: a diff of two 1 GB traces held 0.9 GB of it.
//
// A token is the byte 0x01 and the key's id in base 64, low digits first: 0x80 | digit, the last
// 0xC0 | digit (ids below 64 take two bytes in all, below 4096 three). The dictionary holds the
// key with its quotes and colon (`"External id":`), byte for byte as written, so decoding gives
// back exactly the minified text. Minified JSON never holds a byte below 0x20 (control characters
// in strings must be escaped), so 0x01 cannot be part of the text; a text that holds one anyway
// is kept as it is, unencoded (the caller is told). No token byte is a quote, bracket, comma or
// space, so json_scan skips the values of an encoded text as it skips JSON's (find_members).
//
// A key is in the dictionary or not, for the whole store: every occurrence of a key the
// dictionary holds is a token, and a key it refused (full: kMaxKeys, or longer than kMaxKeyBytes)
// is always written as it is. A reader looking for one key can therefore search the encoded text
// for its token or its text, without decoding (key_token).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/event_store.h"

namespace tlsql::args_text {

constexpr char kToken = 0x01;
constexpr size_t kMaxKeys = 1 << 16;  // a hostile trace with a new key per event stays bounded
constexpr size_t kMaxKeyBytes = 256;
// An args value with more brackets than this is not walked as one (minify_encode gives up): the
// reader's depth rule must look at it.
constexpr size_t kMaxBrackets = 1000;

// Appends `json` (minified) to `out` with its keys as tokens, adding new keys to `keys`. False,
// with `out` unchanged, when `json` holds a byte below 0x20: it must be stored as it is.
bool encode(std::string_view json, StringPool::Cache& keys, std::string& out);

// Appends what encode() writes for the object key `key` (`"name":`, as minified JSON has it):
// its token, adding it to `keys` when new, else the key as it is (the dictionary refused it). For
// writers that make args text themselves (src/readers/event_records.h) and store it as written.
void encode_key(std::string_view key, StringPool::Cache& keys, std::string& out);

// minify (json_scan::minify: no whitespace outside strings) and encode() in one walk of an
// args value as it lies in the trace, appending to `out`: the bytes of Kineto's indented args are
// read once rather than three times (minify, the control-byte check, encode's quote search).
// False, `out` then partly written, where the one walk cannot decide and the caller takes the
// two-step path: a byte below 0x20 in a string (encode() refuses it), a string left open, or more
// than kMaxBrackets brackets (the reader's depth limit must look). Keys met before it gave up may be in
// the dictionary already: harmless, as a key's presence is store-wide (see above).
bool minify_encode(std::string_view json, StringPool::Cache& keys, std::string& out);

// A member of an args object as the walk below met it: its key as written between the quotes,
// whether that holds an escape, and where its value starts in the text.
struct Member {
  std::string_view key;
  const char* value;
  bool escaped_key;
};
// minify_encode of the object that starts at `p` (where a trace's event has its "args"), its end
// found by the same walk, so that no other walk of its members is needed: the reader takes the
// keys it knows from `members` (the outer object's, in order). Returns the object's length in the
// text, or 0 where minify_encode would return false (then the caller takes its other path).
// `checked`: the text is not known to be JSON; the walk checks what it walks as check_json would
// and returns 0 for anything check_json would not call valid (repairable text too).
size_t minify_encode_object(const char* p, const char* end, StringPool::Cache& keys, std::string& out,
                            std::vector<Member>& members, bool checked = false);

// The text `stored` encodes, written into `buf` followed by kSlack readable spaces (simdjson
// parses it in place). `stored` must come from encode() with the same dictionary.
std::string_view decode(std::string_view stored, const StringPool& keys, std::string& buf);

// The token of `key` (`"name":` with quotes and colon) when the dictionary holds it, else "".
// (A linear search of the dictionary: once per key and query, not per row.)
std::string key_token(std::string_view key, const StringPool& keys);

// `key` as the store's texts write it: its token, else `"key":` (the dictionary refused it).
std::string stored_key(std::string_view key, const StringPool& keys);

// The values of the top-level members written keys[i] (stored_key) of an encoded args object, in
// one walk of its members and without decoding the rest of it: raw[i] as it lies in `stored`, ""
// when there is no such member or `stored` is not an object. (One walk for all: the event table
// reads a row's input_dims, input_types, ... one column at a time, and a walk per key re-read the
// members before each, most of a tree diff's column reads.)
void find_members(std::string_view stored, std::span<const std::string_view> keys, std::span<std::string_view> raw);
// The members as a whole-document parse (nlohmann's) reads them, for the perf models: every
// member walked, a key given twice counting as its last. False when `stored` is not one object
// walked to its closing brace, or a key the dictionary refused is written with an escape (a
// parse would read "Input\u0020Dims" as "Input Dims"): the caller then parses the whole text.
// (A dictionary key's escapes are the caller's to rule out: the dictionary is store-wide.)
bool last_members(std::string_view stored, std::span<const std::string_view> keys, std::span<std::string_view> raw);
// A find_members value as a reader wants it: itself, or decoded into `buf` when it holds tokens
// (an object).
std::string_view member_value(std::string_view raw, const StringPool& keys, std::string& buf);

}  // namespace tlsql::args_text
