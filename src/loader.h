// The load pipeline for one file: map (or gunzip) -> scan into chunks || parse chunks (two
// threads) -> build the tree -> register with SQLite.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <string>
#include <vector>

#include "event_store.h"

namespace tlsql {

struct LoadStats {
  std::string path;
  int64_t trace_id = 0, events = 0;
  size_t json_bytes = 0, file_bytes = 0;
  double read_s = 0, parse_s = 0, tree_s = 0, insert_s = 0, total_s = 0;
  std::vector<std::pair<std::string, int64_t>> health;  // check, count
};

// Loads `path` into `store` and `db`'s small tables. Throws LoadError with a one-line message
// naming the file; on error neither the store nor the database changes.
// `stage_done`, if set, is called after each stage ("read", "parse", "tree", "insert").
LoadStats load_trace_file(sqlite3* db, EventStore& store, const std::string& path,
                          const std::function<void(const char*)>& stage_done = {});

}  // namespace tlsql
