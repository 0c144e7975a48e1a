// Sorts the loader uses where a comparison sort of the whole input was the cost: radix sorts of
// packed keys (the save's indexes, the tree's ids) and a merge of already-sorted runs; and the
// search onward from the last answer that walks such sorted lists in query order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
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

// Merges the sorted neighbours [first, mid) and [mid, last) in place, stably (as
// std::inplace_merge), by moving the shorter one into `buf` and merging back into the gap. `buf`
// keeps its capacity from call to call: std::inplace_merge takes a fresh buffer on every call, and
// a sort's merges each faulted in fresh pages for it (docs/performance.md, fourteenth section).
// Neighbours already in order are left as they are.
template <typename T, typename Less>
void merge_neighbours(T* first, T* mid, T* last, Less less, std::vector<T>& buf) {
  if (first == mid || mid == last || !less(*mid, *(mid - 1))) return;
  if (mid - first <= last - mid) {
    buf.assign(std::make_move_iterator(first), std::make_move_iterator(mid));
    T* out = first;
    T* right = mid;
    auto left = buf.begin();
    // (A tie takes the left one first; `out` never passes `right`.)
    while (left != buf.end() && right != last) *out++ = less(*right, *left) ? std::move(*right++) : std::move(*left++);
    std::move(left, buf.end(), out);  // (what is left of the right one is in place)
  } else {
    buf.assign(std::make_move_iterator(mid), std::make_move_iterator(last));
    T* out = last;
    T* left = mid;
    auto right = buf.end();
    // (From the back: a tie takes the right one first.)
    while (left != first && right != buf.begin())
      *--out = less(*(right - 1), *(left - 1)) ? std::move(*--left) : std::move(*--right);
    std::move_backward(buf.begin(), right, out);
  }
}

// Sorts `v` by merging its ascending runs pairwise, level by level (no recursion; O(n log runs),
// no worse than a merge sort when every element is a run). A thread's host events are nearly in
// start order, so on the control trace this took under a third of the comparison sort's CPU. The
// result is std::sort's wherever `less` is a total order (the tree's keys end in the row).
template <typename T, typename Less = std::less<>>
void sort_runs(T* first, T* last, Less less = {}) {
  const size_t n = (size_t)(last - first);
  std::vector<size_t> bounds{0};  // starts of the runs, then n
  for (size_t k = 1; k < n; ++k)
    if (less(first[k], first[k - 1])) bounds.push_back(k);
  bounds.push_back(n);
  std::vector<T> buf;
  while (bounds.size() > 2) {
    std::vector<size_t> next{0};
    for (size_t r = 0; r + 2 < bounds.size(); r += 2) {
      merge_neighbours(first + bounds[r], first + bounds[r + 1], first + bounds[r + 2], less, buf);
      next.push_back(bounds[r + 2]);
    }
    if (next.back() != n) next.push_back(n);  // an odd run left over, as it is
    bounds.swap(next);
  }
}
template <typename T, typename Less = std::less<>>
void sort_runs(std::vector<T>& v, Less less = {}) {
  sort_runs(v.data(), v.data() + v.size(), less);
}

// std::partition_point over positions [0, n): the first k where pred(k) is false, for a pred true
// on a prefix; found by galloping from `hint` (1, 2, 4, ... positions either way) and a binary
// search of the last step. O(log distance from the hint): where queries come nearly in order (GPU
// events by correlation, host events by start) the last answer is a hint a few probes away,
// which replaced a binary search of the whole list per query.
template <typename Pred>
size_t partition_point_from(size_t n, size_t hint, Pred pred) {
  size_t lo = 0, hi = n;  // the answer is in [lo, hi]
  hint = std::min(hint, n);
  if (hint < n && pred(hint)) {
    lo = hint + 1;
    size_t step = 1;
    while (hint + step < n && pred(hint + step)) lo = hint + step + 1, step *= 2;
    hi = std::min(n, hint + step);
  } else {
    hi = hint;
    size_t step = 1;
    while (step <= hint && !pred(hint - step)) hi = hint - step, step *= 2;
    lo = step <= hint ? hint - step + 1 : 0;
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (pred(mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Bits needed to hold 0..range.
inline int bits_for(uint64_t range) { return range == 0 ? 0 : 64 - __builtin_clzll(range); }

}  // namespace tlsql
