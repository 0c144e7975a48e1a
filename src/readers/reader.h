// The reader seam: one interface between "bytes in" and "rows out" (as Perfetto's importers sit
// behind its chunked trace reader). A format is a folder src/readers/NAME/ with a TraceReader and
// one line in src/readers/formats.cpp; the threads, the chunk queue, progress, the row array and
// the gzip-bomb guard are src/readers/pipeline.cpp's, shared by every format (docs/architecture.md,
// "The reader seam").
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/event_store.h"
#include "src/health.h"
#include "src/input.h"

namespace tlsql {

// A run of whole rows cut out of the input by a reader's scan(), parsed later on any thread.
struct Chunk {
  TextBuffer text;           // the reader's own form of the run (a buffer from `spare`, refilled)
  size_t source_offset = 0;  // where the run starts in the input text, for the reader's messages
  size_t rows = 0;           // rows the run holds: known before parsing, so chunks parse in any order
  size_t first_row = 0;      // set by the pipeline: rows of the chunks before this one
  // A speculative chunk (issue 51): not 0 when the run is still in the file, bytes [source_offset,
  // source_offset + source_bytes), cut at a guessed boundary. The parse thread reads it into rows
  // of their own (ChunkParser::prove); the pipeline copies them to their place once every chunk
  // before it is proved.
  size_t source_bytes = 0;
  bool speculative() const { return source_bytes != 0; }
};

// The pipeline's side of a scan that cuts speculatively (TraceReader::allow_speculation).
class CutProof {
 public:
  virtual ~CutProof() = default;
  // Whether a speculative chunk has failed its proof (the scan should stop guessing). Never blocks.
  virtual bool failed() = 0;
  // Waits until every speculative chunk emitted so far is proved, or one fails. SIZE_MAX when all are
  // proved; else the failed chunk's source_offset: the chunks before it are kept, it and every
  // later speculative one dropped (no row or health count of theirs kept), and the scan re-cuts
  // serially from there.
  virtual size_t settle() = 0;
};

// Where one parsing thread's rows go; each thread has its own string cache, arena writer and
// health counts, and writes only its chunks' slots of `rows`.
struct RowSink {
  RowArray& rows;
  StringPool::Cache& strings;
  TextArena::Writer& args;
  Health& health;
  WideIds& ids;
};

// A speculative chunk's rows, read before their place among the trace's rows is known
// (ChunkParser::prove): rows[0, chunk.rows), and what reading them counted (examples are indexes
// into these rows). The pipeline keeps a few per thread and reuses them.
struct StagedRows {
  RowArray rows{false};
  Health health;
  size_t most_rows = 0;  // the most rows a chunk has left here (its pages that were written)
};

// Buffers one load leaves to the next (a folder's traces load one after another): a fresh buffer
// costs a page fault and a kernel page clear for every page the load touches, which for a folder
// of 400 traces of 2.6 MB was a quarter of the load (docs/performance.md, "A folder of many
// traces"), and the speculative chunks' staged rows, made afresh for each file, were still half
// of such a folder's page faults. Whoever loads several files owns one and drops it after the last
// (repl/shell.cpp: a folder's files, or the command line's traces).
struct ReadBuffers {
  ReadBuffers() = default;
  ~ReadBuffers();  // (the loads' scratch given back to the system: src/loader.cpp)
  ReadBuffers(const ReadBuffers&) = delete;
  ReadBuffers& operator=(const ReadBuffers&) = delete;
  TextBuffer window;                                // an InputSource's window, never grown past its first size
  std::vector<TextBuffer> chunks;                   // the load pipeline's chunk buffers (pipeline.cpp)
  std::vector<std::unique_ptr<StagedRows>> staged;  // its speculative chunks' rows (pipeline.cpp, Placement)
};

// One thread's parser (its caches are its own): made by TraceReader::parser(), fed chunks.
class ChunkParser {
 public:
  virtual ~ChunkParser() = default;
  // Constructs every row of rows[chunk.first_row, chunk.first_row + chunk.rows) (placement new
  // into RowArray::slot), or throws LoadError naming the file and the input's byte offset: on an
  // error the pipeline discards the whole trace.
  virtual void parse(const Chunk& chunk) = 0;
  // A speculative chunk (Chunk::speculative), never given to parse(): reads its text from the input
  // and its rows into `out` (rows from 0, counts in out.health, both empty on entry), and says
  // whether it is a run of whole rows, setting chunk.rows. False when it is not (a misguessed cut,
  // a read error or an error the serial re-cut will meet and report): then nothing of `out` is
  // kept. The pipeline places the rows and keeps the counts once the chunks before it are proved,
  // while this thread goes on with the next chunk. Formats whose scan never cuts speculatively
  // keep this default.
  virtual bool prove(Chunk& /*chunk*/, StagedRows& /*out*/) { return false; }
};

// One format's reader of one input. The pipeline calls scan() on one thread while chunks are
// parsed on two, then finish().
class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // Reads the input to its end, cutting it into chunks in order, each handed to `emit` (false:
  // the load is cancelled, return). `spare` gives back a parsed chunk's buffer to refill (empty
  // when none is free). What the scan repairs is counted in `health`. Throws LoadError, or
  // NotATrace where the input shows from its start that it is no trace of this format.
  virtual void scan(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare,
                    Health& health) = 0;
  // Called before scan() when the input can be read at any offset (InputSource::random_access):
  // the scan may then emit speculative chunks, and must settle() them before it cuts serially.
  // Formats that do not speculate ignore it.
  virtual void allow_speculation(CutProof* /*proof*/) {}
  // Called before scan() with the load's thread count: work of the scan's own that must be done
  // before the first chunk (a table records refer to) may use that many threads, the parse
  // threads having nothing to do yet; a scan whose own reading is the load's serial part may read
  // ahead on one more (Nsight's tables). Formats without such work ignore it.
  virtual void use_threads(size_t /*threads*/) {}
  // Called before scan() with the args keys' dictionary as the scanning thread sees it (its own
  // cache, valid until scan() returns): a scan that writes args text itself may write it keyed
  // (event_records::Writer::encode_keys), leaving the parse threads nothing to walk in it.
  // Formats whose scan writes no args text ignore it.
  virtual void use_keys(StringPool::Cache* /*keys*/) {}
  // A parser for one thread, writing into `sink` (copied: its references stay the thread's).
  virtual std::unique_ptr<ChunkParser> parser(const RowSink& sink) = 0;
  // After every chunk is parsed (rows.size() is the total), with every thread's health merged
  // in: the trace's own fields (metadata) and checks over the whole trace (may throw NotATrace).
  virtual void finish(LoadedTrace& trace, Health& health) = 0;
};

// A format, as registered. The input is chosen by its first bytes, gzip already inflated (a
// .gz is the input's business, not the format's): the first format whose `claims` accepts them
// reads it, and the last one reads what no format claims (its messages say what the file is not).
struct ReaderFormat {
  std::string_view name;
  // `head`: the first kSniffBytes of the text (fewer for a shorter file).
  bool (*claims)(std::string_view head);
  // A reader of `in` (already open, nothing consumed); `path` names the file in messages; chunks
  // of about `chunk_bytes` of input (>= 1).
  std::unique_ptr<TraceReader> (*open)(InputSource& in, const std::string& path, size_t chunk_bytes);
  // A format read from a SQLite database (a text starting "SQLite format 3"): whether the regular
  // file's table and view names are this format's (`claims` then says no to every head). Its
  // reader opens the file itself, read-only and immutable (open_foreign_database), and pulls rows
  // with SQL in its scan: the same pipeline, chunks and parsers as a text format. nullptr: a text
  // format.
  bool (*claims_database)(const std::set<std::string>& tables) = nullptr;
};

constexpr size_t kSniffBytes = 4096;

// The formats tlsql reads, in the order they are asked (src/readers/formats.cpp).
std::span<const ReaderFormat> builtin_formats();

// The format that reads a text starting with `head` (see ReaderFormat); `formats` is not empty.
const ReaderFormat& choose_format(std::span<const ReaderFormat> formats, std::string_view head);
// The same for the file `path`, except that a file no format claims and that looks like another
// profiler's output (a rocpd or Nsight database, an .nsys-rep, a Perfetto protobuf, an execution
// trace) is refused here by name, with what to do, as NotATrace (docs/formats.md).
const ReaderFormat& choose_format(std::span<const ReaderFormat> formats, std::string_view head,
                                  const std::string& path);
// What a file no format reads looks like and what to do ("" when it looks like nothing known).
std::string other_format_hint(std::string_view head, const std::string& path);
// The same for a SQLite database, from its table and view names.
std::string database_format_hint(const std::set<std::string>& tables);
// The format of `formats` that reads the SQLite database file `path` by its tables, or nullptr (not a
// regular file, not SQLite, or no format's tables): a database no format reads is a saved one.
const ReaderFormat* database_format(std::span<const ReaderFormat> formats, const std::string& path);
// The table and view names of the SQLite database `path` (opened read-only and immutable); `error`
// set when it cannot be read.
std::set<std::string> database_tables(const std::string& path, std::string& error);

}  // namespace tlsql
