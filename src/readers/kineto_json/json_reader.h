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
  // unchecked: a checked read met text check_json would not call valid (it may be repairable, or
  // an error whose exact offset and message check_json gives): check it and read it trusted.
  enum Code { ok, error, unchecked } code = ok;
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

// `text` is "[" + events + "]". Trusted (`checked` false), it is valid JSON (check_json() said so
// first, repair_json() mended what it called repairable) and the reader walks it once without
// checking it again. Checked, it may be anything: the one walk checks it as it reads it and
// answers `unchecked` unless check_json would call it valid (no row or health count it made then
// is to be kept); on `ok` it sets sink.events to the events it read (not more than sink.events).
ReadStatus read_event_chunk(const char* text, size_t size, ChunkSink& sink, bool checked = false);

}  // namespace tlsql
