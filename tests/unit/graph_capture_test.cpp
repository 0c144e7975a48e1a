#include "src/graph_capture.h"

#include <doctest/doctest.h>

using tlsql::CapturedGraph;
using tlsql::GraphMatcher;
using tlsql::Kind;
using tlsql::ReplayEvent;
using tlsql::TiedReplay;

namespace {

// A graph of nodes (work, kernel name id, geometry); name id kNone: the call names no kernel.
CapturedGraph graph(std::vector<CapturedGraph::Node> nodes, std::optional<int64_t> batch = std::nullopt) {
  CapturedGraph g;
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i].row = (int32_t)i;
  g.nodes = std::move(nodes);
  g.batch_size = batch;
  return g;
}
CapturedGraph::Node node(Kind work, uint32_t kernel, std::string geometry = "") {
  CapturedGraph::Node n;
  n.work = work, n.kernel = kernel, n.geometry = std::move(geometry);
  return n;
}
constexpr uint32_t kNone = tlsql::StringPool::kNone;

}  // namespace

// A replay of kernels named by ids, no geometry.
std::vector<ReplayEvent> kernels(std::vector<uint32_t> names) {
  std::vector<ReplayEvent> out;
  for (uint32_t n : names) out.push_back({Kind::kernel, n, ""});
  return out;
}
CapturedGraph graph_of(std::vector<uint32_t> names) {
  std::vector<CapturedGraph::Node> nodes;
  for (uint32_t n : names) nodes.push_back(node(Kind::kernel, n));
  return graph(std::move(nodes));
}

TEST_CASE("a replay pairs with the graph whose nodes are its events, by name, in order per name") {
  // Graph 0: kernels 1, 2, 1 and a memset; graph 1: kernels 1, 2.
  std::vector<CapturedGraph> graphs = {
      graph({node(Kind::kernel, 1), node(Kind::kernel, 2), node(Kind::kernel, 1), node(Kind::memset, kNone)}),
      graph({node(Kind::kernel, 1), node(Kind::kernel, 2)})};
  GraphMatcher matcher(graphs);
  // Parallel branches ran in another order: 2 first, then the two 1s, the memset between.
  const std::vector<ReplayEvent> replay = {
      {Kind::kernel, 2, ""}, {Kind::kernel, 1, ""}, {Kind::memset, 9, ""}, {Kind::kernel, 1, ""}};
  auto m = matcher.match(replay, {});
  CHECK(m.graphs == std::vector<int32_t>{0});
  CHECK(m.distance == 0);
  CHECK(m.candidates == 1);
  auto p = matcher.pair(replay, 0);
  CHECK(p.node_of == std::vector<int32_t>{1, 0, 3, 2});  // the k-th 1 is the k-th node named 1
  CHECK(p.missing.empty());
  // A name no node has, or one event too many or too few (graphs too small for near matches): no graph.
  CHECK(matcher.match(kernels({3, 2}), {}).graphs.empty());
  CHECK(matcher.match(kernels({1}), {}).graphs.empty());
  CHECK(matcher.match({}, {}).graphs.empty());
}

TEST_CASE("several graphs match: grid and block, then the batch size, else a tie for the order rule") {
  std::vector<CapturedGraph> graphs = {graph({node(Kind::kernel, 1, "[1,1,1]|[32,1,1]")}, 4),
                                       graph({node(Kind::kernel, 1, "[2,1,1]|[32,1,1]")}, 8),
                                       graph({node(Kind::kernel, 1, "[2,1,1]|[32,1,1]")}, 16)};
  GraphMatcher matcher(graphs);
  auto by_geometry = matcher.match({{Kind::kernel, 1, "[1,1,1]|[32,1,1]"}}, {});
  CHECK(by_geometry.graphs == std::vector<int32_t>{0});
  CHECK(by_geometry.candidates == 3);
  // Graphs 1 and 2 have the same grid: the batch size decides, and without it they tie.
  CHECK(matcher.match({{Kind::kernel, 1, "[2,1,1]|[32,1,1]"}}, 16).graphs == std::vector<int32_t>{2});
  auto tie = matcher.match({{Kind::kernel, 1, "[2,1,1]|[32,1,1]"}}, {});
  CHECK(tie.graphs == std::vector<int32_t>{1, 2});
  CHECK(tie.alike);
  CHECK(tie.candidates == 3);
  // A batch size no tied graph has does not break the tie.
  CHECK(matcher.match({{Kind::kernel, 1, "[2,1,1]|[32,1,1]"}}, 4).graphs == std::vector<int32_t>{1, 2});
}

TEST_CASE("a graph whose calls name no kernels pairs by work kind, in order, and only exactly") {
  std::vector<CapturedGraph> graphs = {
      graph({node(Kind::kernel, kNone), node(Kind::memcpy, kNone), node(Kind::kernel, kNone)})};
  GraphMatcher matcher(graphs);
  const std::vector<ReplayEvent> replay = {{Kind::kernel, 5, ""}, {Kind::memcpy, 6, ""}, {Kind::kernel, 7, ""}};
  CHECK(matcher.match(replay, {}).graphs == std::vector<int32_t>{0});
  CHECK(matcher.pair(replay, 0).node_of == std::vector<int32_t>{0, 1, 2});
  CHECK(matcher.match(kernels({5, 7, 8}), {}).graphs.empty());
  // 40 unnamed kernel nodes: a replay of 39 is not near (which node is missing cannot be told).
  std::vector<CapturedGraph> big = {graph(std::vector<CapturedGraph::Node>(40, node(Kind::kernel, kNone)))};
  GraphMatcher big_matcher(big);
  CHECK(big_matcher.match(kernels(std::vector<uint32_t>(39, 5)), {}).graphs.empty());
  CHECK(big_matcher.match(kernels(std::vector<uint32_t>(40, 5)), {}).graphs == std::vector<int32_t>{0});
}

TEST_CASE("near-exact: how many nodes and events may stay unpaired") {
  CHECK(tlsql::near_bound(7, true) == 0);  // too small to say
  CHECK(tlsql::near_bound(8, true) == 1);
  CHECK(tlsql::near_bound(15, true) == 1);
  CHECK(tlsql::near_bound(64, true) == 2);     // 64 / 32
  CHECK(tlsql::near_bound(1567, true) == 32);  // 48, at most 32
  CHECK(tlsql::near_bound(1567, false) == 0);  // no kernel names
}

TEST_CASE("near-exact: a replay missing one node of a graph pairs the rest where they ran") {
  // A layer of kernels 10, 11, 12, 13 four times (16 nodes), then 14 and 15 (18 nodes). The replay
  // misses the third layer's 11 (node 9): 17 events. The k-th 11 pairing with the k-th node would
  // put the third and fourth layers' 11s on the second and third layers' nodes; by place they pair
  // with their own layers', and node 9 is the missing one.
  std::vector<uint32_t> names;
  for (int l = 0; l < 4; ++l)
    for (uint32_t k : {10u, 11u, 12u, 13u}) names.push_back(k);
  names.push_back(14), names.push_back(15);
  std::vector<CapturedGraph> graphs = {graph_of(names), graph_of({10, 11})};
  GraphMatcher matcher(graphs);
  std::vector<uint32_t> ran = names;
  ran.erase(ran.begin() + 9);
  auto m = matcher.match(kernels(ran), {});
  CHECK(m.graphs == std::vector<int32_t>{0});
  CHECK(m.distance == 1);
  auto p = matcher.pair(kernels(ran), 0);
  CHECK(p.missing == std::vector<int32_t>{9});
  std::vector<int32_t> want;
  for (int32_t n = 0; n < 18; ++n)
    if (n != 9) want.push_back(n);
  CHECK(p.node_of == want);

  // One extra GPU event (a 16 between the layers): it pairs with no node, the rest pair in place.
  std::vector<uint32_t> more = names;
  more.insert(more.begin() + 8, 16);
  auto extra = matcher.match(kernels(more), {});
  CHECK(extra.graphs == std::vector<int32_t>{0});
  CHECK(extra.distance == 1);
  auto q = matcher.pair(kernels(more), 0);
  CHECK(q.node_of[8] == -1);
  CHECK(q.node_of[9] == 8);
  CHECK(q.missing.empty());

  // One kernel replaced by another (2 unpaired) in an 18-node graph (bound 1): too far.
  std::vector<uint32_t> swapped = names;
  swapped[5] = 16;
  auto far = matcher.match(kernels(swapped), {});
  CHECK(far.graphs.empty());
  CHECK(far.candidates == 0);
}

TEST_CASE("near-exact: the nearest graph wins; equally near different graphs are not alike") {
  // Graphs 0 and 1 differ in their last kernel (8 and 9); graph 2 is graph 0 again.
  std::vector<uint32_t> base = {1, 2, 3, 4, 5, 6, 7};
  auto with = [&](uint32_t last) {
    auto v = base;
    v.push_back(last);
    return v;
  };
  std::vector<CapturedGraph> two = {graph_of(with(8)), graph_of(with(9))};
  GraphMatcher matcher(two);
  // The replay runs 1..7 and neither 8 nor 9: as close to both.
  auto m = matcher.match(kernels(base), {});
  CHECK(m.graphs == std::vector<int32_t>{0, 1});
  CHECK(m.distance == 1);
  CHECK_FALSE(m.alike);
  // An exact match wins over near ones, a nearer over a farther.
  CHECK(matcher.match(kernels(with(9)), {}).graphs == std::vector<int32_t>{1});
  CHECK(matcher.match(kernels(with(9)), {}).distance == 0);
  // 1..7, 8 and 2 extra 20s: 2 from graph 0 (bound 1: out of reach), 3 from graph 1.
  CHECK(matcher.match(kernels({1, 2, 3, 4, 5, 6, 7, 8, 20, 20}), {}).graphs.empty());
  // Identical graphs equally near: alike, for the order rule.
  std::vector<CapturedGraph> same = {graph_of(with(8)), graph_of(with(8))};
  GraphMatcher same_matcher(same);
  auto s = same_matcher.match(kernels(base), {});
  CHECK(s.graphs == std::vector<int32_t>{0, 1});
  CHECK(s.alike);
}

TEST_CASE("the search has a budget: past it, replays are not searched") {
  std::vector<CapturedGraph> graphs = {graph_of({1, 2, 3, 4, 5, 6, 7, 8})};
  GraphMatcher matcher(graphs);
  matcher.budget = 3;
  CHECK(matcher.match(kernels({1, 2, 3, 4, 5, 6, 7, 8}), {}).candidates == -1);
}

TEST_CASE("the order rule: the j-th tied replay of a step takes the (j mod n)-th tied graph") {
  const std::vector<int32_t> layers = {1, 2, 3}, other = {5, 6};
  auto tie = [](int64_t scope, int64_t ts, const std::vector<int32_t>& g) {
    TiedReplay t;
    t.scope = scope, t.at = {ts, ts}, t.graphs = &g;
    return t;
  };
  // Step 100 replays graphs 1..3 (given out of launch order here), step 200 again; step 300 two
  // of them (not a multiple of 3: none paired); step 400 graphs 5, 6 twice over (4 replays).
  std::vector<TiedReplay> tied = {tie(100, 30, layers), tie(100, 10, layers), tie(100, 20, layers),
                                  tie(200, 40, layers), tie(200, 50, layers), tie(200, 60, layers),
                                  tie(300, 70, layers), tie(300, 80, layers), tie(400, 90, other),
                                  tie(400, 91, other),  tie(400, 92, other),  tie(400, 93, other)};
  CHECK(tlsql::settle_ties_by_order(tied) == std::vector<int32_t>{3, 1, 2, 1, 2, 3, -1, -1, 5, 6, 5, 6});
  // Where no step is recorded, the trace is one scope: 3 replays of the same 3 graphs pair.
  std::vector<TiedReplay> trace = {tie(-1, 5, layers), tie(-1, 6, layers), tie(-1, 7, layers)};
  CHECK(tlsql::settle_ties_by_order(trace) == std::vector<int32_t>{1, 2, 3});
  CHECK(tlsql::settle_ties_by_order({}).empty());
  // Graphs that differ in their ops or shapes (a batch size each, say): only a recorded step with
  // exactly as many replays; not twice as many, nor the trace with no step recorded.
  auto unlike = [&](int64_t scope, int64_t ts) {
    TiedReplay t = tie(scope, ts, other);
    t.alike = false;
    return t;
  };
  CHECK(tlsql::settle_ties_by_order({unlike(100, 2), unlike(100, 1)}) == std::vector<int32_t>{6, 5});
  CHECK(tlsql::settle_ties_by_order({unlike(100, 1), unlike(100, 2), unlike(100, 3), unlike(100, 4)}) ==
        std::vector<int32_t>{-1, -1, -1, -1});
  CHECK(tlsql::settle_ties_by_order({unlike(-1, 1), unlike(-1, 2)}) == std::vector<int32_t>{-1, -1});
}

TEST_CASE("graphs with the same nodes but other ops or shapes are not alike") {
  std::vector<CapturedGraph> graphs = {graph_of({1, 2}), graph_of({1, 2}), graph_of({1, 2})};
  graphs[0].content = graphs[1].content = 7, graphs[2].content = 8;  // graph 2: other shapes
  GraphMatcher matcher(graphs);
  auto m = matcher.match(kernels({1, 2}), {});
  CHECK(m.graphs == std::vector<int32_t>{0, 1, 2});
  CHECK_FALSE(m.alike);
  std::vector<CapturedGraph> two = {graphs[0], graphs[1]};
  GraphMatcher alike(two);
  CHECK(alike.match(kernels({1, 2}), {}).alike);
}

TEST_CASE("brief names for health") {
  CHECK(tlsql::brief_name("void at::native::kernel<float>(int)") == "void at::native::kernel");
  CHECK(tlsql::brief_name(std::string(80, 'a')) == std::string(57, 'a') + "...");
}

TEST_CASE("launch geometry: grid and block, minified, only when both are recorded") {
  CHECK(tlsql::launch_geometry(R"({"grid": [4, 1, 1], "block": [128,1,1], "x": 1})") == "[4,1,1]|[128,1,1]");
  CHECK(tlsql::launch_geometry(R"({"grid": [4, 1, 1]})").empty());
  CHECK(tlsql::launch_geometry("").empty());
}
