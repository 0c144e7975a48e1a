#include "src/graph_capture.h"

#include <doctest/doctest.h>

using tlsql::CapturedGraph;
using tlsql::Kind;
using tlsql::ReplayEvent;

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

TEST_CASE("a replay pairs with the graph whose nodes are its events, by name, in order per name") {
  // Graph 0: kernels 1, 2, 1 and a memset; graph 1: kernels 1, 2.
  std::vector<CapturedGraph> graphs = {
      graph({node(Kind::kernel, 1), node(Kind::kernel, 2), node(Kind::kernel, 1), node(Kind::memset, kNone)}),
      graph({node(Kind::kernel, 1), node(Kind::kernel, 2)})};
  // Parallel branches ran in another order: 2 first, then the two 1s, the memset between.
  auto m = tlsql::match_replay(
      {{Kind::kernel, 2, ""}, {Kind::kernel, 1, ""}, {Kind::memset, 9, ""}, {Kind::kernel, 1, ""}}, graphs, {});
  CHECK(m.graph == 0);
  CHECK(m.candidates == 1);
  CHECK(m.node_of == std::vector<int32_t>{1, 0, 3, 2});  // the k-th 1 is the k-th node named 1
  // A name no node has, or one event too many or too few: no graph.
  CHECK(tlsql::match_replay({{Kind::kernel, 3, ""}, {Kind::kernel, 2, ""}}, graphs, {}).graph == -1);
  CHECK(tlsql::match_replay({{Kind::kernel, 1, ""}}, graphs, {}).graph == -1);
  CHECK(tlsql::match_replay({}, graphs, {}).graph == -1);
}

TEST_CASE("several graphs match: grid and block, then the batch size, else none") {
  std::vector<CapturedGraph> graphs = {graph({node(Kind::kernel, 1, "[1,1,1]|[32,1,1]")}, 4),
                                       graph({node(Kind::kernel, 1, "[2,1,1]|[32,1,1]")}, 8),
                                       graph({node(Kind::kernel, 1, "[2,1,1]|[32,1,1]")}, 16)};
  auto by_geometry = tlsql::match_replay({{Kind::kernel, 1, "[1,1,1]|[32,1,1]"}}, graphs, {});
  CHECK(by_geometry.graph == 0);
  CHECK(by_geometry.candidates == 3);
  // Graphs 1 and 2 have the same grid: the batch size decides, and without it nothing does.
  CHECK(tlsql::match_replay({{Kind::kernel, 1, "[2,1,1]|[32,1,1]"}}, graphs, 16).graph == 2);
  auto tie = tlsql::match_replay({{Kind::kernel, 1, "[2,1,1]|[32,1,1]"}}, graphs, {});
  CHECK(tie.graph == -1);
  CHECK(tie.candidates == 3);
  // A batch size no tied graph has does not break the tie.
  CHECK(tlsql::match_replay({{Kind::kernel, 1, "[2,1,1]|[32,1,1]"}}, graphs, 4).graph == -1);
}

TEST_CASE("a graph whose calls name no kernels pairs by work kind, in order") {
  std::vector<CapturedGraph> graphs = {
      graph({node(Kind::kernel, kNone), node(Kind::memcpy, kNone), node(Kind::kernel, kNone)})};
  auto m = tlsql::match_replay({{Kind::kernel, 5, ""}, {Kind::memcpy, 6, ""}, {Kind::kernel, 7, ""}}, graphs, {});
  CHECK(m.graph == 0);
  CHECK(m.node_of == std::vector<int32_t>{0, 1, 2});
  CHECK(tlsql::match_replay({{Kind::kernel, 5, ""}, {Kind::kernel, 7, ""}, {Kind::kernel, 8, ""}}, graphs, {}).graph ==
        -1);
}

TEST_CASE("launch geometry: grid and block, minified, only when both are recorded") {
  CHECK(tlsql::launch_geometry(R"({"grid": [4, 1, 1], "block": [128,1,1], "x": 1})") == "[4,1,1]|[128,1,1]");
  CHECK(tlsql::launch_geometry(R"({"grid": [4, 1, 1]})").empty());
  CHECK(tlsql::launch_geometry("").empty());
}
