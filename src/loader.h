// The load pipeline for one file: map (or gunzip) -> scan into chunks || parse chunks (two
// threads) -> build the tree -> register with SQLite.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <string>
#include <vector>

#include "src/event_store.h"

namespace tlsql {

struct LoadStats {
  std::string path;
  int64_t trace_id = 0, events = 0;
  size_t json_bytes = 0, file_bytes = 0;
  double read_s = 0, parse_s = 0, tree_s = 0, insert_s = 0, total_s = 0;
  std::vector<std::pair<std::string, int64_t>> health;  // check, count
};

struct LoadOptions {
  std::string schema = "main";                              // where the small tables are written
  std::function<void(const char*)> stage_done;              // after "read", "parse", "tree", "insert"
  std::function<void(size_t done, size_t total)> progress;  // input bytes, from the scanner thread
  size_t chunk_bytes = 8u << 20;  // events are parsed in runs of about this much text (the fuzz target sets it small)
};

// Loads `path` into `store` and the schema's small tables. Throws LoadError with a one-line
// message naming the file; on error neither the store nor the database changes.
LoadStats load_trace_file(sqlite3* db, EventStore& store, const std::string& path, const LoadOptions& opt = {});

}  // namespace tlsql
