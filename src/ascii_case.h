// ASCII case folding: the one rule every case-insensitive match in tlsql uses (trace categories,
// file names' extensions, kernel and op names, the shell's suggestions). Not std::tolower: that
// follows the C locale the shell sets, and where C.UTF-8 is missing its fallback may be a
// single-byte locale that folds bytes of UTF-8 names too (Latin-1's 0xC9 to 0xE9); it is also a
// call per byte. Bytes outside A-Z are kept as they are.
#pragma once

#include <string>
#include <string_view>

namespace tlsql {

constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c; }

inline std::string lowercase(std::string_view s) {
  std::string l(s);
  for (char& c : l) c = ascii_lower(c);
  return l;
}

}  // namespace tlsql
