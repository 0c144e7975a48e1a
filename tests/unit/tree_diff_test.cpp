// The structural diff's rules on hand-made trees (udf/diff/tree_diff.h): what each node is expected to
// match is written next to each tree.
#include "udf/diff/tree_diff.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

using tlsql::DiffNode;

namespace {

// A tree written as (uid, parent uid, kind, name, ts); names numbered through diff_name, as the
// SQL side does, with one numbering for both trees.
struct Builder {
  explicit Builder(std::map<std::string, int32_t>& n) : names(n) {}
  std::map<std::string, int32_t>& names;
  std::vector<DiffNode> nodes;
  std::map<int64_t, int64_t> at;
  Builder& add(int64_t uid, int64_t parent, DiffNode::Kind k, const std::string& name, int64_t ts) {
    auto id = names.try_emplace(tlsql::diff_name(name), (int32_t)names.size()).first->second;
    at[uid] = (int64_t)nodes.size();
    nodes.push_back({uid, ts, parent < 0 ? -1 : (int32_t)at.at(parent), id, 0, k});
    return *this;
  }
  int64_t operator[](int64_t uid) const { return at.at(uid); }
};

}  // namespace

TEST_CASE("diff names: normalize_name's, and step numbers do not count") {
  using tlsql::diff_name;
  CHECK(diff_name("<built-in method at 0x7fe640752310>") == "<built-in method at 0x?>");
  CHECK(diff_name("model.py(715): forward") == "model.py(?): forward");
  CHECK(diff_name("ProfilerStep#12") == "ProfilerStep#");
  CHECK(diff_name("Optimizer.step#SGD.step") == "Optimizer.step#SGD.step");
  CHECK(diff_name("aten::mm") == "aten::mm");
  CHECK(diff_name("kernel_7") == "kernel_7");  // only after '#'
  CHECK(diff_name("#12") == "#12");            // nothing before it
}

TEST_CASE("an op matches its counterpart whatever kernels it launched") {
  std::map<std::string, int32_t> names;
  // fp32: step > linear > addmm > launch > volta_sgemm.
  Builder a{names};
  a.add(1, -1, DiffNode::host, "train.py(10): step", 0)
      .add(2, 1, DiffNode::op, "aten::linear", 1)
      .add(3, 2, DiffNode::op, "aten::addmm", 2)
      .add(4, 3, DiffNode::call, "cudaLaunchKernel", 3)
      .add(5, 4, DiffNode::gpu, "volta_sgemm_128x64_nn", 10)
      .add(6, 1, DiffNode::op, "aten::print_only", 20);  // launches nothing: not compared
  // AMP: the step's line moved; linear casts first (_to_copy, a kernel of its own), then addmm
  // runs a half-precision GEMM; print_only is there too.
  Builder b{names};
  b.add(11, -1, DiffNode::host, "train.py(12): step", 0)
      .add(12, 11, DiffNode::op, "aten::linear", 1)
      .add(13, 12, DiffNode::op, "aten::_to_copy", 2)
      .add(14, 13, DiffNode::call, "cudaLaunchKernel", 3)
      .add(15, 14, DiffNode::gpu, "elementwise_copy", 4)
      .add(16, 12, DiffNode::op, "aten::addmm", 5)
      .add(17, 16, DiffNode::call, "cudaLaunchKernel", 6)
      .add(18, 17, DiffNode::gpu, "turing_fp16_s1688gemm", 10)
      .add(19, 11, DiffNode::op, "aten::print_only", 20);
  auto m = tlsql::match_trees(a.nodes, b.nodes);
  CHECK(m.a[(size_t)a[1]] == b[11]);  // line numbers do not count
  CHECK(m.a[(size_t)a[2]] == b[12]);
  CHECK(m.a[(size_t)a[3]] == b[16]);  // addmm past the inserted _to_copy
  CHECK(m.a[(size_t)a[4]] == b[17]);
  CHECK(m.a[(size_t)a[5]] == -1);  // different kernels
  CHECK(m.b[(size_t)b[18]] == -1);
  CHECK(m.b[(size_t)b[13]] == -1);  // only in b
  CHECK(m.a[(size_t)a[6]] == -1);   // no GPU work below: not aligned at all
  CHECK(m.b[(size_t)b[19]] == -1);
  CHECK(m.b[(size_t)b[16]] == a[3]);  // both directions agree

  // Lowest common ancestors: each GEMM belongs to addmm (the launch call belongs to its op), the
  // cast's kernel to linear (its own op has no counterpart); the launching op is the nearest op.
  auto la = tlsql::lowest_matched_ancestors(a.nodes, m.a), lb = tlsql::lowest_matched_ancestors(b.nodes, m.b);
  CHECK(la[(size_t)a[5]] == a[3]);
  CHECK(lb[(size_t)b[18]] == b[16]);
  CHECK(m.a[(size_t)la[(size_t)a[5]]] == lb[(size_t)b[18]]);  // the same pair on both sides
  CHECK(lb[(size_t)b[15]] == b[12]);
  CHECK(tlsql::nearest_ops(b.nodes)[(size_t)b[15]] == b[13]);
}

TEST_CASE("repeated identical subtrees, deletions and renamed kernels; the greedy path agrees") {
  std::map<std::string, int32_t> names;
  // a: four layers, each an op with one kernel; b: the same four plus a fifth, and the third
  // layer's kernel renamed. Layers 1-4 match 1-4 in order, b's fifth is inserted; the renamed
  // kernel is unmatched, its op matched.
  Builder a{names}, b{names};
  a.add(1, -1, DiffNode::host, "forward", 0);
  b.add(1, -1, DiffNode::host, "forward", 0);
  for (int i = 0; i < 5; ++i) {
    const int64_t op = 10 * (i + 1), call = op + 1, k = op + 2, ts = 100 * (i + 1);
    if (i < 4) {
      a.add(op, 1, DiffNode::op, "layer", ts).add(call, op, DiffNode::call, "launch", ts + 1);
      a.add(k, call, DiffNode::gpu, "kern", ts + 2);
    }
    b.add(op, 1, DiffNode::op, "layer", ts).add(call, op, DiffNode::call, "launch", ts + 1);
    b.add(k, call, DiffNode::gpu, i == 2 ? "kern_v2" : "kern", ts + 2);
  }
  for (int64_t budget : {int64_t(1) << 28, int64_t(0)}) {
    CAPTURE(budget);
    auto m = tlsql::match_trees(a.nodes, b.nodes, budget);
    for (int i = 0; i < 4; ++i) CHECK(m.a[(size_t)a[10 * (i + 1)]] == b[10 * (i + 1)]);
    CHECK(m.b[(size_t)b[50]] == -1);
    CHECK(m.a[(size_t)a[32]] == -1);
    CHECK(m.a[(size_t)a[42]] == b[42]);
  }
  // A deletion in the middle: d has ops q, r, s, t; e lacks r and has u first. q, s, t match, r
  // is deleted, u inserted, whether aligned by the table or greedily.
  Builder d{names}, e{names};
  d.add(1, -1, DiffNode::host, "forward", 0);
  e.add(1, -1, DiffNode::host, "forward", 0);
  auto layer = [](Builder& t, int64_t op, const char* name) {
    t.add(op, 1, DiffNode::op, name, op).add(op + 1, op, DiffNode::call, "launch", op + 1);
    t.add(op + 2, op + 1, DiffNode::gpu, "kern", op + 2);
  };
  layer(d, 10, "q"), layer(d, 20, "r"), layer(d, 30, "s"), layer(d, 40, "t");
  layer(e, 10, "u"), layer(e, 20, "q"), layer(e, 30, "s"), layer(e, 40, "t");
  for (int64_t budget : {int64_t(1) << 28, int64_t(0)}) {
    CAPTURE(budget);
    auto m = tlsql::match_trees(d.nodes, e.nodes, budget);
    CHECK(m.greedy == (budget == 0 ? 1 : 0));  // the one list that needs more than its head
    CHECK(m.a[(size_t)d[10]] == e[20]);
    CHECK(m.a[(size_t)d[20]] == -1);
    CHECK(m.a[(size_t)d[30]] == e[30]);
    CHECK(m.a[(size_t)d[40]] == e[40]);
    CHECK(m.b[(size_t)e[10]] == -1);
  }
  // Three identical layers against two: the first two match, the third is the new one.
  Builder f{names}, g{names};
  f.add(1, -1, DiffNode::host, "forward", 0);
  g.add(1, -1, DiffNode::host, "forward", 0);
  layer(f, 10, "embed"), layer(f, 20, "same"), layer(f, 30, "same");
  layer(g, 10, "other"), layer(g, 20, "same"), layer(g, 30, "same"), layer(g, 40, "same");
  auto m = tlsql::match_trees(f.nodes, g.nodes);
  CHECK(m.a[(size_t)f[20]] == g[20]);
  CHECK(m.a[(size_t)f[30]] == g[30]);
  CHECK(m.b[(size_t)g[40]] == -1);
}

TEST_CASE("deep trees: no recursion") {
  std::map<std::string, int32_t> names;
  Builder a{names}, b{names};
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    a.add(i, i - 1, i + 1 == n ? DiffNode::gpu : DiffNode::op, "f", i);
    b.add(i, i - 1, i + 1 == n ? DiffNode::gpu : DiffNode::op, "f", i);
  }
  auto m = tlsql::match_trees(a.nodes, b.nodes);
  CHECK(m.a[(size_t)(n - 1)] == n - 1);
  auto l = tlsql::lowest_matched_ancestors(a.nodes, m.a);
  CHECK(l[(size_t)(n - 1)] == n - 2);
}

TEST_CASE("flops_homes: a counted op's FLOPs go to the group of its longest kernel") {
  std::map<std::string, int32_t> names;
  Builder t{names};
  // 1 step > 2 sdpa (counted) > [3 zeros > 4 launch > 5 fill (5 µs); 6 flash_fwd > 7 launch > 8 attn (150 µs)]
  // 1 step > 9 add (counted) > [10 launch > 11 k (10 µs, ts 300); 12 launch > 13 k (10 µs, ts 200)]
  // 1 step > 14 launch > 15 k (no counted event above it); 16 mm (counted) > 17 launch > 18 k (no group)
  t.add(1, -1, DiffNode::host, "ProfilerStep#1", 0)
      .add(2, 1, DiffNode::op, "sdpa", 1)
      .add(3, 2, DiffNode::op, "zeros", 2)
      .add(4, 3, DiffNode::call, "launch", 3)
      .add(5, 4, DiffNode::gpu, "fill", 100)
      .add(6, 2, DiffNode::op, "flash_fwd", 4)
      .add(7, 6, DiffNode::call, "launch", 5)
      .add(8, 7, DiffNode::gpu, "attn", 110)
      .add(9, 1, DiffNode::op, "add", 6)
      .add(10, 9, DiffNode::call, "launch", 7)
      .add(11, 10, DiffNode::gpu, "k", 300)
      .add(12, 9, DiffNode::call, "launch", 8)
      .add(13, 12, DiffNode::gpu, "k", 200)
      .add(14, 1, DiffNode::call, "launch", 9)
      .add(15, 14, DiffNode::gpu, "k", 400)
      .add(16, -1, DiffNode::op, "mm", 10)
      .add(17, 16, DiffNode::call, "launch", 11)
      .add(18, 17, DiffNode::gpu, "k", 500);
  const size_t n = t.nodes.size();
  std::vector<int64_t> dur(n, -1);
  dur[(size_t)t[5]] = 5, dur[(size_t)t[8]] = 150, dur[(size_t)t[11]] = 10, dur[(size_t)t[13]] = 10;
  dur[(size_t)t[15]] = 7, dur[(size_t)t[18]] = 99;
  std::vector<tlsql::Ix> lca(n, -1);  // every kernel below the step has a group; 18 none
  for (int64_t k : {5, 8, 11, 13, 15}) lca[(size_t)t[k]] = (tlsql::Ix)t[1];
  std::vector<uint8_t> counted(n, 0);
  for (int64_t c : {2, 9, 16}) counted[(size_t)t[c]] = 1;
  const auto home = tlsql::flops_homes(t.nodes, dur, lca, counted);
  CHECK(home[(size_t)t[2]] == t[8]);   // the attention kernel, not the helper fill
  CHECK(home[(size_t)t[9]] == t[13]);  // equal durations: the earlier kernel
  CHECK(home[(size_t)t[16]] == -1);    // its kernel has no lowest common ancestor
  for (int64_t other : {1, 3, 4, 5, 6, 7, 8, 14, 15}) CHECK(home[(size_t)t[other]] == -1);
}
