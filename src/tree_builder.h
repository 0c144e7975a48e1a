// Links the events of one trace into the call tree SPEC.md describes: host events nest by time
// per thread, GPU work hangs under its launch, other threads' roots join the main thread's
// annotations, and every event gets its step and (for backward ops) its forward op.
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "src/event_store.h"
#include "src/graph_capture.h"
#include "src/health.h"
#include "src/parallel.h"

namespace tlsql {

// Sorts (id, row) pairs by id, then row, as std::sort would (the runtime calls by correlation,
// the launch flows by id): a radix sort of the id's range, a pass or two on real traces where a
// comparison sort of a few hundred thousand pairs was the tree stage's largest sort.
void sort_by_id(std::vector<std::pair<Id32, int32_t>>& v);

// For each GPU event launched by a runtime call: the launch and TraceLens's "kernel launcher"
// (the nearest cpu_op above the launch, skipping python frames and a pass-through `execute`
// op, else the launch itself). Row indexes in the trace.
struct LaunchLink {
  int64_t gpu, runtime, launcher;
};

class ProfileTreeBuilder {
 public:
  // `captured`: graphs from capture traces, for attributing this trace's graph replays (the
  // events' args, in `args`, give their grid and block).
  ProfileTreeBuilder(LoadedTrace& trace, const StringPool& strings, Health& health, const TextArena* args = nullptr,
                     const std::vector<CapturedGraph>* captured = nullptr)
      : t_(trace), ev_(trace.rows), strings_(strings), h_(health), args_(args), captured_(captured) {}
  // A capture trace (--capture) is read for its graphs, not loaded: build() leaves its own graph
  // replays (the engine's warm-up after capturing) alone, and describe_capture_replays says in
  // health whether they match the graphs read from it (`graphs`: captured_graphs of this trace).
  void set_capture_trace() { capture_trace_ = true; }
  // Threads the build uses (the loader passes the load's own count; 0 or unset: one), and the fewest rows a
  // thread takes in a pass over the rows (tests make it small to split small traces). The rows
  // and health it builds are the same for any of these.
  void set_threads(size_t threads, size_t min_rows_per_thread = kMinRowsPerThread) {
    workers_ = threads, min_part_rows_ = min_rows_per_thread;
  }
  static constexpr size_t kMinRowsPerThread = size_t{1} << 15;
  void build();
  void describe_capture_replays(const std::vector<CapturedGraph>& graphs);
  const std::vector<LaunchLink>& launches() const { return launches_; }
  // Each graph launch whose replay was attributed: the captured graph (index) it ran, or -1 and
  // the first GPU row of the eager run it matched; how (rule: "exact", "near" or "eager"), among
  // how many graphs that matched it equally its place chose (tied; 1: none), and how many of the
  // graph's nodes ran no GPU event (missing) and of its GPU events paired with no node (extra).
  struct ReplayedGraph {
    int32_t launch, graph, eager_start;
    const char* rule;
    int32_t tied, missing, extra;
  };
  const std::vector<ReplayedGraph>& replayed_graphs() const { return replayed_graphs_; }

 private:
  void group_threads();
  void join_begin_end();
  void nest_host_events();
  struct NestKey {
    int64_t ts, neg_dur;
    int32_t idx;
    bool operator<(const NestKey& o) const {
      return ts != o.ts ? ts < o.ts : neg_dur != o.neg_dur ? neg_dur < o.neg_dur : idx < o.idx;
    }
  };
  void sort_members(std::vector<int32_t>& idx, std::vector<NestKey>& keys, const RowRanges& ranges);
  void nest_members(const int32_t* first, const int32_t* last, std::vector<int32_t>& stack, Health& h);
  void link_gpu_events(Health& h);
  void attach_thread_roots();
  void compute_depths();
  void assign_steps();
  void link_backward_to_forward(Health& h);
  struct ReplayPlan;
  ReplayPlan plan_replays(const std::vector<CapturedGraph>* graphs, bool eager_runs);
  void attribute_graph_replays();
  void find_launchers();
  void count_gpu_under_backward_without_forward();
  void build_children();
  std::string_view name(const EventRec& e) const {
    return e.name == StringPool::kNone ? std::string_view() : strings_.get(e.name);
  }
  std::string_view cat(const EventRec& e) const {
    return e.cat == StringPool::kNone ? std::string_view() : strings_.get(e.cat);
  }

  LoadedTrace& t_;
  RowArray& ev_;
  const StringPool& strings_;
  Health& h_;
  std::vector<int32_t> no_forward_;  // backward ops whose forward op is not in the trace
  const TextArena* args_;
  const std::vector<CapturedGraph>* captured_;
  bool capture_trace_ = false;
  size_t workers_ = 0, min_part_rows_ = kMinRowsPerThread;
  RowRanges row_ranges(size_t n) const { return split_rows(n, workers_, min_part_rows_); }
  std::vector<LaunchLink> launches_;
  std::vector<ReplayedGraph> replayed_graphs_;
  std::unordered_map<int32_t, int32_t> graph_launch_of_;  // attributed GPU row -> its graph launch
  // Host thread of each event (index into threads_), -1 for events outside the host tree.
  std::vector<int32_t> thread_of_;
  struct Thread {
    Id32 pid, tid;
    uint8_t text;
    std::vector<int32_t> events;  // sorted by (ts, longer first, file order) after nesting
  };
  std::vector<Thread> threads_;
};

}  // namespace tlsql
