#include "src/readers/row_rules.h"

#include <simdjson.h>

#include <algorithm>

#include "src/json_scan.h"
#include "src/kind.h"

namespace tlsql::row_rules {

bool at_null_marker(Health& health, size_t idx) {
  health.add("int64_min", (int64_t)idx, "integers equal to -2^63 (or 2^63, which wraps onto it) stored as NULL");
  return false;
}

void bad_time(Health& health, size_t idx) {
  health.add("bad_time", (int64_t)idx, "ts or dur is not a number of microseconds within range; stored as NULL");
}

void set_time(int64_t ns, int64_t& field, Health& health, size_t idx) {
  if (ns == kNull)
    bad_time(health, idx);
  else
    field = ns;
}

void set_id(int64_t value, Id32& field, WideIds& ids, Health& health, size_t idx) {
  if (value == kNull)
    at_null_marker(health, idx);
  else
    field = ids.id(value);
}

std::string_view arg_key_named(char first, ArgKey& key) {
  switch (first) {
    case 'c': return key = ArgKey::correlation, "correlation";
    case 'E': return key = ArgKey::external_id, "External id";
    case 'e': return key = ArgKey::external_id, "external id";
    case 'S': return key = ArgKey::seq, "Sequence number";
    case 's': return key = ArgKey::stream, "stream";
    case 'd': return key = ArgKey::device, "device";
    case 'F': return key = ArgKey::fwd_thread, "Fwd thread id";
    default: return key = ArgKey::none, std::string_view();
  }
}

ArgKey arg_key(std::string_view key) {
  ArgKey k = ArgKey::none;
  std::string_view name = key.empty() ? std::string_view() : arg_key_named(key[0], k);
  return !name.empty() && key == name ? k : ArgKey::none;
}

void set_arg(EventRec& ev, ArgKey key, int64_t value, WideIds& ids, Health& health, size_t idx) {
  if (key == ArgKey::none) return;
  if (value == kNull) {
    at_null_marker(health, idx);
    return;
  }
  switch (key) {
    case ArgKey::correlation: ev.correlation = ids.id(value); break;
    case ArgKey::external_id: ev.external_id = ids.id(value); break;
    case ArgKey::seq: ev.seq = ids.id(value); break;
    case ArgKey::stream: ev.stream = ids.id(value); break;
    case ArgKey::device:
      if (value >= INT32_MIN + 1 && value <= INT32_MAX) ev.device = (int32_t)value;
      break;
    case ArgKey::fwd_thread:
      if (value != 0) ev.flags |= EventRec::backward;
      break;
    default: break;
  }
}

namespace {

// SQLite's JSON functions refuse nesting deeper than 1000 levels (and would fail every query
// touching such a row's args): such args are stored as a JSON string of their original text.
bool too_deep(std::string_view raw) {
  if (std::count_if(raw.begin(), raw.end(), [](char c) { return c == '[' || c == '{'; }) <= 1000) return false;
  int depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth > 1000;
}

}  // namespace

void store_args(TextArena::Writer& args, EventRec& ev, std::string_view raw, Health& health, size_t idx,
                std::string& scratch) {
  // Kept without the whitespace between tokens (the form SQLite's JSON functions write; strings
  // byte for byte): Kineto indents every args object, and those spaces were a fifth of its
  // bytes, ~100 MB of a GB trace's store and of its saved database.
  // Always minified (the event table serves args members as they lie): minified and keyed in
  // one walk where it can (most args), else simdjson's minifier (the scalar one where that
  // refuses the text), the depth check, then the keys.
  if (args.add_raw_args(raw, ev.args, ev.args_len)) {
    ev.flags |= EventRec::has_args | EventRec::keyed_args;
    return;
  }
  if (scratch.size() < raw.size() + 64) scratch.resize(raw.size() + 64);  // (room past len: SIMD)
  if (size_t n = 0; simdjson::minify(raw.data(), raw.size(), scratch.data(), n) == simdjson::SUCCESS)
    raw = std::string_view(scratch.data(), n);
  else
    raw = scratch = json_scan::minify(raw);
  std::string quoted;
  if (too_deep(raw)) {
    health.add("args_too_deep", (int64_t)idx,
               "args nested deeper than 1000 levels (SQLite's JSON limit): kept as a JSON string");
    quoted.reserve(raw.size() + raw.size() / 8 + 2);
    quoted.push_back('"');
    for (char c : raw) {
      if (c == '"' || c == '\\') quoted.push_back('\\');
      quoted.push_back(c);
    }
    quoted.push_back('"');
    raw = quoted;
  }
  bool keyed;
  ev.args = args.add_args(raw, ev.args_len, keyed);
  ev.flags |= EventRec::has_args | (keyed ? EventRec::keyed_args : 0);
}

void store_encoded_args(TextArena::Writer& args, EventRec& ev, std::string_view encoded) {
  ev.args = args.add(encoded);
  ev.args_len = (uint32_t)encoded.size();
  ev.flags |= EventRec::has_args | EventRec::keyed_args;
}

Kind kind_for(std::vector<int8_t>& cache, char ph, uint32_t cat, std::string_view cat_text) {
  if (ph != 'X' && ph != 'B' && ph != 'E' && ph != 0) return normalize_kind(ph, cat_text);
  if (cat == StringPool::kNone) return normalize_kind(ph, {});
  if (cat >= cache.size()) cache.resize(cat + 1, -1);
  if (cache[cat] < 0) cache[cat] = (int8_t)normalize_kind('X', cat_text);
  return (Kind)cache[cat];
}

void check_row(const EventRec& ev, bool has_ph, bool has_name, bool has_ts, Health& health, size_t idx) {
  const auto i = (int64_t)idx;
  if (!has_ph) health.add("missing_ph", i, "events without a \"ph\" phase: kind taken from \"cat\" alone");
  if (!has_name) health.add("missing_name", i, "events without a \"name\": name is NULL");
  if (!has_ts && ev.ph != 'M')
    health.add("missing_ts", i, "events (other than 'M' metadata) without a \"ts\": ts is NULL, not in the tree");
  if (ev.dur != kNull && ev.dur < 0)
    health.add("negative_dur", i, "events with dur < 0: kept as recorded; they nest as zero-length");
  if (int64_t end; ev.ts != kNull && ev.dur != kNull && __builtin_add_overflow(ev.ts, ev.dur, &end))
    health.add("end_overflow", i, kEndOverflow);
}

}  // namespace tlsql::row_rules
