// The one interval-union routine: GPU time of an event (perf_table.cpp), union_ns() in SQL (the
// summary and timeline reports). Intervals are [start, end) in ns.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "src/trace_model.h"

namespace tlsql {

// Replaces `iv` by its union: disjoint, ascending, empty or inverted intervals dropped (they cover
// nothing); intervals that touch are joined. Returns the total length covered (clamped to int64:
// hostile times can span more).
inline int64_t merge_union(std::vector<std::pair<int64_t, int64_t>>& iv) {
  if (!std::is_sorted(iv.begin(), iv.end())) std::sort(iv.begin(), iv.end());
  size_t out = 0;
  int64_t total = 0;
  for (size_t i = 0; i < iv.size(); ++i) {
    auto [s, e] = iv[i];
    if (e <= s) continue;
    if (out > 0 && s <= iv[out - 1].second) {
      if (e > iv[out - 1].second) total = sat_add(total, sat_sub(e, iv[out - 1].second)), iv[out - 1].second = e;
    } else {
      iv[out++] = {s, e};
      total = sat_add(total, sat_sub(e, s));
    }
  }
  iv.resize(out);
  return total;
}

}  // namespace tlsql
