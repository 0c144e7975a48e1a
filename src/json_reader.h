// Turning Kineto JSON text into Events with simdjson's on-demand API: one pass over the buffer,
// names and args kept as views into it (no copies unless a string has escapes).
#pragma once

#include <cstddef>
#include <string>

#include "health.h"
#include "trace_model.h"

namespace tlsql {

struct ReadStatus {
  enum Code { ok, needs_repair, error } code = ok;
  std::string message;  // what was expected / found (for `error`)
  size_t offset = 0;    // byte offset of the problem in the text
};

// `text` must stay alive (and unmodified) as long as `out` is used, and have `capacity` >=
// size + 64 readable bytes. Compiled once per CPU target; see reader_dispatch.cpp.
#define TLSQL_DECLARE_READER(ns) \
  namespace ns { ReadStatus read_trace_json(const char* text, size_t size, size_t capacity, ParsedTrace& out, Health& health); }
TLSQL_DECLARE_READER(reader_generic)
TLSQL_DECLARE_READER(reader_avx2)
#undef TLSQL_DECLARE_READER

// Picks the fastest build of the reader this CPU can run.
ReadStatus read_trace_json(const char* text, size_t size, size_t capacity, ParsedTrace& out, Health& health);

}  // namespace tlsql
