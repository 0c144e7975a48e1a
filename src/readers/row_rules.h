// What a row holds, rule by rule, for every parser that fills rows: the Kineto chunk parser
// (src/readers/kineto_json/isa/json_reader.cpp, which reads the values from JSON text) and the
// record parser of the readers that translate another profiler's records (src/readers/
// event_records.h: rocprofv3, Nsight Systems), which has them as integers and strings already.
// One place per rule, so that a row loaded either way is the same row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/event_store.h"
#include "src/health.h"
#include "src/readers/reader.h"

namespace tlsql::row_rules {

// -2^63 is the store's NULL marker (and 2^63 wraps onto it): an integer equal to it
// cannot be kept. Counts it; returns false (the field stays NULL). (A time of -2^63: set_time.)
bool at_null_marker(Health& health, size_t idx);

// A ts or dur that is no number of µs within range: counted, the field stays NULL.
void bad_time(Health& health, size_t idx);

// A time in ns (ts, dur) into `field`. Times are within +-(2^63 - 1) ns (decimal.h's micros_to_ns
// refuses the µs text of -2^63 ns): -2^63 is counted as a time out of range (bad_time), NULL.
void set_time(int64_t ns, int64_t& field, Health& health, size_t idx);

// An integer id (pid, tid, correlation, ...) into `field` (event_store.h: Id32); kNull counted.
void set_id(int64_t value, Id32& field, WideIds& ids, Health& health, size_t idx);

// The args members a row takes a column from (the rest stay in the args text only).
enum class ArgKey : uint8_t { none, correlation, external_id, seq, stream, device, fwd_thread, count };
// The key as written ("correlation", "External id" / "external id", "Sequence number", "stream",
// "device", "Fwd thread id"), else ArgKey::none.
ArgKey arg_key(std::string_view key);
// The one of those keys a member whose name starts with `first` may be (its ArgKey in `key`), ""
// for none: they differ in their first byte, so the Kineto parser tells a member by one byte and
// one compare, against the text as it lies.
std::string_view arg_key_named(char first, ArgKey& key);
// An integer args member's column: ids through `ids`; device only within int32; "Fwd thread id"
// marks a backward op (the autograd engine records the forward thread's id, > 0, on backward ops;
// forward ops of some PyTorch versions carry 0). kNull counted as at_null_marker.
void set_arg(EventRec& ev, ArgKey key, int64_t value, WideIds& ids, Health& health, size_t idx);

// The args value `raw` (JSON as it lies: whitespace allowed) stored for `ev`: minified, keys as
// tokens (src/args_text.h); nested deeper than SQLite's JSON limit, kept as a JSON string
// (counted). `scratch` is the caller's buffer, reused.
void store_args(TextArena::Writer& args, EventRec& ev, std::string_view raw, Health& health, size_t idx,
                std::string& scratch);
// Args text args_text::minify_encode wrote (minified, keys as tokens), stored for `ev`.
void store_encoded_args(TextArena::Writer& args, EventRec& ev, std::string_view encoded);

// The row's kind from its phase and category (normalize_kind), cached per category string id in
// `cache` (one per parser thread) for X / B / E events and those without a phase.
Kind kind_for(std::vector<int8_t>& cache, char ph, uint32_t cat, std::string_view cat_text);

// The checks made once a row's fields are read: what was missing, negative durations, ends past
// int64. `has_*`: whether the event had the field at all.
void check_row(const EventRec& ev, bool has_ph, bool has_name, bool has_ts, Health& health, size_t idx);

}  // namespace tlsql::row_rules
