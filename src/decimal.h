#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tlsql {

// Converts a JSON number written in microseconds ("1234.567", "-5", "1.5e3") to integer
// nanoseconds using only integer arithmetic, so the 3 decimals Kineto writes stay exact
// (1234.567 µs -> 1234567 ns). Digits below 1 ns are rounded half away from zero.
// Returns nullopt when the text is not a number or the result does not fit in int64.
std::optional<int64_t> micros_to_ns(std::string_view text);

// Parses a JSON integer (or a numeric string's content) to int64. Values in [2^63, 2^64) are
// wrapped to negative int64 (two's complement) so ids keep their identity for joins; *wrapped
// tells the caller to count it. Returns nullopt for anything that is not an integer.
std::optional<int64_t> parse_int64(std::string_view text, bool* wrapped = nullptr);

}  // namespace tlsql
