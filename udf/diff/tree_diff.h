// Structural diff of two traces (TraceLens's TraceDiff, docs/reports.md): the two call trees are
// aligned from the roots down, each node's children against its counterpart's by name, so that an
// op matches its counterpart whatever kernels it launched; a GPU kernel then belongs on both
// sides to its lowest matched ancestor. Only the part of each tree that leads to GPU work takes
// part. Children are aligned so that the matched subtrees are as large as possible (tree_diff.cpp
// says where that departs from TraceLens). The algorithm works on plain rows so that it is tested
// without a database; udf/diff/tree_diff_sql.cpp reads them from two schemas.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "udf/tree/parent_walk.h"

namespace tlsql {

// The name two events are compared by: normalize_name's (event_names.h: no addresses, no python
// line numbers), and without a trailing "#<digits>" ("ProfilerStep#12" -> "ProfilerStep#": two
// runs number their steps differently).
std::string diff_name(std::string_view name);

// A node's index in its side's vector: 32 bits (a side holds < 2^31 nodes; a GB trace's diff holds
// millions of nodes, and every per-node array is one of these).
using Ix = int32_t;

struct DiffNode {
  enum Kind : uint8_t { host, op, call, gpu };  // other host event, cpu_op, runtime / driver call, GPU work
  int64_t uid;
  int64_t ts;
  int32_t parent;  // index of the parent in the same vector, -1 for a root (a side holds < 2^31 nodes)
  int32_t name;    // diff_name, numbered (the same numbering for both trees)
  int32_t trace;   // roots are ordered by (trace, ts, uid), children by (ts, uid)
  Kind kind;       // (32 bytes a node: a GB trace's diff holds millions)
};

struct DiffMatch {
  std::vector<Ix> a, b;  // per node: the index of its counterpart in the other tree, or -1
  int64_t greedy = 0;    // child lists too long for the edit distance, aligned greedily
};

// Marks the part of a tree that leads to GPU work (the only part the match aligns): each node i
// with gpu(i), and its ancestors (parent(i), -1 at a root) up to the first one already marked:
// O(n) whatever the depth.
template <class Gpu, class Parent>
std::vector<uint8_t> gpu_path_marks(size_t n, Gpu gpu, Parent parent) {
  std::vector<uint8_t> on(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (gpu(i))
      for (int64_t k = (int64_t)i; k >= 0 && !on[(size_t)k]; k = parent((size_t)k)) on[(size_t)k] = 1;
  return on;
}

// `dp_cells`: the alignment tables' total size allowed (cells); lists beyond it (or beyond 2^24
// cells alone) are aligned greedily (each name to its next occurrence within a window): the match
// stays near-linear.
DiffMatch match_trees(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b,
                      int64_t dp_cells = int64_t(1) << 28);

// Per node of one side: its lowest common ancestor, the nearest proper ancestor that has a
// counterpart and is not a launch call (a launch belongs to its op), or -1; and its nearest op
// ancestor (the op that launched a kernel), or -1.
std::vector<Ix> lowest_matched_ancestors(const std::vector<DiffNode>& side, const std::vector<Ix>& match);
std::vector<Ix> nearest_ops(const std::vector<DiffNode>& side);

// Where a counted event's FLOPs go in diff_tree_ops (one group per lowest common ancestor): to the
// group of its longest piece of GPU work that has a lowest common ancestor (ties: the earliest,
// then the lower uid). The op doing the work carries the model, but its kernels can fall into
// several groups: a flash-attention op on MI300 whose FillFunctor helper is matched elsewhere, an
// AMP linear whose cast kernel is its own. Each counted event's FLOPs then land once, beside the
// kernel that did most of its work, instead of on an ancestor that holds only a helper (or NULL
// for the group that holds the work). Per node: for a counted node (`counted[i]`), the GPU node
// whose group takes its FLOPs, else -1; a GPU node's carrier is the nearest counted node above it
// (counted_op's rule puts at most one on any path). `dur`: per node, < 0 when unknown; `lca`:
// lowest_matched_ancestors. O(n) whatever the depth.
std::vector<Ix> flops_homes(const std::vector<DiffNode>& side, const std::vector<int64_t>& dur,
                            const std::vector<Ix>& lca, const std::vector<uint8_t>& counted);

// The merged subtree below a matched pair (TraceLens's print_merged_tree), depth first: each
// node's children on the GPU path, the matched ones first, then a's only, then b's only (an
// unmatched node's subtree is its side's alone, less what matched elsewhere through a wrapper). `a` / `b`: node
// indices, -1 on the side a node is missing from; `last`: the last child of its parent (for drawing).
struct MergedNode {
  int depth;
  Ix a, b;
  bool last;
};
std::vector<MergedNode> merged_subtree(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b,
                                       const std::vector<Ix>& match_a, const std::vector<Ix>& match_b, Ix ia, Ix ib,
                                       int max_depth);

}  // namespace tlsql
