// Writing Kineto events as text, for readers that translate their input into Kineto events in
// their scan and let the Kineto parser make the rows (src/readers/memory_timeline); and the JSON
// text helpers (escape, integer, micros) the record writers use for args (src/readers/
// event_records.h, which the rocprofv3 and Nsight readers write instead of Kineto text).
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>

#include "src/readers/reader.h"

namespace tlsql::kineto_text {

// `s` as a JSON string. Control characters are escaped; other bytes pass (the Kineto parser's JSON
// check repairs invalid UTF-8 and counts it in health). `Out`: a std::string, or a buffer with its
// append(), += and push_back (event_records::Writer's).
template <class Out>
inline void escape(Out& out, std::string_view s) {
  out += '"';
  size_t run = 0;  // bytes [run, i) pass unchanged: appended in one piece (kernel names run to KBs)
  for (size_t i = 0; i < s.size(); ++i) {
    // Eight bytes at a time while none is a control character, '"' or '\\' (the has-less /
    // has-zero bit tricks: such a byte sets its top bit in `hit`; a borrow may set a later one too,
    // and that byte is then looked at one by one).
    constexpr uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
    while (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
      uint64_t hit = (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
      if (hit) break;
      i += 8;
    }
    if (i >= s.size()) break;
    unsigned char u = (unsigned char)s[i];
    if (u >= 0x20 && u != '"' && u != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    if (u >= 0x20)
      out += '\\', out += (char)u;
    else
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

// `v` in decimal (std::to_chars: no format string parsed per number, as fmt::format_to would).
template <class Out>
inline void integer(Out& out, int64_t v) {
  char b[24];
  // (pointer and length: the two-iterator append goes through replace(), where GCC 12's inliner
  // reports a false -Wrestrict overlap.)
  out.append(b, static_cast<size_t>(std::to_chars(b, b + sizeof b, v).ptr - b));
}

// ns as the decimal µs text Kineto writes ("1234.567"): the Kineto parser reads it back exactly.
inline void micros(std::string& out, int64_t ns) {
  uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
  char b[32], *p = b;
  if (ns < 0) *p++ = '-';
  p = std::to_chars(p, b + sizeof b, u / 1000).ptr;
  unsigned frac = (unsigned)(u % 1000);
  *p++ = '.', *p++ = char('0' + frac / 100), *p++ = char('0' + frac / 10 % 10), *p++ = char('0' + frac % 10);
  out.append(b, p);
}

// Events written one field at a time into chunks of about `chunk_bytes` ("[" e "," e ... "]"),
// each handed to the pipeline's emit with its row count.
class ChunkWriter {
 public:
  ChunkWriter(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare, size_t chunk_bytes)
      : emit_(emit), spare_(spare), chunk_bytes_(chunk_bytes) {}

  size_t rows() const { return rows_; }  // rows written so far: the next row's index in the trace

  void begin(std::string_view ph, std::string_view cat, std::string_view name) {
    if (!body_.empty()) body_ += ',';
    body_ += "{\"ph\":";
    escape(body_, ph);
    body_ += ",\"cat\":";
    escape(body_, cat);
    body_ += ",\"name\":";
    escape(body_, name);
  }
  void time(std::string_view key, int64_t ns) {
    body_ += ',';
    escape(body_, key);
    body_ += ':';
    micros(body_, ns);
  }
  void field(std::string_view key, int64_t v) {
    body_ += ',';
    escape(body_, key);
    body_ += ':';
    integer(body_, v);
  }
  void open_args() {
    body_ += ",\"args\":{";
    first_arg_ = true;
  }
  void key(std::string_view k) {
    if (!first_arg_) body_ += ',';
    first_arg_ = false;
    escape(body_, k);
    body_ += ':';
  }
  void arg(std::string_view k, int64_t v) {
    key(k);
    integer(body_, v);
  }
  void text_arg(std::string_view k, std::string_view v) {
    key(k);
    escape(body_, v);
  }
  // `json` must be one valid JSON value (the caller checked it).
  void json_arg(std::string_view k, std::string_view json) {
    key(k);
    body_ += json;
  }
  std::string& raw() { return body_; }
  // Closes the event (and its args object when `args`).
  void end(bool args = true) {
    body_ += args ? "}}" : "}";
    ++rows_;
    if (body_.size() >= chunk_bytes_) flush();
  }
  void flush() {
    if (stopped_) body_.clear(), first_ = rows_;  // cancelled: the error that cancelled it is reported
    if (rows_ == first_) return;
    Chunk c{spare_(), 0, rows_ - first_};
    c.text.resize(body_.size() + 2);
    c.text.data()[0] = '[';
    std::memcpy(c.text.data() + 1, body_.data(), body_.size());
    c.text.data()[body_.size() + 1] = ']';
    body_.clear();
    first_ = rows_;
    stopped_ = !emit_(std::move(c));
  }
  bool stopped() const { return stopped_; }

 private:
  const std::function<bool(Chunk&&)>& emit_;
  const std::function<TextBuffer()>& spare_;
  size_t chunk_bytes_;
  std::string body_;
  size_t rows_ = 0, first_ = 0;
  bool first_arg_ = true, stopped_ = false;
};

}  // namespace tlsql::kineto_text
