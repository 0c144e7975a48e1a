#include "src/readers/kineto_json/kineto_json.h"

#include <fmt/format.h>

#include "src/json_check.h"
#include "src/json_scan.h"
#include "src/readers/kineto_json/json_reader.h"
#include "src/readers/kineto_json/trace_scanner.h"

namespace tlsql::kineto_json {

namespace {

class ChunkParserImpl : public ChunkParser {
 public:
  ChunkParserImpl(const RowSink& sink, const std::string& path, const InputSource* in = nullptr)
      : sink_{sink}, path_(path), in_(in) {}

  // A speculative chunk's proof: its bytes read into "[" + bytes + "]" and checked whole. Valid
  // JSON there means the cut at its end is a true boundary between events (the chunk starts at
  // one: the chunk before it was proved, or it is the first), and the check counts its elements.
  bool prove(Chunk& chunk) override {
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
    proved_ = check_json(t, len + 2);
    if (proved_.result == JsonCheck::invalid) return false;
    proved_text_ = t;
    chunk.rows = proved_.elements;
    return true;
  }

  // Checks the chunk whole (the reader's walk trusts the text), repairs its strings if they need
  // it, then parses it. Offsets in errors are the file's: chunk text = "["
  // + file bytes.
  void parse(const Chunk& chunk) override {
    sink_.first_row = chunk.first_row;
    sink_.events = chunk.rows;
    const char* text = chunk.text.data();
    size_t size = chunk.text.size();
    auto file_offset = [&](size_t at) { return chunk.source_offset + (at > 0 ? at - 1 : 0); };
    // (A proved chunk was checked by prove(), on this thread, just before.)
    JsonCheck check = chunk.speculative() && proved_text_ == text ? std::move(proved_) : check_json(text, size);
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
  ChunkSink sink_;
  std::string path_;
  const InputSource* in_;  // speculative chunks' text (nullptr: a format that does not speculate)
  JsonCheck proved_;       // prove()'s check of the chunk at proved_text_
  const char* proved_text_ = nullptr;
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
