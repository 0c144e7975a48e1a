// The load pipeline for one file: read (+gunzip) -> parse -> build the tree -> insert.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <string>
#include <vector>

namespace tlsql {

struct LoadStats {
  std::string path;
  int64_t trace_id = 0, events = 0;
  size_t json_bytes = 0, file_bytes = 0;
  double read_s = 0, parse_s = 0, tree_s = 0, insert_s = 0, total_s = 0;
  std::vector<std::pair<std::string, int64_t>> health;  // check, count
};

// Loads `path` into `db` (tables created if missing). Throws LoadError with a one-line message
// naming the file; the database is left as it was before the call.
// `stage_done`, if set, is called after each stage ("read", "parse", "tree", "insert").
LoadStats load_trace_file(sqlite3* db, const std::string& path,
                          const std::function<void(const char*)>& stage_done = {});

// Builds indexes and views; call once after the last load_trace_file.
void finish_load(sqlite3* db);

}  // namespace tlsql
