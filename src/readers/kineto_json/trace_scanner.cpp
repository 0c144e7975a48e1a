#include "src/readers/kineto_json/trace_scanner.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "src/json_check.h"
#include "src/json_scan.h"

namespace tlsql {

using json_scan::npos;

namespace {
// A byte for a message: 'x' when printable ASCII, else its value (a NUL or 0xFF printed raw
// would be no help, and could reach a terminal).
std::string shown(char c) {
  const auto u = (unsigned char)c;
  return u >= 0x20 && u < 0x7F ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02x}", u);
}

template <class Error>
[[noreturn]] void throw_at(const InputSource& in, const std::string& path, size_t offset, const std::string& what) {
  size_t end = in.base() + in.avail();
  if (offset >= end && in.at_end()) throw Error(fmt::format("{}: at byte {} (end of file): {}", path, end, what));
  throw Error(fmt::format("{}: at byte {}: {}", path, offset, what));
}
}  // namespace

void TraceScanner::not_a_trace(size_t offset, const std::string& what) const {
  throw_at<NotATrace>(in_, path_, offset, what);
}

void TraceScanner::fail(size_t offset, const std::string& what) const { throw_at<LoadError>(in_, path_, offset, what); }

char TraceScanner::at(size_t p) {
  while (p >= in_.base() + in_.avail())
    if (!in_.refill(std::min(p, keep_))) return 0;
  return in_.window()[p - in_.base()];
}

char TraceScanner::need(size_t p, const char* truncated) {
  if (char c = at(p)) return c;
  if (!has(p)) fail(SIZE_MAX, truncated);
  nul_at(p);
}

void TraceScanner::nul_at(size_t p) {
  // UTF-16 text of JSON has a NUL beside every ASCII character: `{\0"\0` (little-endian) or
  // `\0{\0"` (big-endian). Only the start of the text is looked at (the window still holds it
  // when the first NUL is met there).
  bool utf16 = false;
  if (in_.base() == 0 && p < 64 && has(3)) {
    const char* t = in_.window();
    utf16 = (t[0] && !t[1] && t[2] && !t[3]) || (!t[0] && t[1] && !t[2] && t[3]);
  }
  fail(p, utf16 ? "a NUL byte: UTF-16 text? tlsql reads UTF-8 JSON (iconv -f UTF-16 -t UTF-8 converts it)"
                : "malformed JSON: a NUL byte where JSON text was expected");
}

size_t TraceScanner::check_encoding(Health& health) {
  const auto b0 = (unsigned char)at(0), b1 = (unsigned char)at(1), b2 = (unsigned char)at(2);
  if (b0 == 0xEF && b1 == 0xBB && b2 == 0xBF) {  // Windows tools write it; JSON allows a reader to skip it
    health.add("utf8_bom", -1, "UTF-8 byte order mark at the start of the file skipped");
    return 3;
  }
  // (UTF-32's marks start with these too: the advice is the same.)
  if ((b0 == 0xFF && b1 == 0xFE) || (b0 == 0xFE && b1 == 0xFF))
    fail(0, fmt::format("UTF-16 byte order mark (0x{:02X} 0x{:02X}): tlsql reads UTF-8 JSON "
                        "(iconv -f UTF-16 -t UTF-8 converts it)",
                        b0, b1));
  return 0;
}

size_t TraceScanner::skip_ws(size_t p) {
  for (;;) {
    size_t rel = json_scan::skip_ws(in_.window(), in_.avail(), p - in_.base());
    p = in_.base() + rel;
    if (rel < in_.avail() || !in_.refill(std::min(p, keep_))) return p;
  }
}

size_t TraceScanner::value_end(size_t p) {
  for (;;) {
    size_t rel = json_scan::skip_value(in_.window(), in_.avail(), p - in_.base());
    // A scalar that reaches the end of the window may go on in the next one.
    bool open = rel == npos || (rel == in_.avail() && !in_.at_end());
    if (!open) {
      if (rel == p - in_.base()) fail(p, fmt::format("malformed JSON: expected a value, found {}", shown(at(p))));
      return in_.base() + rel;
    }
    if (!in_.refill(std::min(p, keep_))) {
      if (rel != npos) return in_.base() + rel;
      fail(SIZE_MAX, at(p) == '"' ? "unclosed string (truncated file?)"
                                  : "document ends inside an array or object (truncated file?)");
    }
  }
}

void TraceScanner::append_checked(size_t from, size_t to, Health& health) {
  std::string_view t = text(from, to);
  JsonCheck check = check_json(t.data(), t.size());
  if (check.result == JsonCheck::invalid) fail(from + check.offset, check.message);
  if (check.result == JsonCheck::ok) {
    metadata_.append(t);
  } else {
    TextBuffer repaired = repair_json(t.data(), t.size(), health);
    metadata_.append(repaired.data(), repaired.size());
  }
  // Kept whole in memory and in trace.metadata, and read by whole-text JSON functions: bounded.
  if (metadata_.size() > kMetadataMaxBytes)
    fail(from, fmt::format("the top-level members besides traceEvents pass {} MiB (Kineto writes a few KB of them)",
                           kMetadataMaxBytes >> 20));
}

size_t TraceScanner::walk_cut(size_t from, TextBuffer& buf) {
  const size_t span = chunk_bytes + (1u << 20);
  buf.resize(span);
  const size_t got = in_.read_at(from, buf.data(), span);
  size_t cut = json_scan::npos;
  json_scan::ArrayWalk walk;
  json_scan::walk_array(buf.data(), got, 0, walk, [&](size_t comma) {
    if (cut == json_scan::npos && comma >= chunk_bytes) cut = comma;
  });  // (commas after the array's closing bracket are not reported)
  return cut == json_scan::npos ? cut : from + cut;
}

size_t TraceScanner::cut_speculatively(size_t start, const std::function<bool(Chunk&&)>& emit,
                                       const std::function<TextBuffer()>& spare) {
  // A guess is looked for in the first 64 KB after k * chunk_bytes, then in 1 MB (an event larger
  // than that: the rest is cut serially). The last chunk and the array's end are the serial walk's:
  // the end of traceEvents is not known without walking to it.
  constexpr size_t kNear = 64u << 10, kFar = 1u << 20;
  const size_t end = in_.file_bytes();
  TextBuffer probe;
  size_t s = start;
  size_t walked = SIZE_MAX;  // where the last chunk cut by walk_cut starts
  // A wrong guess costs the chunks read after it (each is read whole to prove it, and dropped)
  // and leaves what they added to the store's string pool and args arena. Where guesses mislead
  // (args holding arrays of objects: "},{" inside an event), every later chunk is cut by a walk
  // (walk_cut: a true boundary, never wrong; the file still read a chunk at a time, not through
  // the serial scan's 64 MiB window): after the third wrong guess, when there was one for every
  // eight chunks' worth of the text cut so far.
  size_t wrong = 0;
  bool walk_only = false;
  auto emit_run = [&](size_t from, size_t cut) {
    Chunk c{spare(), from, 0};
    c.source_bytes = cut - from;
    stopped_ = !emit(std::move(c));
    in_.note_done(cut);
  };
  while (!stopped_) {
    if (proof->failed()) {
      const size_t failed = proof->settle();
      // A chunk cut by a walk from a proved boundary that fails is no wrong guess but an error,
      // which the serial scan meets and reports as it always has.
      if (failed == walked) return failed;
      const size_t cut = walk_cut(failed, probe);
      if (cut == json_scan::npos) return failed;
      emit_run(failed, cut);
      walked = failed;
      s = cut + 1;
      walk_only = walk_only || (++wrong >= 3 && wrong * 8 * chunk_bytes >= s - start);
      continue;
    }
    const size_t guess = s + chunk_bytes;
    if (guess + chunk_bytes >= end) break;
    if (walk_only) {
      const size_t cut = walk_cut(s, probe);
      if (cut == json_scan::npos) break;
      emit_run(s, cut);
      walked = s;
      s = cut + 1;
      continue;
    }
    size_t cut = json_scan::npos;
    for (size_t span : {kNear, kFar}) {
      probe.resize(span);
      const size_t got = in_.read_at(guess, probe.data(), span);
      if ((cut = json_scan::guess_cut(probe.data(), got, 0)) != json_scan::npos) break;
    }
    if (cut == json_scan::npos) break;
    emit_run(s, guess + cut);
    s = guess + cut + 1;
  }
  if (stopped_) return s;
  const size_t failed = proof->settle();
  return failed == SIZE_MAX ? s : failed;
}

size_t TraceScanner::scan_events(size_t p, const std::function<bool(Chunk&&)>& emit,
                                 const std::function<TextBuffer()>& spare) {
  // Elements are cut at the commas between them: a chunk runs from just after one such comma to
  // just before another (or the closing bracket), so it is a valid array body as it stands.
  size_t chunk_first = events_;
  bool any_comma = false;
  auto flush = [&](size_t end) {
    size_t len = end - keep_;
    Chunk c{spare(), keep_, events_ - chunk_first};
    c.text.resize(len + 2);
    c.text.data()[0] = '[';
    std::memcpy(c.text.data() + 1, text(keep_, end).data(), len);
    c.text.data()[len + 1] = ']';
    stopped_ = !emit(std::move(c));
    chunk_first = events_;
  };
  keep_ = ++p;  // past '['
  if (proof && in_.random_access()) {
    const size_t from = cut_speculatively(p, emit, spare);
    if (stopped_) return p;
    if (from != p) {  // (past an event's comma: a proved boundary; the walk's state there is fresh)
      any_comma = true;
      in_.skip_to(from);
      keep_ = p = from;
    }
  }
  json_scan::ArrayWalk walk;
  for (;;) {
    size_t rel = json_scan::walk_array(in_.window(), in_.avail(), p - in_.base(), walk, [&](size_t comma) {
      ++events_;
      any_comma = true;
      size_t at = in_.base() + comma;
      if (at - keep_ >= chunk_bytes && !stopped_) {
        flush(at);
        keep_ = at + 1;
      }
    });
    if (stopped_) return p;
    if (rel < in_.avail()) {  // the closing bracket
      size_t end = in_.base() + rel;
      bool empty = json_scan::skip_ws(in_.window(), in_.avail(), keep_ - in_.base()) == rel;
      if (empty && any_comma) fail(end, "malformed JSON: expected an event after ','");
      if (!empty) {
        ++events_;
        flush(end);
      }
      keep_ = SIZE_MAX;
      return end + 1;
    }
    p = in_.base() + rel;
    if (!in_.refill(keep_)) fail(SIZE_MAX, "document ends inside the traceEvents array (truncated file?)");
  }
}

void TraceScanner::run(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare,
                       Health& health) {
  constexpr const char* kInObject = "document ends inside the top-level object (truncated file?)";
  size_t p = skip_ws(check_encoding(health));
  if (!has(p)) not_a_trace(0, "empty file: expected a JSON object or array");
  char c = at(p);
  if (!c) nul_at(p);
  if (c == '[') {
    bare_array_ = true;
    p = scan_events(p, emit, spare);
  } else if (c == '{') {
    bool have_events = false;
    // A key may come once: JSON readers disagree on a repeated one (Python's json and most keep the
    // last, SQLite's JSON functions read the first), and events already read from a first
    // traceEvents array cannot be taken back when a second follows. Kineto writes each key once.
    std::map<std::string, size_t> keys;  // top-level key -> its offset (a trace has a dozen)
    metadata_.assign(1, '{');            // (= "{" trips GCC 12 bug 105329, a bogus -Wrestrict)
    ++p;
    for (bool first = true;; first = false) {
      p = skip_ws(p);
      c = need(p, kInObject);
      if (c == '}' && first) {
        ++p;
        break;
      }
      if (c != '"') fail(p, fmt::format("malformed JSON: expected a key, found {}", shown(c)));
      size_t kstart = p, kend = value_end(p);
      std::string key(text(p + 1, kend - 1));
      // The key's text is appended to the metadata after its value is found: the window keeps it
      // while more text is read (a refill would otherwise move it out from under append_checked).
      keep_ = kstart;
      if (key.find('\\') != std::string::npos) {         // "trace\u0045vents" is traceEvents
        const std::string_view raw = text(p + 1, kend);  // (to its closing quote)
        if (auto plain = json_scan::plain_key(raw.data(), raw.data() + raw.size())) key = *plain;
      }
      if (auto [it, fresh] = keys.emplace(key, kstart); !fresh) {
        std::string name = key.size() > 40 ? key.substr(0, 40) + "..." : key;
        for (char& k : name)
          if ((unsigned char)k < 0x20 || k == 0x7F) k = '?';
        fail(kstart, fmt::format("the top-level key \"{}\" a second time (first at byte {}): JSON readers differ "
                                 "on which one to keep; keep one",
                                 name, it->second));
      }
      p = skip_ws(kend);
      if (need(p, kInObject) != ':') fail(p, "malformed JSON: expected ':' after a key");
      p = skip_ws(p + 1);
      c = need(p, kInObject);
      if (key == "traceEvents") {
        if (c != '[')
          fail(p, fmt::format("not a trace: \"traceEvents\" is not an array, found {}", shown(c)));  // (a broken one)
        have_events = true;
        keep_ = SIZE_MAX;
        p = scan_events(p, emit, spare);
        if (stopped_) return;
      } else {
        size_t vend = value_end(p);
        if (metadata_.size() > 1) metadata_ += ',';
        append_checked(kstart, kend, health);
        metadata_ += ':';
        append_checked(p, vend, health);
        keep_ = SIZE_MAX;
        p = vend;
      }
      p = skip_ws(p);
      c = need(p, kInObject);
      if (c == ',') {
        ++p;
        continue;
      }
      if (c != '}')
        fail(p, fmt::format("malformed JSON: expected ',' or '}}' in the top-level object, found {}", shown(c)));
      ++p;
      break;
    }
    metadata_ += '}';
    if (!have_events) not_a_trace(0, "not a trace: no \"traceEvents\" array in the top-level object");
  } else {
    not_a_trace(p, fmt::format("not JSON: expected '{{' or '[', found {}", shown(c)));
  }
  if (stopped_) return;
  // Only whitespace may follow the document: a NUL is content too, not an end of file (the text
  // after it would be lost without a word).
  p = skip_ws(p);
  if (has(p))
    fail(p, at(p) ? "unexpected content after the end of the JSON document"
                  : "unexpected content after the end of the JSON document (a NUL byte)");
}

}  // namespace tlsql
