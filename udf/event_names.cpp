#include "udf/event_names.h"

#include <cctype>

namespace tlsql {

std::string normalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  auto digits = [&](size_t at, bool hex) {
    size_t end = at;
    while (end < name.size() &&
           (hex ? std::isxdigit((unsigned char)name[end]) : std::isdigit((unsigned char)name[end])))
      ++end;
    return end - at;
  };
  for (size_t i = 0; i < name.size();) {
    // 0x followed by 3+ hex digits, not inside a longer word (a kernel's "0x" in an identifier is rare).
    if (name[i] == '0' && i + 1 < name.size() && (name[i + 1] == 'x' || name[i + 1] == 'X') &&
        (i == 0 || !std::isalnum((unsigned char)name[i - 1]))) {
      const size_t n = digits(i + 2, true);
      if (n >= 3) {
        out += "0x?";
        i += 2 + n;
        continue;
      }
    }
    if (name.compare(i, 4, ".py(") == 0) {
      const size_t n = digits(i + 4, false);
      if (n && i + 4 + n < name.size() && name[i + 4 + n] == ')') {
        out += ".py(?)";
        i += 4 + n + 1;
        continue;
      }
    }
    out += name[i++];
  }
  return out;
}

}  // namespace tlsql
