// Parses one chunk of events (a JSON array cut out by TraceScanner) into EventRec rows: names
// interned, args text minified and keyed once into the store's arena.
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

// `text` is "[" + events + "]" and valid JSON (check_json() says so first, repair_json() mends
// what it calls repairable): the reader walks it once without checking it again.
ReadStatus read_event_chunk(const char* text, size_t size, ChunkSink& sink);

}  // namespace tlsql
