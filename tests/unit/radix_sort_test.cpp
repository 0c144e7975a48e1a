#include "src/radix_sort.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <random>

#include "src/tree_builder.h"

using namespace tlsql;

TEST_CASE("radix_sort sorts packed keys as std::sort does") {
  std::mt19937_64 rng(7);
  for (int bits : {1, 11, 12, 23, 40, 64}) {
    std::vector<uint64_t> v(5000);
    for (uint64_t& k : v) k = bits == 64 ? rng() : rng() & ((uint64_t{1} << bits) - 1);
    std::vector<uint64_t> want = v;
    std::sort(want.begin(), want.end());
    radix_sort(v, 0, bits);
    CHECK(v == want);
  }
}

// The reference is the comparison sort the tree builder used before: pairs by id, then row.
TEST_CASE("sort_by_id orders (id, row) pairs as std::sort does") {
  std::mt19937 rng(11);
  const int32_t extremes[] = {INT32_MIN + 1, -1, 0, 1, INT32_MAX};
  for (int round = 0; round < 40; ++round) {
    const bool in_row_order = round % 2 == 0;  // the callers' case, and any order
    const int n = round < 4 ? round : 1 + (int)(rng() % 3000);
    std::vector<std::pair<Id32, int32_t>> v;
    for (int i = 0; i < n; ++i) {
      int32_t id;
      switch (round % 4) {
        case 0: id = (int32_t)(rng() % 50); break;                // many duplicates
        case 1: id = extremes[rng() % 5]; break;                  // the full int32 range
        case 2: id = (int32_t)(1000000 + rng() % 100000); break;  // offset, like correlations
        default: id = (int32_t)rng(); break;                      // anything
      }
      v.push_back({Id32{id}, in_row_order ? i * 3 + (int32_t)(rng() % 3) : (int32_t)(rng() % INT32_MAX)});
    }
    if (!in_row_order) {  // rows must stay distinct, as event rows are
      std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second < b.second; });
      v.erase(std::unique(v.begin(), v.end(), [](auto& a, auto& b) { return a.second == b.second; }), v.end());
      std::shuffle(v.begin(), v.end(), rng);
    }
    std::vector<std::pair<Id32, int32_t>> want = v;
    std::sort(want.begin(), want.end());
    sort_by_id(v);
    CHECK(v == want);
  }
}

// The tree builder's use (the first runtime call of a correlation: lower bound on the id) and
// optimizable's (breakpoints <= t: an upper bound), each against the standard search from every
// kind of hint: at, before and after the answer, far off, past the end.
TEST_CASE("partition_point_from answers as std::lower_bound / upper_bound do from any hint") {
  std::mt19937 rng(5);
  for (int round = 0; round < 30; ++round) {
    const int n = round < 3 ? round : 1 + (int)(rng() % 500);
    std::vector<std::pair<Id32, int32_t>> v;
    for (int i = 0; i < n; ++i) v.push_back({Id32{(int32_t)(rng() % 200) - 100}, i});
    std::sort(v.begin(), v.end());
    std::vector<int64_t> at;
    for (int i = 0; i < n; ++i) at.push_back((int64_t)(rng() % 100));
    std::sort(at.begin(), at.end());
    for (int q = 0; q < 300; ++q) {
      const Id32 id{(int32_t)(rng() % 240) - 120};
      const size_t hint = rng() % (size_t)(n + 3);  // past the end too
      const size_t want = (size_t)(std::lower_bound(v.begin(), v.end(), std::make_pair(id, INT32_MIN)) - v.begin());
      REQUIRE(partition_point_from(v.size(), hint, [&](size_t k) { return v[k].first < id; }) == want);
      const int64_t t = (int64_t)(rng() % 120) - 10;
      const size_t upto = (size_t)(std::upper_bound(at.begin(), at.end(), t) - at.begin());
      REQUIRE(partition_point_from(at.size(), hint, [&](size_t k) { return at[k] <= t; }) == upto);
    }
  }
}

TEST_CASE("merge_neighbours merges as std::inplace_merge does, ties in the same order") {
  std::mt19937 rng(11);
  std::vector<std::pair<int, int>> buf;  // (one buffer for every call, as sort_runs keeps it)
  // Compared by value alone, so that equal values show whether the merge kept them stable: the
  // second member is each element's place before the merge.
  auto by_value = [](const std::pair<int, int>& a, const std::pair<int, int>& b) { return a.first < b.first; };
  for (int round = 0; round < 300; ++round) {
    const int n = round < 4 ? round : (int)(rng() % 300);
    const int mid = n == 0 ? 0 : (int)(rng() % (n + 1));  // either side may be empty or the shorter
    std::vector<std::pair<int, int>> v;
    for (int i = 0; i < n; ++i) v.push_back({(int)(rng() % (round % 3 == 0 ? 4 : 50)), i});
    std::sort(v.begin(), v.begin() + mid, by_value);
    std::sort(v.begin() + mid, v.end(), by_value);
    if (round % 7 == 6)  // neighbours already in order
      std::sort(v.begin(), v.end(), by_value);
    for (int i = 0; i < n; ++i) v[(size_t)i].second = i;
    std::vector<std::pair<int, int>> want = v;
    std::inplace_merge(want.begin(), want.begin() + mid, want.end(), by_value);
    merge_neighbours(v.data(), v.data() + mid, v.data() + n, by_value, buf);
    CHECK(v == want);
  }
}

TEST_CASE("sort_runs sorts as std::sort does, from a few runs to none") {
  std::mt19937 rng(3);
  for (int round = 0; round < 40; ++round) {
    const int n = round < 3 ? round : 1 + (int)(rng() % 2000);
    std::vector<std::pair<int64_t, int32_t>> v;  // (value, distinct row): a total order
    for (int i = 0; i < n; ++i) v.push_back({(int64_t)(rng() % 100), i});
    const int runs = round % 4 == 3 ? n : 1 + round % 5;  // shuffled whole, or cut into sorted runs
    if (runs >= n) {
      std::shuffle(v.begin(), v.end(), rng);
    } else {
      for (int r = 0; r < runs; ++r)
        std::sort(v.begin() + (ptrdiff_t)(n * r / runs), v.begin() + (ptrdiff_t)(n * (r + 1) / runs));
    }
    std::vector<std::pair<int64_t, int32_t>> want = v;
    std::sort(want.begin(), want.end());
    // and with a comparator of its own (descending value, then row): as std::sort with it
    auto down = [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    std::vector<std::pair<int64_t, int32_t>> other = v, want_other = v;
    std::sort(want_other.begin(), want_other.end(), down);
    sort_runs(v);
    CHECK(v == want);
    sort_runs(other, down);
    CHECK(other == want_other);
  }
}
