#include "src/decimal.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

using tlsql::micros_to_ns;
using tlsql::parse_int64;

TEST_CASE("micros_to_ns keeps Kineto's 3 decimals exact") {
  CHECK(micros_to_ns("1234.567") == 1234567);
  CHECK(micros_to_ns("1419247332972.313") == 1419247332972313);    // bert trace ts: beyond double's exact ns
  CHECK(micros_to_ns("1666149715033200") == 1666149715033200000);  // integer µs
  CHECK(micros_to_ns("0") == 0);
  CHECK(micros_to_ns("-5") == -5000);
  CHECK(micros_to_ns("3.1") == 3100);
}

TEST_CASE("micros_to_ns rounds sub-ns digits half away from zero") {
  CHECK(micros_to_ns("1.0004") == 1000);  // 1000.4 ns
  CHECK(micros_to_ns("1.0005") == 1001);  // 1000.5 ns
  CHECK(micros_to_ns("-1.0005") == -1001);
  CHECK(micros_to_ns("0.0000001") == 0);
}

TEST_CASE("micros_to_ns handles exponents and rejects junk") {
  CHECK(micros_to_ns("1.5e3") == 1500000);
  CHECK(micros_to_ns("15E-1") == 1500);
  CHECK(micros_to_ns("1e300") == std::nullopt);  // does not fit in int64 ns
  CHECK(micros_to_ns("9223372036854775.807") == INT64_MAX);
  CHECK(micros_to_ns("9223372036854775.808") == std::nullopt);
  CHECK(micros_to_ns("") == std::nullopt);
  CHECK(micros_to_ns("abc") == std::nullopt);
  CHECK(micros_to_ns("1.2.3") == std::nullopt);
  CHECK(micros_to_ns("NaN") == std::nullopt);
  CHECK(micros_to_ns("1e") == std::nullopt);
}

TEST_CASE("parse_int64 wraps ids past 2^63 and flags them") {
  bool wrapped = false;
  CHECK(parse_int64("42", &wrapped) == 42);
  CHECK_FALSE(wrapped);
  CHECK(parse_int64("-9223372036854775808") == INT64_MIN);
  CHECK(parse_int64("18446744073709551615", &wrapped) == -1);
  CHECK(wrapped);
  CHECK(parse_int64("18446744073709551616") == std::nullopt);
  CHECK(parse_int64("1.5") == std::nullopt);
  CHECK(parse_int64("-") == std::nullopt);
  CHECK(parse_int64("0x0") == 0);  // ROCm stream ids
  CHECK(parse_int64("0x1F") == 31);
  CHECK(parse_int64("0xg") == std::nullopt);
}

// Texts of up to 18 digits without an exponent take a 64-bit short path; the same text with "e0"
// appended means the same number and takes the general (128-bit) one: the two must agree on every
// shape (signs, no integer or no fraction digits, 1-20 digits, rounding at the half).
TEST_CASE("micros_to_ns: the short path and the general one agree") {
  uint64_t seed = 12345;
  auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 33; };
  for (int i = 0; i < 200000; ++i) {
    std::string t;
    if (next() % 4 == 0) t += next() % 2 ? '-' : '+';
    const int before = (int)(next() % 14), after = (int)(next() % 9);
    for (int k = 0; k < before; ++k) t += (char)('0' + next() % 10);
    if (after || next() % 3 == 0) t += '.';
    for (int k = 0; k < after; ++k) t += (char)('0' + (next() % 3 == 0 ? 5 : next() % 10));
    CAPTURE(t);
    CHECK(micros_to_ns(t) == micros_to_ns(t + "e0"));
  }
  CHECK(micros_to_ns("999999999999999999") == std::nullopt);       // 18 digits: too many ns
  CHECK(micros_to_ns("9223372036854775") == 9223372036854775000);  // 16 digits, x1000 fits
  CHECK(micros_to_ns("-9223372036854775.807") == -INT64_MAX);
}

// Up to 18 digits take a 64-bit short path: against std::strtoll on random texts of 1-19 digits
// (19 starting with 1, so that they fit and strtoll does not clamp).
TEST_CASE("parse_int64: the short path against strtoll") {
  uint64_t seed = 777;
  auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 33; };
  for (int i = 0; i < 100000; ++i) {
    std::string t = next() % 3 == 0 ? "-" : "";
    const int digits = 1 + (int)(next() % 19);
    for (int k = 0; k < digits; ++k) t += (char)('0' + (k == 0 && digits == 19 ? 1 : next() % 10));  // (fits)
    CAPTURE(t);
    CHECK(parse_int64(t) == std::strtoll(t.c_str(), nullptr, 10));
  }
  CHECK(parse_int64("12a") == std::nullopt);
  CHECK(parse_int64("+1") == std::nullopt);
  CHECK(parse_int64("") == std::nullopt);
}
