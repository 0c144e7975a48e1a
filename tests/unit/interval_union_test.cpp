#include "udf/interval_union.h"

#include <doctest/doctest.h>

using tlsql::merge_union;
using V = std::vector<std::pair<int64_t, int64_t>>;

TEST_CASE("merge_union counts overlaps once and leaves the union") {
  V none;
  CHECK(merge_union(none) == 0);
  V one{{10, 30}};
  CHECK(merge_union(one) == 20);
  V overlap{{20, 40}, {10, 30}};  // [10,40) = 30, unsorted input
  CHECK(merge_union(overlap) == 30);
  V nested{{0, 100}, {10, 20}, {30, 40}};
  CHECK(merge_union(nested) == 100);
  V gap{{110, 130}, {120, 140}, {150, 160}};  // 30 + 10, as in the gpu_time_self_time case
  CHECK(merge_union(gap) == 40);
  CHECK(gap == V{{110, 140}, {150, 160}});  // disjoint and ascending: a parent merges its children's
  V touching{{0, 10}, {10, 20}};            // half-open: adjacent intervals join without double counting
  CHECK(merge_union(touching) == 20);
  V empty_and_inverted{{5, 5}, {9, 3}, {0, 2}};
  CHECK(merge_union(empty_and_inverted) == 2);
  CHECK(empty_and_inverted == V{{0, 2}});
}

TEST_CASE("time arithmetic clamps to int64 instead of overflowing (hostile or hand-edited times)") {
  using tlsql::sat_add, tlsql::sat_mul, tlsql::sat_sub;
  constexpr int64_t max = INT64_MAX, min = INT64_MIN;
  CHECK(sat_sub(5, 3) == 2);
  CHECK(sat_sub(max, -1) == max);  // 2^63 - 1 + 1
  CHECK(sat_sub(min, 1) == min);
  CHECK(sat_sub(9223372036854701000, -9223372036854767000) == max);  // an edited end minus a far start
  CHECK(sat_add(max, 1) == max);
  CHECK(sat_add(min, -1) == min);
  CHECK(sat_add(-4, 7) == 3);
  CHECK(sat_mul(3, max) == max);
  CHECK(sat_mul(-3, max) == min);
  CHECK(sat_mul(min, -1) == max);
  CHECK(sat_mul(6, -7) == -42);
  // A union spanning more than int64 can count reports the most it can, never a wrapped negative.
  V far{{min, 0}, {1, max}};
  CHECK(merge_union(far) == max);
}
