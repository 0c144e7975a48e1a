// CUDA / HIP graphs recorded in capture traces (torch.profiler running while a serving engine
// captures its graphs), and which captured graph a replay in another trace ran. The tree builder
// uses both to hang each replayed kernel under the ops that launched it at capture time
// (docs/inference.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/event_store.h"

namespace tlsql {

struct CapturedGraph {
  std::string file;
  int32_t capture = 0;                // the nth capture (begin-capture .. end-capture call) in the file, from 0
  std::optional<int64_t> batch_size;  // TraceLens's execution_details.json, when it has the file
  std::string mode;                   // likewise ("FULL", "PIECEWISE", ...)
  int32_t eager_start = -1;           // a graph read from an eager run (EagerRuns): its first GPU row
  // The host events at and above the graph's launch calls (launch calls, ops, python frames,
  // annotations), parents before children; `parent` indexes rows (-1: a root of the capture
  // trace). Their strings and args live in the store the capture was read into.
  std::vector<EventRec> rows;
  // The same without python frames (a parent is the nearest kept event above): what replays copy
  // when copying the frames too would take more rows than the trace itself.
  std::vector<EventRec> lean_rows;
  struct Node {
    int32_t row = -1;                     // its launch call in rows
    int32_t lean_row = -1;                // and in lean_rows
    Kind work = Kind::kernel;             // kernel, memcpy or memset
    uint32_t kernel = StringPool::kNone;  // the call's `kernel` arg (ROCm traces record it), else kNone
    std::string geometry;                 // the call's grid and block args, "" when not recorded
  };
  std::vector<Node> nodes;  // in launch order
  // A hash of what the reports read of the graph: its ops, annotations and launch calls with their
  // names, input shapes and types, and which is above which (not python frames, whose module names
  // tell identical layers apart, nor an op's other args, such as the layer name vLLM passes as a
  // string): graphs with the same nodes and content are alike, and a replay's choice between them
  // changes only the module path.
  uint64_t content = 0;
};

// The graphs of one capture trace (loaded and its tree built, strings in `store`): per host
// thread, the calls that launch GPU work (launched_work) between a begin-capture call and the
// next end-capture call.
std::vector<CapturedGraph> captured_graphs(const LoadedTrace& trace, StringPool& strings, const TextArena& args,
                                           const std::string& file);

// "grid|block" of a launch call or GPU event's args text, minified; "" unless both are there.
std::string launch_geometry(std::string_view args);

// One GPU event of a replay, in GPU start order.
struct ReplayEvent {
  Kind work = Kind::kernel;
  uint32_t name = StringPool::kNone;
  std::string geometry;
};

// GPU work of one trace that ran eagerly (not replayed by a graph launch), per stream in start
// order: where a graph's kernels also ran outside the graph (vLLM's warm-up and piecewise runs).
class EagerRuns {
 public:
  EagerRuns(const RowArray& ev, const StringPool& strings, const TextArena& args);
  // A graph made from the eager run of the replay's events: the first run, on one stream, of GPU
  // events of the replay's kinds and names in its order (contiguous), with the launch calls and
  // the events above them below the run's lowest common ancestor (for a one-event run: up to its
  // op). nullopt when no run exists (`runs` = 0) or when runs were launched by different ops or
  // shapes (`runs` > 1: which one the graph captured cannot be told), or the searches of this
  // trace passed their budget (`runs` = -1: not searched).
  std::optional<CapturedGraph> graph_for(const std::vector<ReplayEvent>& replay, int64_t& runs);

 private:
  const RowArray& ev_;
  const TextArena& args_;
  std::vector<std::vector<int32_t>> streams_;                                        // GPU rows per stream
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> starts_;  // name -> (stream, index)
  // Comparisons left for all searches: a trace of a million kernels of one name must not make each
  // of many replays scan them all (past it, replays are not searched, and counted).
  int64_t budget_ = int64_t{1} << 25;
};

// How many graph nodes and replay events may stay unpaired when a replay is attributed to a graph
// it does not match exactly (near-exact): 1 per 32 nodes, at least 1, at most 32; none for a graph
// of fewer than 8 nodes (a replay of 2 kernels that pairs with 1 of them says little) nor for one
// whose calls record no kernel names (CUDA: which node is missing cannot be told).
int32_t near_bound(size_t nodes, bool named);

// How a replay's events pair with a graph's nodes.
struct ReplayPairing {
  std::vector<int32_t> node_of;  // per replay event, its node; -1: no node launched it (an extra event)
  std::vector<int32_t> missing;  // the nodes no event ran, in node order
};

struct ReplayMatch {
  // The graphs the replay matches best, after the tie-breaks (grid and block, batch size), in
  // capture order; empty when none is within reach. One: the replay's graph. Several: a tie, which
  // only the replay's order among its step's replays may settle (settle_ties_by_order).
  std::vector<int32_t> graphs;
  int32_t distance = 0;    // graph nodes + replay events left unpaired against them (0: exact)
  int32_t candidates = 0;  // graphs within reach before the tie-breaks; -1: not searched (budget)
  bool alike = true;       // the tied graphs have the same nodes (work, kernel name, grid and block) and content
};

// Which captured graph a replay ran. A graph matches exactly when its nodes are the replay's events
// by (work, kernel name): the k-th event of a name pairs with the k-th node of that name (a graph
// with parallel branches may run them in another order than they were launched); a graph whose
// calls record no kernel names pairs by work kind alone, in order. Else the nearest graphs within
// near_bound: the distance is how many nodes and events stay unpaired, name by name (the count of
// a name's nodes against its events); where those counts differ, the events pair with the nodes
// of the name nearest their place (pair). Exact matches win over near ones, a nearer over a
// farther; among equals, the most events with the node's grid and block, then the graph of the
// replay's batch size (`batch`: the tokens of the serving step around it, serving_step). What is
// left tied is in `graphs` for the order rule, unless it is a near tie between graphs that are not
// alike (`alike` false): that replay is not attributed.
class GraphMatcher {
 public:
  explicit GraphMatcher(const std::vector<CapturedGraph>& graphs);
  ReplayMatch match(const std::vector<ReplayEvent>& replay, std::optional<int64_t> batch);
  // The replay's events against graph `g`'s nodes: per name, in order when the counts agree; else
  // the fewer of them pair with those of the more nearest their place in their sequence (the least
  // sum of |event index - node index|; at equal cost, earlier pairs first), the rest unpaired.
  ReplayPairing pair(const std::vector<ReplayEvent>& replay, int32_t g) const;
  // Key comparisons left to all searches: thousands of distinct replays against thousands of
  // graphs must not take what time they like (past it, replays are not searched, and counted).
  int64_t budget = int64_t{1} << 27;

 private:
  struct Shape {
    bool geometry = false;                             // some node records its grid and block
    bool named = true;                                 // every kernel node records its kernel's name
    std::vector<std::pair<uint64_t, int32_t>> counts;  // (key, nodes), by key
  };
  const std::vector<CapturedGraph>& graphs_;
  std::vector<Shape> shapes_;
  std::vector<std::pair<size_t, int32_t>> by_size_;  // (nodes, graph), sorted
};

// The order rule for ties. A replay that matches several graphs equally pairs with one of them by
// its place: among the replays of its scope (its serving step; the trace where no step is
// recorded) that tie between the same n graphs, in launch order, the j-th takes the (j mod n)-th
// of them in capture order (replays run in capture order), when
//   - the graphs are alike (ReplayMatch::alike: the choice changes only the module path) and the
//     scope has a multiple of n such replays (each round replays each of them once), or
//   - the scope is a recorded step that has exactly n such replays (a step runs one batch through
//     the model once: graphs of other batch sizes or pieces that tie by their kernels alone cannot
//     share its n places).
// Otherwise none of them is attributed.
struct TiedReplay {
  int64_t scope = -1;                            // its step's row, or -1: the trace
  std::pair<int64_t, int64_t> at;                // its launch's (start, row): the order
  const std::vector<int32_t>* graphs = nullptr;  // the graphs it ties between, in capture order
  bool alike = true;                             // ReplayMatch::alike of those graphs
};
// Per tied replay, the graph its place gives it, or -1.
std::vector<int32_t> settle_ties_by_order(const std::vector<TiedReplay>& tied);

// A kernel name short enough for a health detail: up to its first '(' or '<', at most 60 bytes.
std::string brief_name(std::string_view name);

}  // namespace tlsql
