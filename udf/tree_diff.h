// Structural diff of two traces (TraceLens's TraceDiff, docs/reports.md): the two call trees are
// aligned from the roots down, each node's children against its counterpart's by name, so that an
// op matches its counterpart whatever kernels it launched; a GPU kernel then belongs on both
// sides to its lowest matched ancestor. Only the part of each tree that leads to GPU work takes
// part. Children are aligned so that the matched subtrees are as large as possible (tree_diff.cpp
// says where that departs from TraceLens). The algorithm works on plain rows so that it is tested
// without a database; udf/tree_diff_sql.cpp reads them from two schemas.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tlsql {

// The name two events are compared by: normalize_name's (event_names.h: no addresses, no python
// line numbers), and without a trailing "#<digits>" ("ProfilerStep#12" -> "ProfilerStep#": two
// runs number their steps differently).
std::string diff_name(std::string_view name);

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
  std::vector<int64_t> a, b;  // per node: the index of its counterpart in the other tree, or -1
  int64_t greedy = 0;         // child lists too long for the edit distance, aligned greedily
};

// `dp_cells`: the alignment tables' total size allowed (cells); lists beyond it (or beyond 2^24
// cells alone) are aligned greedily (each name to its next occurrence within a window): the match
// stays near-linear.
DiffMatch match_trees(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b,
                      int64_t dp_cells = int64_t(1) << 28);

// Per node of one side: its lowest common ancestor, the nearest proper ancestor that has a
// counterpart and is not a launch call (a launch belongs to its op), or -1; and its nearest op
// ancestor (the op that launched a kernel), or -1.
std::vector<int64_t> lowest_matched_ancestors(const std::vector<DiffNode>& side, const std::vector<int64_t>& match);
std::vector<int64_t> nearest_ops(const std::vector<DiffNode>& side);

// The merged subtree below a matched pair (TraceLens's print_merged_tree), depth first: each
// node's children on the GPU path, the matched ones first, then a's only, then b's only (an
// unmatched node's subtree is its side's alone, less what matched elsewhere through a wrapper). `a` / `b`: node
// indices, -1 on the side a node is missing from; `last`: the last child of its parent (for drawing).
struct MergedNode {
  int depth;
  int64_t a, b;
  bool last;
};
std::vector<MergedNode> merged_subtree(const std::vector<DiffNode>& a, const std::vector<DiffNode>& b,
                                       const std::vector<int64_t>& match_a, const std::vector<int64_t>& match_b,
                                       int64_t ia, int64_t ib, int max_depth);

}  // namespace tlsql
