// The load pipeline for one file: read it (src/readers/: open or gunzip, the format chosen by its
// first bytes, scan into chunks || parse chunks on every core) -> build the tree -> register
// with SQLite.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/graph_capture.h"
#include "src/health.h"
#include "src/readers/reader.h"

namespace tlsql {

class TraceWriter;

struct LoadStats {
  std::string path;
  int64_t trace_id = 0, events = 0;
  size_t json_bytes = 0, file_bytes = 0;  // the text (inflated) and the file (0 for a pipe)
  double read_s = 0, parse_s = 0, tree_s = 0, insert_s = 0, total_s = 0;
  // Of parse_s: the scanner thread's own work (cutting and copying chunks, reading the input),
  // its parsing of chunks excluded: the serial part of the parse, whatever the threads.
  double scan_s = 0;
  // Of the chunks parsed: those read and counted by the parse threads, cut at a guessed boundary
  // or re-cut by a walk after a wrong guess (issue 51: a regular uncompressed file), and the wrong
  // guesses (each chunk dropped and re-cut).
  size_t chunks = 0, chunks_guessed = 0, wrong_guesses = 0;
  std::vector<std::pair<std::string, int64_t>> health;  // check, count
};

struct LoadOptions {
  std::string schema = "main";                              // where the small tables are written
  std::function<void(const char*)> stage_done;              // after "read", "parse", "tree", "insert"
  std::function<void(size_t done, size_t total)> progress;  // input bytes, from the scanner thread
  // Threads that read the file (one scans and parses, the others parse); 0: load_threads()
  // (src/readers/pipeline.h: --threads, else the machine's cores).
  size_t threads = 0;
  // Events are parsed in runs of about this much text (the fuzz target sets it small). 2 MB: a
  // chunk read into a buffer the size of a core's L2 is still in cache when its proof and its parse
  // walk it (docs/performance.md, "Chunk size"); 8 MB chunks were copied and walked at DRAM speed,
  // and the chunks in flight held ~35 MB more. A file too small to give each thread four such
  // chunks is read in smaller ones (src/readers/pipeline.h, chunk_size).
  size_t chunk_bytes = 2u << 20;
  // Graphs from capture traces (read_capture_file): the trace's graph replays are attributed to them.
  const std::vector<CapturedGraph>* captured = nullptr;
  // The input formats asked, in order (src/readers/reader.h); a test adds its own here.
  std::span<const ReaderFormat> formats = builtin_formats();
  // Buffers to take and leave for the next load (src/input.h); nullptr: the load's own.
  ReadBuffers* reuse = nullptr;
  // The schema's writer (src/db_writer.h) kept across a session's loads into it; nullptr: the
  // load's own.
  TraceWriter* writer = nullptr;
};

// Loads `path` into `store` and the schema's small tables. Throws LoadError with a one-line
// message naming the file; on error neither the store nor the database changes.
// Reads a capture trace (what torch.profiler recorded while graphs were captured) and returns its
// graphs, their strings and args kept in `store`; the trace's own rows are not kept. What the
// reader repairs is counted in `health`. Throws LoadError as load_trace_file.
std::vector<CapturedGraph> read_capture_file(EventStore& store, const std::string& path, Health& health);

LoadStats load_trace_file(sqlite3* db, EventStore& store, const std::string& path, const LoadOptions& opt = {});

}  // namespace tlsql
