#include "src/decimal.h"

#include <algorithm>

namespace tlsql {

namespace {
using u128 = unsigned __int128;
constexpr u128 kMantissaLimit = (u128)1 << 100;  // ~30 significant digits, far below 1 ns
}  // namespace

namespace {
constexpr uint64_t kPow10[] = {1,
                               10,
                               100,
                               1000,
                               10000,
                               100000,
                               1000000,
                               10000000,
                               100000000,
                               1000000000,
                               10000000000,
                               100000000000,
                               1000000000000,
                               10000000000000,
                               100000000000000,
                               1000000000000000,
                               10000000000000000,
                               100000000000000000,
                               1000000000000000000};

// What Kineto writes ("1234567.890", "-5", "12"): at most 18 digits, no exponent. Exact in 64
// bits, so it skips the general path's 128-bit steps; nullopt when the text is anything else (or
// the result would not fit), and the general path decides.
std::optional<int64_t> micros_to_ns_short(std::string_view t) {
  size_t i = 0, n = t.size();
  bool neg = false;
  if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  uint64_t mant = 0;
  int digits = 0, frac = -1;  // frac: digits after the '.', -1 before it
  for (; i < n; ++i) {
    const unsigned d = (unsigned char)t[i] - '0';
    if (d <= 9) {
      mant = mant * 10 + d;
      ++digits;
      frac += frac >= 0;
    } else if (t[i] == '.' && frac < 0) {
      frac = 0;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || digits > 18) return std::nullopt;
  const int scale = 3 - std::max(frac, 0);  // the result is mant * 10^scale ns
  uint64_t v;
  if (scale >= 0) {
    if (__builtin_mul_overflow(mant, kPow10[scale], &v) || v > (uint64_t)INT64_MAX) return std::nullopt;
  } else {
    const uint64_t div = kPow10[-scale];         // (scale >= 3 - 18)
    v = mant / div + ((mant % div) * 2 >= div);  // half away from zero (sign applied below)
  }
  return neg ? -(int64_t)v : (int64_t)v;
}
}  // namespace

std::optional<int64_t> micros_to_ns(std::string_view t) {
  if (auto r = micros_to_ns_short(t)) return r;
  size_t i = 0, n = t.size();
  bool neg = false;
  if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  u128 mant = 0;
  int scale = 3;  // the text is in µs; the result is mant * 10^scale ns
  bool any = false;
  for (bool fractional = false;; ++i) {
    if (i < n && t[i] >= '0' && t[i] <= '9') {
      any = true;
      if (mant < kMantissaLimit) {
        mant = mant * 10 + (t[i] - '0');
        scale -= fractional;
      } else {
        scale += !fractional;  // an integer digit past the precision still counts its magnitude
      }
    } else if (i < n && t[i] == '.' && !fractional) {
      fractional = true;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) eneg = t[i++] == '-';
    if (i >= n || t[i] < '0' || t[i] > '9') return std::nullopt;
    int e = 0;
    for (; i < n && t[i] >= '0' && t[i] <= '9'; ++i) e = e < 100000 ? e * 10 + (t[i] - '0') : e;
    scale += eneg ? -e : e;
  }
  if (i != n) return std::nullopt;
  if (mant == 0) return 0;
  for (; scale > 0; --scale) {
    if (mant > (u128)INT64_MAX) return std::nullopt;
    mant *= 10;
  }
  if (scale < 0) {
    if (scale < -38) return 0;
    u128 div = 1;
    for (int k = 0; k < -scale; ++k) div *= 10;
    u128 q = mant / div;
    if ((mant % div) * 2 >= div) ++q;  // half away from zero (sign applied below)
    mant = q;
  }
  if (mant > (u128)INT64_MAX) return std::nullopt;
  return neg ? -(int64_t)mant : (int64_t)mant;
}

std::optional<int64_t> parse_int64(std::string_view t, bool* wrapped) {
  size_t i = 0, n = t.size();
  if (n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {  // ROCm writes ids like "0x1f"
    uint64_t v = 0;
    if (n > 18) return std::nullopt;
    for (i = 2; i < n; ++i) {
      char c = t[i];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + (uint64_t)d;
    }
    if (v > (uint64_t)INT64_MAX && wrapped) *wrapped = true;
    return (int64_t)v;
  }
  bool neg = i < n && t[i] == '-';
  i += neg;
  if (i >= n) return std::nullopt;
  if (n - i <= 18) {  // the common case, exact in 64 bits
    int64_t v = 0;
    for (; i < n; ++i) {
      const unsigned d = (unsigned char)t[i] - '0';
      if (d > 9) return std::nullopt;
      v = v * 10 + d;
    }
    return neg ? -v : v;
  }
  u128 v = 0;
  for (; i < n; ++i) {
    if (t[i] < '0' || t[i] > '9') return std::nullopt;
    v = v * 10 + (t[i] - '0');
    if (v > (u128)UINT64_MAX) return std::nullopt;
  }
  if (neg) {
    if (v > (u128)INT64_MAX + 1) return std::nullopt;
    return (int64_t)(-(__int128)v);
  }
  if (v > (u128)INT64_MAX) {
    if (wrapped) *wrapped = true;
    return (int64_t)(uint64_t)v;
  }
  return (int64_t)v;
}

}  // namespace tlsql
