#include "udf/diff/tree_diff.h"

#include <algorithm>
#include <span>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "udf/names/event_names.h"

namespace tlsql {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// One alignment step: a child of each side (a match), or of one side only (-1 on the other).
using Pair = std::pair<Ix, Ix>;

// The part of a tree that leads to GPU work: its roots (by trace, start, uid), each node's
// children there (by start, uid) and the size of its subtree there.
struct GpuPaths {
  std::vector<Ix> roots;
  std::vector<int32_t> size;

  // The children of node i on the GPU path, in order.
  std::span<const Ix> children(Ix i) const {
    return {kids_.data() + start_[(size_t)i], kids_.data() + start_[(size_t)i + 1]};
  }

  // (Children as one array with each node's start, not a vector per node: a GB trace has
  // millions of nodes, and a vector each was most of the diff's memory and allocations.)
  explicit GpuPaths(const std::vector<DiffNode>& t) : size(t.size(), 0), start_(t.size() + 1, 0) {
    const std::vector<uint8_t> on = gpu_path_marks(
        t.size(), [&](size_t i) { return t[i].kind == DiffNode::gpu; }, [&](size_t i) { return t[i].parent; });
    for (size_t i = 0; i < t.size(); ++i)
      if (on[i] && t[i].parent >= 0) ++start_[(size_t)t[i].parent + 1];
    for (size_t i = 0; i < t.size(); ++i) start_[i + 1] += start_[i];
    kids_.resize(start_.back());
    std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
    for (size_t i = 0; i < t.size(); ++i)
      if (on[i]) (t[i].parent >= 0 ? kids_[fill[(size_t)t[i].parent]++] : roots.emplace_back()) = (Ix)i;
    auto by_start = [&](Ix x, Ix y) {
      const DiffNode &p = t[(size_t)x], &q = t[(size_t)y];
      return std::tuple(p.trace, p.ts, p.uid) < std::tuple(q.trace, q.ts, q.uid);
    };
    std::sort(roots.begin(), roots.end(), by_start);
    for (size_t i = 0; i < t.size(); ++i) std::sort(kids_.begin() + start_[i], kids_.begin() + start_[i + 1], by_start);
    std::vector<Ix> order(roots.begin(), roots.end());  // pre-order; sizes summed in reverse
    for (size_t k = 0; k < order.size(); ++k)
      for (Ix c : children(order[k])) order.push_back(c);
    for (size_t k = order.size(); k-- > 0;) {
      const size_t i = (size_t)order[k];
      size[i] += 1;
      if (t[i].parent >= 0) size[(size_t)t[i].parent] += size[i];
    }
  }

 private:
  std::vector<uint32_t> start_;  // node i's children: kids_[start_[i], start_[i + 1])
  std::vector<Ix> kids_;
};

class Aligner {
 public:
  Aligner(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b, const GpuPaths& pa, const GpuPaths& pb,
          int64_t budget)
      : a_(a), b_(b), pa_(pa), pb_(pb), budget_(budget) {}
  int64_t greedy = 0;

  // The children lists x (of a) and y (of b), aligned: equal names at the start match first; the
  // rest so that the matched subtrees are as large as possible: a longest common subsequence by
  // name, each match weighing the smaller of the two subtrees. (TraceLens's Wagner-Fischer counts
  // a substitution as one edit and every match alike: it pairs unequal names position by position
  // rather than match an equal name across a few extra nodes, and weighs a leftover kernel like a
  // whole ProfilerStep, so two runs whose steps begin among different leftover kernels matched no
  // step.) Of equally good alignments, the one matching earliest: with three identical layers
  // against two, the third is the new one (TraceLens, walking back from the end, makes it the
  // first). Past the budget: greedily, also from the start.
  void align(const std::vector<Ix>& x, const std::vector<Ix>& y, std::vector<Pair>& out) {
    out.clear();
    const size_t m = x.size(), n = y.size();
    size_t head = 0;
    while (head < m && head < n && same(x[head], y[head])) out.emplace_back(x[head], y[head]), ++head;
    const size_t mm = m - head, nn = n - head;
    const int64_t cells = (int64_t)(mm + 1) * (int64_t)(nn + 1);
    if (mm && nn && cells <= budget_ && cells <= kListCells) {
      budget_ -= cells;
      common_subsequence(x.data() + head, mm, y.data() + head, nn, out);
    } else if (mm && nn) {
      ++greedy;
      greedy_align(x.data() + head, mm, y.data() + head, nn, out);
    } else {
      for (size_t i = 0; i < mm; ++i) out.emplace_back(x[head + i], -1);
      for (size_t j = 0; j < nn; ++j) out.emplace_back(-1, y[head + j]);
    }
  }

 private:
  static constexpr int64_t kListCells = int64_t(1) << 24;  // one table: 64 MB at most
  bool same(Ix i, Ix j) const { return a_[(size_t)i].name == b_[(size_t)j].name; }
  int32_t weight(Ix i, Ix j) const { return std::min(pa_.size[(size_t)i], pb_.size[(size_t)j]); }

  void common_subsequence(const Ix* x, size_t m, const Ix* y, size_t n, std::vector<Pair>& out) {
    const size_t w = n + 1;
    dp_.assign((m + 1) * w, 0);  // dp[i][j]: the best weight aligning x[i, m) with y[j, n)
    for (size_t i = m; i-- > 0;)
      for (size_t j = n; j-- > 0;) {
        int32_t best = std::max(dp_[(i + 1) * w + j], dp_[i * w + j + 1]);
        if (same(x[i], y[j])) best = std::max(best, dp_[(i + 1) * w + j + 1] + weight(x[i], y[j]));
        dp_[i * w + j] = best;
      }
    size_t i = 0, j = 0;  // forward: each match as early as an optimal alignment allows
    while (i < m || j < n) {
      if (i < m && j < n && same(x[i], y[j]) && dp_[i * w + j] == dp_[(i + 1) * w + j + 1] + weight(x[i], y[j])) {
        out.emplace_back(x[i], y[j]), ++i, ++j;
      } else if (i < m && (j == n || dp_[i * w + j] == dp_[(i + 1) * w + j])) {
        out.emplace_back(x[i], -1), ++i;
      } else {
        out.emplace_back(-1, y[j]), ++j;
      }
    }
  }

  // Each child of x to the next child of y with its name within a window, the children of y
  // skipped on the way inserted: linear, and exact for lists that differ by local edits.
  void greedy_align(const Ix* x, size_t m, const Ix* y, size_t n, std::vector<Pair>& out) {
    constexpr size_t kWindow = 64;
    size_t j = 0;
    for (size_t i = 0; i < m; ++i) {
      size_t k = j;
      while (k < n && k < j + kWindow && !same(x[i], y[k])) ++k;
      if (k < n && k < j + kWindow) {
        for (; j < k; ++j) out.emplace_back(-1, y[j]);
        out.emplace_back(x[i], y[k]), j = k + 1;
      } else {
        out.emplace_back(x[i], -1);
      }
    }
    for (; j < n; ++j) out.emplace_back(-1, y[j]);
  }

  const std::vector<DiffNode>&a_, &b_;
  const GpuPaths &pa_, &pb_;
  int64_t budget_;
  std::vector<int32_t> dp_;
};

// Per node, the nearest node at or above it that `pick` accepts (parent_walk.h).
template <class Pick>
std::vector<Ix> nearest_above(const std::vector<DiffNode>& t, Pick pick) {
  return tlsql::nearest_above(
      t.size(), [&](size_t k) { return t[k].parent; }, pick);
}

// One round of looking through wrappers in the aligned lists (see match_trees); true if a list
// changed. Launch calls and GPU work are never wrappers.
bool flatten(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b, const GpuPaths& pa, const GpuPaths& pb,
             const std::vector<Pair>& steps, std::vector<Ix>& cx, std::vector<Ix>& cy) {
  auto wrapper = [](const DiffNode& n) { return n.kind != DiffNode::call && n.kind != DiffNode::gpu; };
  std::unordered_set<int32_t> only_a, only_b;
  std::vector<Ix> del, ins;
  for (auto [i, j] : steps) {
    if (j < 0 && wrapper(a[(size_t)i])) del.push_back(i), only_a.insert(a[(size_t)i].name);
    if (i < 0 && wrapper(b[(size_t)j])) ins.push_back(j), only_b.insert(b[(size_t)j].name);
  }
  if (del.empty() || ins.empty()) return false;
  auto holds = [](const std::vector<DiffNode>& t, std::span<const Ix> kids, const std::unordered_set<int32_t>& names) {
    for (Ix k : kids)
      if (names.count(t[(size_t)k].name)) return true;
    return false;
  };
  auto open = [](std::vector<Ix>& list, const std::unordered_set<Ix>& drop, const GpuPaths& p) {
    std::vector<Ix> out;
    for (Ix k : list)
      if (drop.count(k))
        out.insert(out.end(), p.children(k).begin(), p.children(k).end());
      else
        out.push_back(k);
    list = std::move(out);
  };
  std::unordered_set<Ix> open_a, open_b;
  for (Ix j : ins)
    if (holds(b, pb.children(j), only_a)) open_b.insert(j);
  for (Ix i : del)
    if (holds(a, pa.children(i), only_b)) open_a.insert(i);
  if (open_a.empty() && open_b.empty()) return false;
  open(cx, open_a, pa), open(cy, open_b, pb);
  return true;
}

}  // namespace

std::string diff_name(std::string_view name) {
  std::string out = normalize_name(name);
  size_t d = out.size();
  while (d > 0 && digit(out[d - 1])) --d;
  if (d < out.size() && d > 1 && out[d - 1] == '#') out.resize(d);  // something before the '#'
  return out;
}

DiffMatch match_trees(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b, int64_t dp_cells) {
  DiffMatch m;
  m.a.assign(a.size(), -1), m.b.assign(b.size(), -1);
  const GpuPaths pa(a), pb(b);
  Aligner aligner(a, b, pa, pb, dp_cells);
  std::vector<Pair> work{{-1, -1}}, steps;  // matched pairs whose children are still to align
  std::vector<Ix> cx, cy;
  while (!work.empty()) {
    auto [x, y] = work.back();
    work.pop_back();
    const std::span<const Ix> kx = x < 0 ? pa.roots : pa.children(x), ky = y < 0 ? pb.roots : pb.children(y);
    cx.assign(kx.begin(), kx.end()), cy.assign(ky.begin(), ky.end());
    aligner.align(cx, cy, steps);
    // Wrappers (TraceLens's check_diff_children): where a child only one side has holds a node
    // named like a child only the other side has (AMP's aten::linear calls aten::linear; a
    // module gains a frame), that extra level is looked through: its children take its place
    // in the list, and the lists are aligned again (a few rounds at most).
    for (int round = 0; round < 4 && flatten(a, b, pa, pb, steps, cx, cy); ++round) aligner.align(cx, cy, steps);
    // Matched children in reverse, so that the stack aligns them in order (deterministic ids).
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
      if (it->first >= 0 && it->second >= 0) {
        m.a[(size_t)it->first] = it->second, m.b[(size_t)it->second] = it->first;
        work.push_back(*it);
      }
  }
  m.greedy = aligner.greedy;
  return m;
}

std::vector<Ix> lowest_matched_ancestors(const std::vector<DiffNode>& t, const std::vector<Ix>& match) {
  auto at = nearest_above(
      t, [&](size_t k) { return match[k] >= 0 && t[k].kind != DiffNode::call && t[k].kind != DiffNode::gpu; });
  std::vector<Ix> out(t.size(), -1);  // proper ancestors: the answer of the parent
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].parent >= 0) out[i] = at[(size_t)t[i].parent];
  return out;
}

std::vector<Ix> nearest_ops(const std::vector<DiffNode>& t) {
  return nearest_above(t, [&](size_t k) { return t[k].kind == DiffNode::op; });
}

std::vector<MergedNode> merged_subtree(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b,
                                       const std::vector<Ix>& match_a, const std::vector<Ix>& match_b, Ix ia, Ix ib,
                                       int max_depth) {
  const GpuPaths pa(a), pb(b);
  std::vector<MergedNode> out;
  std::vector<MergedNode> stack{{0, ia, ib, true}};  // explicit: the input decides the depth
  while (!stack.empty()) {
    MergedNode n = stack.back();
    stack.pop_back();
    out.push_back(n);
    if (n.depth >= max_depth) continue;
    std::vector<MergedNode> kids;
    if (n.a >= 0 && n.b >= 0) {
      for (Ix c : pa.children(n.a))
        if (match_a[(size_t)c] >= 0) kids.push_back({n.depth + 1, c, match_a[(size_t)c], false});
      for (Ix c : pa.children(n.a))
        if (match_a[(size_t)c] < 0) kids.push_back({n.depth + 1, c, -1, false});
      for (Ix c : pb.children(n.b))
        if (match_b[(size_t)c] < 0) kids.push_back({n.depth + 1, -1, c, false});
    } else if (n.a >= 0) {  // one side's subtree; what matched through a wrapper shows where it matched
      for (Ix c : pa.children(n.a))
        if (match_a[(size_t)c] < 0) kids.push_back({n.depth + 1, c, -1, false});
    } else {
      for (Ix c : pb.children(n.b))
        if (match_b[(size_t)c] < 0) kids.push_back({n.depth + 1, -1, c, false});
    }
    if (!kids.empty()) kids.back().last = true;
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
  return out;
}

std::vector<Ix> flops_homes(const std::vector<DiffNode>& side, const std::vector<int64_t>& dur,
                            const std::vector<Ix>& lca, const std::vector<uint8_t>& counted) {
  const size_t n = side.size();
  constexpr Ix kUnknown = -2;
  std::vector<Ix> carrier(n, kUnknown), home(n, -1), path;
  auto better = [&](Ix a, Ix b) {  // a did more of the work than b
    if (dur[(size_t)a] != dur[(size_t)b]) return dur[(size_t)a] > dur[(size_t)b];
    if (side[(size_t)a].ts != side[(size_t)b].ts) return side[(size_t)a].ts < side[(size_t)b].ts;
    return side[(size_t)a].uid < side[(size_t)b].uid;
  };
  for (size_t i = 0; i < n; ++i) {
    if (side[i].kind != DiffNode::gpu || lca[i] < 0) continue;
    // Up to the first node whose carrier is known or that is counted; every node on the way
    // shares its answer (each node is walked once).
    path.clear();
    Ix k = side[i].parent, c = -1;
    while (k >= 0 && carrier[(size_t)k] == kUnknown && !counted[(size_t)k])
      path.push_back(k), k = side[(size_t)k].parent;
    if (k >= 0) c = carrier[(size_t)k] != kUnknown ? carrier[(size_t)k] : k;
    if (k >= 0 && carrier[(size_t)k] == kUnknown) carrier[(size_t)k] = c;
    for (Ix p : path) carrier[(size_t)p] = c;
    if (c >= 0 && (home[(size_t)c] < 0 || better((Ix)i, home[(size_t)c]))) home[(size_t)c] = (Ix)i;
  }
  return home;
}

}  // namespace tlsql
