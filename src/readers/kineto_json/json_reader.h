// Parses one chunk of events (a JSON array cut out by TraceScanner) with simdjson's on-demand API
// into EventRec rows: names interned, args text copied once into the store's arena.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/health.h"
#include "src/readers/reader.h"

namespace tlsql {

struct ReadStatus {
  enum Code { ok, error } code = ok;
  std::string message;  // what was expected / found (for `error`)
  size_t offset = 0;    // byte offset of the problem in the chunk text
};

// One parser thread's destination (src/readers/reader.h) and its caches: rows go to
// rows[first_row ...] (counted by the scan, or by the parse thread for a speculative chunk); on error
// the caller discards the whole trace.
struct ChunkSink : RowSink {
  std::vector<int8_t> kind_of_cat = {};  // category string id -> Kind for X/B/E events (-1: unknown)
  size_t first_row = 0, events = 0;      // set per chunk
};

// `text` must have `capacity` >= size + 64 readable bytes and be valid JSON (check_json() says so
// first: this parser skips what it does not read). Compiled once per CPU target
// (see CMakeLists.txt); read_event_chunk() picks the fastest this CPU runs.
#define TLSQL_DECLARE_READER(ns)                                                                \
  namespace ns {                                                                                \
  ReadStatus read_event_chunk(const char* text, size_t size, size_t capacity, ChunkSink& sink); \
  }
TLSQL_DECLARE_READER(reader_generic)
TLSQL_DECLARE_READER(reader_avx2)
#undef TLSQL_DECLARE_READER

ReadStatus read_event_chunk(const char* text, size_t size, size_t capacity, ChunkSink& sink);

}  // namespace tlsql
