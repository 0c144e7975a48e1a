#include "trace_scanner.h"

#include <simdjson.h>

#include <cstring>
#include <fmt/format.h>

#include "json_scan.h"

namespace tlsql {

using namespace json_scan;

void TraceScanner::fail(size_t offset, const std::string& what) const {
  if (offset >= in_.size()) throw LoadError(fmt::format("{}: at byte {} (end of file): {}", path_, in_.size(), what));
  throw LoadError(fmt::format("{}: at byte {}: {}", path_, offset, what));
}

size_t TraceScanner::value_end(size_t p) const {
  size_t e = skip_value(in_.data(), in_.size(), p);
  if (e == npos) {
    const char c = in_.data()[p];
    fail(in_.size(), c == '"' ? "unclosed string (truncated file?)"
                              : "document ends inside an array or object (truncated file?)");
  }
  if (e == p) fail(p, fmt::format("malformed JSON: expected a value, found '{}'", in_.data()[p]));
  return e;
}

size_t TraceScanner::scan_events(size_t p, const std::function<bool(EventChunk&&)>& emit,
                                 const std::function<TextBuffer()>& spare) {
  const char* d = in_.data();
  const size_t n = in_.size();
  size_t chunk_start = npos, last_end = 0, chunk_first = events_;
  auto flush = [&] {
    if (chunk_start == npos || stopped_) return;
    size_t len = last_end - chunk_start;
    EventChunk c{spare(), chunk_start, chunk_first, events_ - chunk_first};
    c.text.resize(len + 2);
    c.text.data()[0] = '[';
    std::memcpy(c.text.data() + 1, d + chunk_start, len);
    c.text.data()[len + 1] = ']';
    in_.release_before(last_end);  // copied: the mapped pages are not needed again
    stopped_ = !emit(std::move(c));
    chunk_start = npos;
  };
  ++p;  // past '['
  bool after_comma = false;
  for (;;) {
    p = skip_ws(d, n, p);
    if (p >= n) fail(n, "document ends inside the traceEvents array (truncated file?)");
    if (d[p] == ']') {
      if (after_comma) fail(p, "malformed JSON: expected an event after ','");
      flush();
      return p + 1;
    }
    size_t e = value_end(p);
    if (chunk_start == npos) chunk_start = p, chunk_first = events_;
    ++events_;
    last_end = e;
    p = skip_ws(d, n, e);
    if (p >= n) fail(n, "document ends inside the traceEvents array (truncated file?)");
    if (d[p] == ',') {
      ++p;
      after_comma = true;
      if (last_end - chunk_start >= chunk_bytes) flush();
      if (stopped_) return p;
      continue;
    }
    if (d[p] != ']') fail(p, fmt::format("malformed JSON: expected ',' or ']' after an event, found '{}'", d[p]));
    after_comma = false;
  }
}

void TraceScanner::run(const std::function<bool(EventChunk&&)>& emit, const std::function<TextBuffer()>& spare,
                       Health& health) {
  const char* d = in_.data();
  const size_t n = in_.size();
  size_t p = 0;
  if (n >= 3 && std::memcmp(d, "\xEF\xBB\xBF", 3) == 0) {
    p = 3;
    health.add("utf8_bom", -1, "UTF-8 byte order mark at the start of the file skipped");
  }
  p = skip_ws(d, n, p);
  if (p >= n) fail(0, "empty file: expected a JSON object or array");
  if (d[p] == '[') {
    bare_array_ = true;
    p = scan_events(p, emit, spare);
  } else if (d[p] == '{') {
    bool have_events = false;
    metadata_ = "{";
    ++p;
    for (bool first = true;; first = false) {
      p = skip_ws(d, n, p);
      if (p >= n) fail(n, "document ends inside the top-level object (truncated file?)");
      if (d[p] == '}' && first) {
        ++p;
        break;
      }
      if (d[p] != '"') fail(p, fmt::format("malformed JSON: expected a key, found '{}'", d[p]));
      size_t kend = value_end(p);
      std::string_view key(d + p + 1, kend - p - 2);
      p = skip_ws(d, n, kend);
      if (p >= n || d[p] != ':') fail(p, "malformed JSON: expected ':' after a key");
      p = skip_ws(d, n, p + 1);
      if (p >= n) fail(n, "document ends inside the top-level object (truncated file?)");
      if (key == "traceEvents") {
        if (d[p] != '[') fail(p, fmt::format("not a trace: \"traceEvents\" is not an array, found '{}'", d[p]));
        have_events = true;
        p = scan_events(p, emit, spare);
        if (stopped_) return;
      } else {
        size_t vend = value_end(p);
        if (metadata_.size() > 1) metadata_ += ',';
        metadata_ += '"';
        metadata_.append(key);
        metadata_ += "\":";
        metadata_.append(d + p, vend - p);
        p = vend;
      }
      p = skip_ws(d, n, p);
      if (p >= n) fail(n, "document ends inside the top-level object (truncated file?)");
      if (d[p] == ',') {
        ++p;
        continue;
      }
      if (d[p] != '}') fail(p, fmt::format("malformed JSON: expected ',' or '}}' in the top-level object, found '{}'", d[p]));
      ++p;
      break;
    }
    metadata_ += '}';
    if (!have_events) fail(0, "not a trace: no \"traceEvents\" array in the top-level object");
    // The metadata was only skipped over; make sure it is JSON before it is stored.
    simdjson::dom::parser parser;
    simdjson::padded_string ps(metadata_);
    simdjson::dom::element el;
    if (auto e = parser.parse(ps).get(el)) fail(0, fmt::format("malformed JSON in the top-level keys: {}", simdjson::error_message(e)));
  } else {
    fail(p, fmt::format("not JSON: expected '{{' or '[', found '{}'", d[p]));
  }
  if (stopped_) return;
  p = skip_ws(d, n, p);
  if (p < n) fail(p, "unexpected content after the end of the JSON document");
}

}  // namespace tlsql
