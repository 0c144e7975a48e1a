#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tlsql {

// A stable LSD radix sort of `v` on bits [low, high) of each key, 11 bits a pass (no recursion;
// a pass per 11 bits of key, so callers pack only the bits their range needs).
template <typename Key>
void radix_sort(std::vector<Key>& v, int low, int high) {
  constexpr int kDigit = 11;
  std::vector<Key> tmp(v.size());
  std::vector<size_t> count(size_t{1} << kDigit);
  for (int at = low; at < high; at += kDigit) {
    const int width = std::min(kDigit, high - at);
    const Key mask = (Key(1) << width) - 1;
    std::fill(count.begin(), count.end(), 0);
    for (const Key& k : v) ++count[(size_t)((k >> at) & mask)];
    size_t sum = 0;
    for (size_t& c : count) sum += std::exchange(c, sum);
    for (const Key& k : v) tmp[count[(size_t)((k >> at) & mask)]++] = k;
    v.swap(tmp);
  }
}

// Bits needed to hold 0..range.
inline int bits_for(uint64_t range) { return range == 0 ? 0 : 64 - __builtin_clzll(range); }

}  // namespace tlsql
