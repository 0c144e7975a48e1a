// The in-memory form of one loaded trace: what the reader produces, the tree builder links,
// and the database writer stores. Strings are views into the input buffer or the JSON parser's
// string arena, both of which outlive the load.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "src/health.h"

namespace tlsql {

enum class Kind : uint8_t {
  cpu_op,
  python,
  annotation,
  runtime,
  driver,
  kernel,
  memcpy,
  memset,
  sync,
  gpu_annotation,
  instant,
  counter,
  flow,
  meta,
  other
};
// How many kinds there are: Kind values are 0 .. kKindCount - 1.
constexpr size_t kKindCount = static_cast<size_t>(Kind::other) + 1;
std::string_view kind_name(Kind k);

// A JSON scalar the trace may write as a number or as a string (pid, tid, flow id).
struct Scalar {
  enum Type : uint8_t { null, integer, text } type = null;
  int64_t i = 0;
  std::string_view s;
  bool operator==(const Scalar& o) const {
    return type == o.type && (type == integer ? i == o.i : type == text ? s == o.s : true);
  }
};

constexpr int64_t kNull = INT64_MIN;  // marks an absent integer column

// Time arithmetic on values a trace or a hand-edited saved database supplies. Any int64 can arrive
// (the loader keeps every ts that fits, a saved database's ts / end can be edited independently),
// so a difference of two times, or a sum of durations, can leave int64: undefined behaviour. These
// clamp to the int64 range instead; only hostile inputs ever reach the clamp.
inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
inline int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

struct Event {
  int64_t ts = kNull, dur = kNull;  // nanoseconds
  int64_t correlation = kNull, external_id = kNull, seq = kNull, stream = kNull, device = kNull;
  int64_t parent = -1, step = kNull, fwd = -1;  // indexes into the trace's events (-1: none)
  int32_t depth = 0;
  Kind kind = Kind::other;
  char ph = 0;
  bool backward = false;  // carries "Fwd thread id": recorded by the autograd engine
  Scalar pid, tid, flow_id;
  std::string_view name, cat, args;  // args: the raw JSON text of the args object
  bool has_name = false, has_cat = false, has_args = false;

  int64_t end() const { return ts == kNull || dur == kNull ? kNull : ts + dur; }
};

struct ParsedTrace {
  std::vector<Event> events;
  std::string metadata;  // every top-level key except traceEvents, as one JSON object
  bool bare_array = false;
  std::deque<std::string> arena;  // strings that had escapes, unescaped (stable addresses)
};

}  // namespace tlsql
