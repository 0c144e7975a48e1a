#include "src/decimal.h"

#include <doctest/doctest.h>

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
