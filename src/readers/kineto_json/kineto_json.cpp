#include "src/readers/kineto_json/kineto_json.h"

#include <fmt/format.h>

#include <cstring>
#include <type_traits>

#include "src/json_check.h"
#include "src/json_scan.h"
#include "src/readers/kineto_json/json_reader.h"
#include "src/readers/kineto_json/trace_scanner.h"

namespace tlsql::kineto_json {

namespace {

// Each chunk's text is read in one walk that checks it as it reads (read_event_chunk, checked):
// check_json walks a chunk only where that walk does not vouch for it (text it would call
// repairable or invalid, rare), and then gives the repair or the exact error, and the chunk is
// read again trusted. The checked walk's health counts are kept apart until it succeeds.
class ChunkParserImpl : public ChunkParser {
 public:
  ChunkParserImpl(const RowSink& sink, const std::string& path, const InputSource* in = nullptr)
      : sink_{sink},
        counted_{RowSink{sink.rows, sink.strings, sink.args, checked_health_, sink.ids}},
        staged_{RowSink{staged_rows_, sink.strings, sink.args, checked_health_, sink.ids}},
        path_(path),
        in_(in) {}

  // A speculative chunk's proof: its bytes read into "[" + bytes + "]" and read checked. Valid
  // JSON there means the cut at its end is a true boundary between events (the chunk starts at
  // one: the chunk before it was proved, or it is the first). Its place in the rows is not known
  // yet (the chunks before it may still be unproved), so its rows are read into this parser's own
  // array and copied to their place by parse() (~1 ms a 2 MB chunk, against a second walk of it).
  bool prove(Chunk& chunk) override {
    staged_text_ = proved_text_ = nullptr;
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
    staged_rows_.reserve(len / 3 + 16);
    staged_.first_row = 0, staged_.events = staged_rows_.capacity();
    checked_health_ = Health();
    if (read_event_chunk(t, len + 2, staged_, true).code == ReadStatus::ok) {
      staged_text_ = t;
      chunk.rows = staged_.events;
      return true;
    }
    // Not vouched for: check_json decides, and counts the elements (it walks the text once more,
    // and the rows are read again by parse()).
    proved_ = check_json(t, len + 2);
    if (proved_.result == JsonCheck::invalid) return false;
    proved_text_ = t;
    chunk.rows = proved_.elements;
    return true;
  }

  // Offsets in errors are the file's: chunk text = "[" + file bytes.
  void parse(const Chunk& chunk) override {
    const char* text = chunk.text.data();
    size_t size = chunk.text.size();
    if (chunk.speculative() && staged_text_ == text) {  // read by prove(): the rows to their place
      staged_text_ = nullptr;
      static_assert(std::is_trivially_copyable_v<EventRec>);
      std::memcpy(static_cast<void*>(sink_.rows.slot(chunk.first_row)), staged_rows_.slot(0),
                  chunk.rows * sizeof(EventRec));
      keep_checked_health(chunk.first_row);
      return;
    }
    sink_.first_row = chunk.first_row;
    sink_.events = chunk.rows;
    auto file_offset = [&](size_t at) { return chunk.source_offset + (at > 0 ? at - 1 : 0); };
    JsonCheck check;
    if (chunk.speculative() && proved_text_ == text) {  // (checked by prove(), on this thread, just before)
      check = std::move(proved_);
    } else {  // a counted chunk: read checked into its place, check_json only if that read gives up
      counted_.first_row = chunk.first_row, counted_.events = chunk.rows;
      checked_health_ = Health();
      if (read_event_chunk(text, size, counted_, true).code == ReadStatus::ok && counted_.events == chunk.rows)
        return keep_checked_health(0);
      check = check_json(text, size);
    }
    proved_text_ = nullptr;
    if (check.result == JsonCheck::invalid)
      throw LoadError(fmt::format("{}: at byte {}: {}", path_, file_offset(check.offset), check.message));
    TextBuffer repaired;
    if (check.result == JsonCheck::repairable) {
      repaired = repair_json(text, size, sink_.health);
      text = repaired.data(), size = repaired.size();
    }
    ReadStatus rs = read_event_chunk(text, size, sink_);
    if (rs.code != ReadStatus::ok)  // offsets of a repaired chunk stay close to the original's
      throw LoadError(fmt::format("{}: at byte {}: {}", path_, file_offset(rs.offset), rs.message));
  }

 private:
  // A checked read's health counts, its rows `first_row` on (its examples are its rows' indexes).
  void keep_checked_health(size_t first_row) {
    for (const auto& [check, row] : checked_health_.rows())
      sink_.health.add(check, row.example < 0 ? -1 : row.example + (int64_t)first_row, row.detail, row.count);
  }

  Health checked_health_;  // a checked read's counts, kept once it succeeds
  RowArray staged_rows_;   // a speculative chunk's rows, read before their place is known
  ChunkSink sink_;         // trusted reads: rows and counts straight to their place
  ChunkSink counted_;      // checked reads of a counted chunk: rows to their place, counts apart
  ChunkSink staged_;       // checked reads of a speculative chunk: rows and counts apart
  std::string path_;
  const InputSource* in_;  // speculative chunks' text (nullptr: a format that does not speculate)
  JsonCheck proved_;       // prove()'s check_json of the chunk at proved_text_
  const char* proved_text_ = nullptr;
  const char* staged_text_ = nullptr;  // the chunk whose rows prove() read into staged_rows_
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
