// round(x, n) on a tlsql connection (udf/stats/sql_round.cpp) against SQLite's built-in on a plain
// one, bit for bit: the reports print what round gives, and a saved view recomputes it with the
// built-in. The values are where the two could part: ties and their neighbouring doubles (SQLite
// nudges a double a hair below a tie up), every magnitude and sign, zeros, 2^52 and past it, and
// every n, including those computed through SQLite's printf.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "udf/registry.h"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Round {
  sqlite3* db = nullptr;
  sqlite3_stmt* st = nullptr;
  explicit Round(bool tlsql) {
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    if (tlsql) tlsql::register_sql_functions(db);
    REQUIRE(sqlite3_prepare_v2(db, "SELECT round(?1, ?2), typeof(round(?1, ?2))", -1, &st, nullptr) == SQLITE_OK);
  }
  ~Round() {
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  // The result's bits (NULL: a fixed pattern no double here has).
  uint64_t operator()(double x, int n) {
    sqlite3_bind_double(st, 1, x);
    sqlite3_bind_int(st, 2, n);
    uint64_t bits = 0x7ff8dead;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
      const double v = sqlite3_column_double(st, 0);
      std::memcpy(&bits, &v, sizeof bits);
    }
    sqlite3_reset(st);
    return bits;
  }
};

}  // namespace

TEST_CASE("round(x, n) gives SQLite's built-in round's double, bit for bit") {
  Round ours(true), sqlite(false);
  std::vector<std::pair<double, int>> cases;
  auto near = [&](double x, int n) {  // x and its four neighbouring doubles either side, both signs
    for (double v : {x, -x}) {
      double up = v, down = v;
      cases.push_back({v, n});
      for (int k = 0; k < 4; ++k) {
        up = std::nextafter(up, kInf), down = std::nextafter(down, -kInf);
        cases.push_back({up, n});
        cases.push_back({down, n});
      }
    }
  };
  const double pow10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7};
  for (int n = 0; n <= 7; ++n) {
    // Ties (k + 0.5) / 10^n and the decimals k / 10^n, small k and large.
    for (int64_t k = 0; k < 3000; ++k) {
      near(((double)k + 0.5) / pow10[n], n);
      near((double)k / pow10[n], n);
    }
    for (int64_t k : {123456789LL, 987654321987LL, 4503599627370LL, 450359962737049LL})
      for (int64_t j = 0; j < 50; ++j) near(((double)(k + j) + 0.5) / pow10[n], n);
  }
  // Every magnitude, random digits; n from 0 past SQLite's cap of 30 and below 0.
  std::mt19937_64 rng(51);
  std::uniform_real_distribution<double> mantissa(1, 10);
  std::uniform_int_distribution<int> exponent(-12, 17), places(-2, 33);
  for (int i = 0; i < 60000; ++i) {
    const double x = mantissa(rng) * std::pow(10.0, exponent(rng)) * (i % 2 ? -1 : 1);
    cases.push_back({x, places(rng) % 6});
    if (i % 10 == 0) cases.push_back({x, places(rng)});
  }
  // Kineto's 3 decimals of µs over 1000 (the reports' ns / 1e3), ratios, percentages.
  for (int64_t ns = 1; ns < 400000; ns += 7) cases.push_back({(double)ns / 1e3, 3});
  for (int a = 1; a < 300; ++a)
    for (int b = 1; b < 40; ++b) cases.push_back({1.0 * a / b, 3}), cases.push_back({100.0 * a / (a + b), 2});
  // Zeros, 2^52 and beyond, the infinities, huge and tiny.
  for (double x : {0.0, -0.0, 4503599627370496.0, 4503599627370497.0, 4503599627370495.5, 9007199254740993.0, 1e300,
                   -1e300, 5e-324, 2.2250738585072014e-308, kInf, -kInf})
    for (int n : {-1, 0, 1, 2, 3, 4, 5, 15, 30, 31}) cases.push_back({x, n});

  int wrong = 0;
  for (const auto& [x, n] : cases) {
    const uint64_t a = ours(x, n), b = sqlite(x, n);
    if (a != b && ++wrong <= 5) {
      double da, db;
      std::memcpy(&da, &a, sizeof da), std::memcpy(&db, &b, sizeof db);
      CHECK_MESSAGE(false, "round(", x, ", ", n, "): ", da, " but SQLite's is ", db);
    }
  }
  CHECK(wrong == 0);
  CHECK(cases.size() > 500000);
}

TEST_CASE("round(x, n) treats NULLs, text and n as SQLite's does") {
  Round ours(true);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(ours.db,
                             "SELECT round(NULL, 2) IS NULL, round(2.5, NULL) IS NULL, round('2.345', 2), "
                             "round(2.345, '1'), round(-2.5, 0), typeof(round(7, 2)), round(1.23456, 3.9), "
                             "round(2.5), round(-0.0004, 3)",
                             -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(sqlite3_column_int(st, 0) == 1);
  CHECK(sqlite3_column_int(st, 1) == 1);
  CHECK(sqlite3_column_double(st, 2) == 2.35);  // the text as a number; 2.345 rounds up (SQLite's nudge)
  CHECK(sqlite3_column_double(st, 3) == 2.3);   // n as an integer from text
  CHECK(sqlite3_column_double(st, 4) == -3.0);  // half away from zero
  CHECK(std::string((const char*)sqlite3_column_text(st, 5)) == "real");
  CHECK(sqlite3_column_double(st, 6) == 1.235);       // n = 3.9 taken as 3
  CHECK(sqlite3_column_double(st, 7) == 3.0);         // one argument: SQLite's own
  CHECK(std::signbit(sqlite3_column_double(st, 8)));  // "-0.000" read back: a negative zero
  sqlite3_finalize(st);
}
