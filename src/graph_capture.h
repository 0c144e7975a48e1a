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

struct ReplayMatch {
  int32_t graph = -1;            // the captured graph replayed, -1 when none is certain
  int32_t candidates = 0;        // graphs whose nodes are the replay's events (before tie-breaks); -1: not searched
  std::vector<int32_t> node_of;  // per replay event, its node in that graph
};

// A graph matches a replay when it has as many nodes as the replay has GPU events and the
// events pair with the nodes by (work, kernel name): the k-th event of a name is the k-th node
// of that name (a graph with parallel branches may run them in another order than they were
// launched). A graph whose calls record no kernel names pairs by work kind alone, in order.
// Several matches: the most events with the node's grid and block win, then the graph of the
// replay's batch size (`batch`: the tokens of the serving step around it, serving_step); a tie
// after that is no match.
ReplayMatch match_replay(const std::vector<ReplayEvent>& replay, const std::vector<CapturedGraph>& graphs,
                         std::optional<int64_t> batch);

}  // namespace tlsql
