#include "session/suggest.h"

#include <algorithm>
#include <cstddef>

#include "src/ascii_case.h"

namespace tlsql {

namespace {

// Edit distance with swaps of two neighbours (optimal string alignment): three rows, no recursion.
size_t distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<size_t> before(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    before.swap(prev), prev.swap(cur);
  }
  return prev[m];
}

}  // namespace

std::optional<std::string> did_you_mean(const std::string& typed, const std::vector<std::string>& known) {
  const std::string t = lowercase(typed);
  if (t.empty()) return std::nullopt;
  const size_t limit = std::max<size_t>(1, t.size() / 3);
  std::optional<std::string> best;
  size_t best_d = 0;
  bool best_prefix = false;
  size_t prefixed = 0;
  std::optional<std::string> prefix_of;
  for (const std::string& k : known) {
    const std::string name = lowercase(k);
    if (name == t) return std::nullopt;
    const bool prefix = name.rfind(t, 0) == 0;
    if (prefix) ++prefixed, prefix_of = k;
    const size_t d = distance(t, name);
    if (d > limit) continue;
    if (!best || d < best_d || (d == best_d && prefix && !best_prefix)) best = k, best_d = d, best_prefix = prefix;
  }
  if (best) return best;
  if (prefixed == 1 && t.size() >= 2) return prefix_of;
  return std::nullopt;
}

}  // namespace tlsql
