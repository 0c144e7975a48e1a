#include "src/augment.h"

#include <fmt/format.h>

#include <cstdio>

#include "src/input.h"
#include "src/json_scan.h"
#include "src/output_file.h"

namespace tlsql {

using namespace json_scan;

namespace {

// The whole text: augmenting is rare, so the simple way (the file in memory) is fine. The path
// comes from the database (a saved one names its original trace), so it must be a regular file
// whose text is exactly the `bytes` that were loaded: reading stops past them, so a path that
// names /dev/zero, a FIFO or another, larger file cannot make the copy read forever.
std::string read_all(const std::string& path, size_t bytes, const char* what) {
  InputSource in(path, SIZE_MAX, true);
  while (in.base() + in.avail() <= bytes && in.refill(0)) {
  }
  const size_t got = in.base() + in.avail();
  if (got != bytes)
    throw LoadError(fmt::format("{}: cannot {}: not the trace that was loaded ({} bytes of JSON, this file {} {})",
                                path, what, bytes, got > bytes ? "more than" : "has", got > bytes ? bytes : got));
  return std::string(in.window(), in.avail());
}

std::string fields(const Augment& a) {
  std::string s;
  if (a.flops >= 0) s += fmt::format("\"kernel_flop\": {:.0f}", a.flops);
  if (a.bytes >= 0) s += fmt::format("{}\"kernel_num_gb\": {}", s.empty() ? "" : ", ", a.bytes / 1e9);
  return s;
}

}  // namespace

void write_trace_copy(const std::string& in_path, size_t in_bytes, const std::string& out_path,
                      const TraceAdditions& edits, const char* what) {
  const std::map<int64_t, std::string>& numbers = edits.members;
  const std::string text = read_all(in_path, in_bytes, what);
  const char* d = text.data();
  const size_t n = text.size();
  auto fail = [&](const std::string& why) { throw LoadError(fmt::format("{}: cannot {}: {}", in_path, what, why)); };

  // Find the traceEvents array (a bare array is the array itself).
  size_t p = skip_ws(d, n, 0);
  if (p + 3 <= n && text.compare(p, 3, "\xEF\xBB\xBF") == 0) p = skip_ws(d, n, p + 3);
  if (p < n && d[p] == '{') {
    ++p;
    for (;;) {
      p = skip_ws(d, n, p);
      if (p >= n || d[p] != '"') fail("no traceEvents array");
      size_t kend = skip_string(d, n, p);
      if (kend == npos) fail("malformed JSON");
      bool events = text.compare(p, kend - p, "\"traceEvents\"") == 0;
      p = skip_ws(d, n, kend);
      if (p >= n || d[p] != ':') fail("malformed JSON");
      p = skip_ws(d, n, p + 1);
      if (events) break;
      p = skip_value(d, n, p);
      if (p == npos) fail("malformed JSON");
      p = skip_ws(d, n, p);
      if (p >= n || d[p] != ',') fail("no traceEvents array");
      ++p;
    }
  }
  if (p >= n || d[p] != '[') fail("traceEvents is not an array");

  std::string out;
  out.reserve(n + numbers.size() * 64 + edits.events.size());
  size_t copied = 0;
  ++p;
  bool any = false;  // the array has an element
  for (int64_t i = 0;; ++i) {
    p = skip_ws(d, n, p);
    if (p < n && d[p] == ']') break;
    size_t e = skip_value(d, n, p);
    if (e == npos) fail("malformed JSON");
    auto it = numbers.find(i);
    if (it != numbers.end() && d[p] == '{') {
      const std::string& add = it->second;
      std::string_view ev(d + p, e - p);
      std::string_view args = find_member(ev, "args");
      bool named = false;
      for (const std::string& k : edits.unless) named = named || args.find("\"" + k + "\"") != std::string_view::npos;
      if (!add.empty() && !named) {
        if (!args.empty() && args[0] == '{') {
          size_t at = (args.data() - d) + 1;  // just inside the args object
          bool empty = skip_ws(d, n, at) < n && d[skip_ws(d, n, at)] == '}';
          out.append(d + copied, at - copied);
          out += add;
          if (!empty) out += ", ";
          copied = at;
        } else if (args.empty()) {
          size_t close = e - 1;  // the event's closing brace
          bool empty = skip_ws(d, n, p + 1) == close;
          out.append(d + copied, close - copied);
          out += fmt::format("{}\"args\": {{{}}}", empty ? "" : ", ", add);
          copied = close;
        }
      }
    }
    p = skip_ws(d, n, e);
    if (p < n && d[p] == ',')
      ++p;
    else if (p >= n || d[p] != ']')
      fail("malformed JSON in traceEvents");
    any = true;
  }
  if (!edits.events.empty()) {  // p is at the array's closing bracket
    out.append(d + copied, p - copied);
    out += any ? ",\n" : "\n";
    out += edits.events;
    copied = p;
  }
  out.append(d + copied, n - copied);

  write_file_atomic(out_path, out);
}

void write_augmented(const std::string& in_path, size_t in_bytes, const std::string& out_path,
                     const std::map<int64_t, Augment>& numbers) {
  TraceAdditions add;
  for (const auto& [i, a] : numbers) add.members.emplace(i, fields(a));
  add.unless = {"kernel_flop", "kernel_num_gb"};
  write_trace_copy(in_path, in_bytes, out_path, add, "augment");
}

}  // namespace tlsql
