#include "src/readers/kineto_json/kineto_json.h"

#include <fmt/format.h>

#include "src/json_check.h"
#include "src/json_scan.h"
#include "src/readers/kineto_json/json_reader.h"
#include "src/readers/kineto_json/trace_scanner.h"

namespace tlsql::kineto_json {

namespace {

// Each chunk's text is read in one walk that checks it as it reads (read_event_chunk, checked):
// check_json walks a chunk only where that walk does not vouch for it (text it would call
// repairable or invalid, rare), and then gives the repair or the exact error, and the chunk is
// read again trusted. A checked read's health counts are kept apart until it succeeds.
class ChunkParserImpl : public ChunkParser {
 public:
  ChunkParserImpl(const RowSink& sink, const std::string& path, const InputSource* in = nullptr)
      : sink_{sink},
        counted_{RowSink{sink.rows, sink.strings, sink.args, checked_health_, sink.ids}},
        path_(path),
        in_(in) {}

  // A speculative chunk: its bytes read into "[" + bytes + "]" and its rows read from them. The
  // read is the proof: valid JSON there means the cut at its end is a true boundary between events
  // (the chunk starts at one: the chunk before it was proved, or it is the first).
  bool prove(Chunk& chunk, StagedRows& out) override {
    if (!in_) return false;
    const size_t len = chunk.source_bytes;
    chunk.text.resize(0);  // (a reused buffer's old text is not copied when it must grow)
    chunk.text.resize(len + 2);
    char* t = chunk.text.data();
    try {
      if (in_->read_at(chunk.source_offset, t + 1, len) != len) return false;  // cut short since
    } catch (const LoadError&) {
      return false;  // (the serial re-cut reads it again and reports the error)
    }
    t[0] = '[', t[len + 1] = ']';
    // (An element takes 3 bytes at least, "{}," : the rows a chunk can hold.)
    out.rows.reserve(len / 3 + 16);
    ChunkSink staged{{out.rows, sink_.strings, sink_.args, out.health, sink_.ids}};
    staged.kind_of_cat.swap(sink_.kind_of_cat);  // (the thread's memo, lent)
    staged.events = out.rows.capacity();
    bool proved = read_event_chunk(t, len + 2, staged, true).code == ReadStatus::ok;
    if (!proved) {  // not vouched for: check_json decides, and the rows are read trusted
      out.health = Health();
      const JsonCheck check = check_json(t, len + 2);
      if (check.result != JsonCheck::invalid) {
        TextBuffer repaired;
        const char* text = t;
        size_t size = len + 2;
        if (check.result == JsonCheck::repairable) {
          repaired = repair_json(text, size, out.health);
          text = repaired.data(), size = repaired.size();
        }
        out.rows.reserve(check.elements);  // (elements that are not objects may take 2 bytes)
        staged.events = check.elements;
        proved = read_event_chunk(text, size, staged).code == ReadStatus::ok;
      }
    }
    staged.kind_of_cat.swap(sink_.kind_of_cat);
    chunk.rows = staged.events;
    return proved;
  }

  // A counted chunk, read checked into its place (check_json only if that read gives up). Offsets
  // in errors are the file's: chunk text = "[" + file bytes.
  void parse(const Chunk& chunk) override {
    const char* text = chunk.text.data();
    size_t size = chunk.text.size();
    counted_.kind_of_cat.swap(sink_.kind_of_cat);
    counted_.first_row = chunk.first_row, counted_.events = chunk.rows;
    checked_health_ = Health();
    const bool vouched =
        read_event_chunk(text, size, counted_, true).code == ReadStatus::ok && counted_.events == chunk.rows;
    counted_.kind_of_cat.swap(sink_.kind_of_cat);
    if (vouched) return sink_.health.merge(checked_health_);
    auto file_offset = [&](size_t at) { return chunk.source_offset + (at > 0 ? at - 1 : 0); };
    const JsonCheck check = check_json(text, size);
    if (check.result == JsonCheck::invalid)
      throw LoadError(fmt::format("{}: at byte {}: {}", path_, file_offset(check.offset), check.message));
    TextBuffer repaired;
    if (check.result == JsonCheck::repairable) {
      repaired = repair_json(text, size, sink_.health);
      text = repaired.data(), size = repaired.size();
    }
    sink_.first_row = chunk.first_row;
    sink_.events = chunk.rows;
    ReadStatus rs = read_event_chunk(text, size, sink_);
    if (rs.code != ReadStatus::ok)  // offsets of a repaired chunk stay close to the original's
      throw LoadError(fmt::format("{}: at byte {}: {}", path_, file_offset(rs.offset), rs.message));
  }

 private:
  Health checked_health_;  // a checked read's counts, kept once it succeeds
  ChunkSink sink_;         // trusted reads: rows and counts straight to their place
  ChunkSink counted_;      // checked reads of a counted chunk: rows to their place, counts apart
  std::string path_;
  const InputSource* in_;  // speculative chunks' text (nullptr: a format that does not speculate)
};

class Reader : public TraceReader {
 public:
  Reader(InputSource& in, const std::string& path, size_t chunk_bytes) : scanner_(in, path), path_(path), in_(in) {
    scanner_.chunk_bytes = chunk_bytes;
  }
  void scan(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare,
            Health& health) override {
    scanner_.run(emit, spare, health);
  }
  void allow_speculation(CutProof* proof) override { scanner_.proof = proof; }
  std::unique_ptr<ChunkParser> parser(const RowSink& sink) override {
    return std::make_unique<ChunkParserImpl>(sink, path_, &in_);
  }
  void finish(LoadedTrace& trace, Health& health) override {
    trace.metadata = scanner_.bare_array() ? std::string() : scanner_.metadata();
    if (trace.rows.empty()) health.add("no_events", -1, "traceEvents is empty");
    if (scanner_.bare_array() && !trace.rows.empty() &&
        health.count("element_not_object") == (int64_t)trace.rows.size())
      throw NotATrace(fmt::format("{}: at byte 0: not a trace: the array holds no event objects", path_));
  }

 private:
  TraceScanner scanner_;
  std::string path_;
  const InputSource& in_;
};

std::unique_ptr<TraceReader> open(InputSource& in, const std::string& path, size_t chunk_bytes) {
  return std::make_unique<Reader>(in, path, chunk_bytes);
}

}  // namespace

std::unique_ptr<ChunkParser> event_parser(const RowSink& sink, const std::string& path) {
  return std::make_unique<ChunkParserImpl>(sink, path);
}

bool claims(std::string_view head) {
  const size_t p = json_scan::text_start(head);
  return p < head.size() && (head[p] == '{' || head[p] == '[');
}

constinit const ReaderFormat format = {"kineto_json", claims, open};

}  // namespace tlsql::kineto_json
