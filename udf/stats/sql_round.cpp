// round(x, n) as SQLite's own, bit for bit, without its text round trip for almost every value.
//
// SQLite 3.40's round(x, n) (func.c roundFunc) writes x with its printf ("%.*f") and reads the text
// back (sqlite3AtoF): about 0.25 µs a call, and the reports call it on nearly every value they
// print (diff_tree_ops: six a row; issue 51). The same value comes from integer arithmetic wherever
// the digits printf would write are certain: this file registers round with two arguments on each
// connection, computing them so, and asks SQLite's printf for the rest. The one-argument round has
// no text round trip in SQLite and stays SQLite's. tests/unit/sql_round_test.cpp compares the two
// on a plain connection, bit for bit, near every kind of tie.
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <vector>

#include "udf/registry.h"
#include "udf/sql_function.h"

namespace tlsql {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// sqlite3AtoF's last step, from the digits as an integer and the power of ten after them: the
// trailing zeros taken off, then one multiplication or division by the power of ten, in long
// double (x86's 80-bit; SQLite's LONGDOUBLE_TYPE), the quotient rounded to double once more.
double atof_finish(bool negative, int64_t s, int e) {
  if (s == 0) return negative ? -0.0 : 0.0;  // SQLite keeps the sign of a zero
  const bool down = e < 0;
  e = std::abs(e);
  while (e > 0) {
    if (!down) {
      if (s >= kInt64Max / 10) break;
      s *= 10;
    } else {
      if (s % 10 != 0) break;
      s /= 10;
    }
    --e;
  }
  if (negative) s = -s;
  if (e == 0) return (double)s;
  long double scale = 1.0;
  // 1e22 is the largest power of ten a double holds exactly: SQLite's steps, in its order.
  while (e % 22) scale *= 1.0e+1, --e;
  while (e > 0) scale *= 1.0e+22, e -= 22;
  return down ? (double)((long double)s / scale) : (double)((long double)s * scale);
}

// sqlite3AtoF on the text SQLite's "%.*f" writes ("-123.4560"): a sign, digits, a point, digits
// (past 16 significant ones all zeros). Digits past what an int64 holds count only as a power of
// ten, as there.
double atof_of_fixed(std::string_view t) {
  constexpr int64_t kLimit = (kInt64Max - 9) / 10;
  size_t i = 0;
  const bool negative = i < t.size() && t[i] == '-';
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
  auto digit = [&] { return i < t.size() && t[i] >= '0' && t[i] <= '9'; };
  int64_t s = 0;
  int d = 0;
  while (digit()) {
    s = s * 10 + (t[i++] - '0');
    if (s >= kLimit)
      while (digit()) ++i, ++d;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    for (; digit(); ++i)
      if (s < kLimit) s = s * 10 + (t[i] - '0'), --d;
  }
  return atof_finish(negative, s, d);
}

// The digits of |r| rounded to n decimals, as an integer, where they are certain; else -1. SQLite's
// printf adds half a unit of the last decimal (and |r| * 3e-16, nudging values a hair below a tie
// up) in long double and cuts the digits off: the integer nearest y = |r| * 10^n, unless y lies
// within those errors of a tie (its fraction near 0.5). For n <= 4, y is exact in long double
// (53 bits of r, 10 of 5^n), and below 2^52 every digit is one of the 16 significant digits
// printf writes (it writes zeros past them: round(264402518187532.03, 2) is 264402518187532.0).
int64_t certain_digits(double r, int n) {
  static constexpr long double kPow10[] = {1, 10, 100, 1000, 10000};
  if (n < 1 || n > 4) return -1;
  const long double y = std::fabs((long double)r) * kPow10[n];
  if (!(y < 0x1p52L)) return -1;
  const long double below = std::floor(y), fraction = y - below;  // both exact
  // printf's own error is |y| * 3e-16 and a few long double ulps: the margin is 30 times that.
  if (std::fabs(fraction - 0.5L) <= y * 1e-14L + 1e-12L) return -1;
  return (int64_t)below + (fraction > 0.5L ? 1 : 0);
}

void round_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[1]) == SQLITE_NULL) return;  // NULL, as SQLite's round
  int n = sqlite3_value_int(argv[1]);
  n = n > 30 ? 30 : n < 0 ? 0 : n;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  double r = sqlite3_value_double(argv[0]);
  if (r < -4503599627370496.0 || r > +4503599627370496.0) {
    // 2^52 and beyond: no fraction to round, r as it is (SQLite's first case).
  } else if (std::isnan(r)) {
    return;  // (SQLite stores a NaN as NULL, so no value is one; kept defined all the same)
  } else if (n == 0) {
    r = (double)(int64_t)(r + (r < 0 ? -0.5 : +0.5));
  } else if (const int64_t digits = certain_digits(r, n); digits >= 0) {
    // A zero prints as "0.000" (-0.0 not being < 0), a negative as "-...": the sign AtoF reads.
    r = atof_finish(r < 0, digits, -n);
  } else {
    char* text = sqlite3_mprintf("%.*f", n, r);  // SQLite's own printf, as its round
    if (!text) return sqlite3_result_error_nomem(ctx);
    r = atof_of_fixed(text);
    sqlite3_free(text);
  }
  sqlite3_result_double(ctx, r);
}

std::vector<SqlFunction> no_functions() { return {}; }

// round(x, n) replaces the built-in of the same arity on the connection (SQLite looks up a
// connection's functions by name and argument count first); round(x) stays the built-in. Not in
// tlsql_functions or .help: it is SQLite's round, only faster.
void setup_round(sqlite3* db) {
  sqlite3_create_function_v2(db, "round", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr, round_fn,
                             nullptr, nullptr, nullptr);
}

}  // namespace

TLSQL_FUNCTIONS(no_functions, setup_round);

}  // namespace tlsql
