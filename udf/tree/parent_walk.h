// Walks over a forest given as parent links (parent(i): a node index, -1 at a root), each O(n)
// whatever the depth and without recursion: the input decides how deep a tree goes. Used by the
// structural diff (tree_diff.h) and the engine steps (engine_steps.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tlsql {

// A node on a loop of parent links, if any: a saved database tlsql did not write can hold one, and
// every walk up or down such a tree would never end. Each chain is followed until a node already
// seen.
template <class Parent>
std::optional<size_t> parent_loop(size_t n, Parent parent) {
  std::vector<int64_t> walk(n, -1);  // the chain (its first node) that reached each node
  for (size_t i = 0; i < n; ++i) {
    int64_t k = (int64_t)i;
    while (k >= 0 && walk[(size_t)k] < 0) walk[(size_t)k] = (int64_t)i, k = parent((size_t)k);
    if (k >= 0 && walk[(size_t)k] == (int64_t)i) return (size_t)k;  // back on this chain: a loop
  }
  return std::nullopt;
}

// Per node, the nearest node at or above it that `pick` accepts, or -1; each answer remembered.
// The links must not loop (parent_loop). Node indices fit 32 bits.
template <class Parent, class Pick>
std::vector<int32_t> nearest_above(size_t n, Parent parent, Pick pick) {
  std::vector<int32_t> at(n, -2);  // -2: not known yet
  std::vector<size_t> path;
  for (size_t i = 0; i < n; ++i) {
    int64_t k = (int64_t)i;
    while (k >= 0 && at[(size_t)k] == -2 && !pick((size_t)k)) path.push_back((size_t)k), k = parent((size_t)k);
    const int32_t found = k < 0 ? -1 : at[(size_t)k] != -2 ? at[(size_t)k] : (int32_t)k;
    if (k >= 0) at[(size_t)k] = found;
    for (size_t p : path) at[p] = found;
    path.clear();
  }
  return at;
}

}  // namespace tlsql
