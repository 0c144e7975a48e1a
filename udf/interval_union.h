// The one interval-union routine: GPU busy time of a set of kernels (gpu_time), and later the
// timeline report and the diff. Intervals are [start, end) in ns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace tlsql {

// Total length covered by the union of the intervals (overlaps counted once). Sorts `iv`.
inline int64_t union_length(std::vector<std::pair<int64_t, int64_t>>& iv) {
  std::sort(iv.begin(), iv.end());
  int64_t total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (auto [s, e] : iv) {
    if (e <= s) continue;  // empty or inverted intervals cover nothing
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s, cur_end = e, open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

}  // namespace tlsql
