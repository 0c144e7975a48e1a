// What the loader accepts as JSON, in one place. The readers read only the members tlsql uses and
// skip the rest unchecked (the Kineto reader's walk checks nothing), so every piece of text is
// checked whole here first:
// anything that is not JSON (RFC 8259) is an error with its offset; the string defects real
// traces carry are repaired by repair_json() and counted in health, never dropped silently.
#pragma once

#include <cstddef>
#include <string>

#include "src/health.h"
#include "src/input.h"

namespace tlsql {

struct JsonCheck {
  enum Result {
    ok,
    repairable,  // valid structure, but repair_json() must rewrite some strings or NaN / Infinity first
    invalid      // not JSON: `offset` is the first byte that cannot be, `message` what was expected
  } result = ok;
  size_t offset = 0;
  std::string message;
  // When the value is an array (and not invalid): its elements, counted in the same walk (a
  // speculative chunk's rows, issue 51: the parse threads count them, not the serial scan).
  size_t elements = 0;
};

// Checks that d[0, n) is exactly one JSON value (surrounding whitespace allowed). Never recurses:
// nesting depth costs one byte of heap per level. Repairable defects:
//   - invalid UTF-8 and raw control characters inside strings,
//   - escapes JSON does not have (\x, \u12), lone UTF-16 surrogates and \u0000 (SQLite's text
//     functions stop at NUL),
//   - NaN, Infinity, -Infinity (Python's json writes them; SQLite's JSON functions refuse them).
JsonCheck check_json(const char* d, size_t n);

// Rewrites text that check_json() called repairable: invalid UTF-8 bytes and lone surrogates become
// U+FFFD, raw control characters \u00XX, \u0000 becomes \ufffd, an unknown escape keeps its
// backslash as a character (\x -> \\x), NaN / Infinity become null. Counts each kind in `health`.
TextBuffer repair_json(const char* d, size_t n, Health& health);

}  // namespace tlsql
