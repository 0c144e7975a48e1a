#include "interval_union.h"

#include <doctest/doctest.h>

using tlsql::union_length;
using V = std::vector<std::pair<int64_t, int64_t>>;

TEST_CASE("union_length counts overlaps once") {
  V none;
  CHECK(union_length(none) == 0);
  V one{{10, 30}};
  CHECK(union_length(one) == 20);
  V overlap{{20, 40}, {10, 30}};  // [10,40) = 30, unsorted input
  CHECK(union_length(overlap) == 30);
  V nested{{0, 100}, {10, 20}, {30, 40}};
  CHECK(union_length(nested) == 100);
  V gap{{110, 130}, {120, 140}, {150, 160}};  // 30 + 10, as in the gpu_time_self_time case
  CHECK(union_length(gap) == 40);
  V touching{{0, 10}, {10, 20}};  // half-open: adjacent intervals join without double counting
  CHECK(union_length(touching) == 20);
  V empty_and_inverted{{5, 5}, {9, 3}, {0, 2}};
  CHECK(union_length(empty_and_inverted) == 2);
}
