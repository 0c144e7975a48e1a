#include "src/terminal.h"

#include <fmt/format.h>
#include <unistd.h>

namespace tlsql {

std::string show_controls(std::string_view s, bool keep_lines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
      if ((c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c == 0x7f)
        out += '^', out += c == 0x7f ? '?' : (char)(c + '@');
      else
        out += (char)c;
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, every continuation byte 10xxxxxx.
    const size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
    if (!ok) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    if (len == 2 && c == 0xc2 && (unsigned char)s[i + 1] < 0xa0)  // U+0080 .. U+009F: C1 controls
      out += fmt::format("\\u{:04x}", (unsigned char)s[i + 1]);
    else
      out.append(s.data() + i, len);
    i += len;
  }
  return out;
}

bool is_terminal(FILE* f) { return f && isatty(fileno(f)); }

bool has_controls(std::string_view s) { return show_controls(s, false) != s; }

void say(FILE* f, std::string_view text) {
  if (is_terminal(f)) {
    const std::string shown = show_controls(text);
    std::fwrite(shown.data(), 1, shown.size(), f);
  } else {
    std::fwrite(text.data(), 1, text.size(), f);
  }
}

}  // namespace tlsql
