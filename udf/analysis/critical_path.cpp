// The critical path algorithm (critical_path.h). It follows HTA's CPGraph rule by rule (the
// reference, hta/analyzers/critical_path_analysis.py), so that its breakdown reproduces HTA's;
// where it departs, docs/reports.md says so.
#include "udf/analysis/critical_path.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "src/trace_model.h"

namespace tlsql {

const char* cp_edge_name(CpEdge t) {
  switch (t) {
    case CpEdge::operator_kernel: return "critical_path_operator";
    case CpEdge::dependency: return "critical_path_dependency";
    case CpEdge::kernel_launch_delay: return "critical_path_kernel_launch_delay";
    case CpEdge::kernel_kernel_delay: return "critical_path_kernel_kernel_delay";
    case CpEdge::sync_dependency: return "critical_path_sync_dependency";
  }
  return "?";
}

namespace {

struct Node {
  int64_t uid, ts;
  bool end;
};
struct Edge {
  int u, v;
  CpEdge type;
  int64_t weight;
  int64_t uid = -1;
  const char* bound_by = "";
  bool inferred = false;
};

class Graph {
 public:
  std::vector<Node> nodes;
  std::vector<Edge> edges;

  // networkx's add_edge: a second edge between the same two nodes replaces the first's data but
  // keeps its place among the node's predecessors (the order that breaks ties below).
  size_t add(int u, int v, CpEdge type, bool zero = false) {
    const bool weightless = zero || type == CpEdge::dependency || type == CpEdge::sync_dependency;
    Edge e{u, v, type, weightless ? 0 : sat_sub(nodes[(size_t)v].ts, nodes[(size_t)u].ts)};
    auto [it, fresh] = at_.try_emplace(key(u, v), edges.size());
    if (fresh)
      edges.push_back(e);
    else
      edges[it->second] = e;
    return it->second;
  }

 private:
  static uint64_t key(int u, int v) { return (uint64_t)(uint32_t)u << 32 | (uint32_t)v; }
  std::unordered_map<uint64_t, size_t> at_;
};

// HTA's _attribute_edge: an edge starting at an event's start belongs to that event; one ending
// at an event's end (and starting at another's end) to the ending event; one from an end to a
// start (between two children) to the parent of the first. A kernel-kernel gap to the earlier
// kernel.
void attribute(Graph& g, size_t at, int64_t src_parent, const char* bound_by) {
  Edge& e = g.edges[at];
  const Node &src = g.nodes[(size_t)e.u], &dest = g.nodes[(size_t)e.v];
  if (e.type == CpEdge::kernel_kernel_delay || !src.end)
    e.uid = src.uid;
  else if (dest.end)
    e.uid = dest.uid;
  else
    e.uid = src_parent;
  e.bound_by = bound_by;
}

// Sorted (ts, gpu index) lists, to find the launch just before or just after a moment.
using Launches = std::vector<std::pair<int64_t, size_t>>;

}  // namespace

CpResult critical_path(const CpInput& in) {
  CpResult out;
  Graph g;
  const size_t nh = in.host.size(), ng = in.gpu.size();

  // Nodes: a start and an end per op, runtime call and piece of GPU work in the window, numbered
  // in time order (the numbering only breaks ties between equally long paths).
  struct Point {
    int64_t ts, uid;
    bool end;
    size_t owner;  // host index, or nh + gpu index
  };
  std::vector<Point> points;
  for (size_t i = 0; i < nh; ++i)
    if (in.host[i].node)
      points.push_back({in.host[i].ts, in.host[i].uid, false, i}),
          points.push_back({in.host[i].end, in.host[i].uid, true, i});
  for (size_t j = 0; j < ng; ++j)
    if (in.gpu[j].in_window)
      points.push_back({in.gpu[j].ts, in.gpu[j].uid, false, nh + j}),
          points.push_back({in.gpu[j].end, in.gpu[j].uid, true, nh + j});
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return std::tuple(a.ts, a.uid, a.end) < std::tuple(b.ts, b.uid, b.end);
  });
  std::vector<int> start_of(nh + ng, -1), end_of(nh + ng, -1);
  for (const Point& p : points) {
    (p.end ? end_of : start_of)[p.owner] = (int)g.nodes.size();
    g.nodes.push_back({p.uid, p.ts, p.end});
  }
  if (g.nodes.empty()) {
    out.error = "no op, runtime call or GPU work starts in the window";
    return out;
  }

  std::unordered_map<int64_t, size_t> host_at;  // uid -> host index
  for (size_t i = 0; i < nh; ++i) host_at.emplace(in.host[i].uid, i);

  // The CUDA runtime's lock (HTA's _construct_graph_from_cuda_runtime_events): calls that hold it
  // (runtime_lock_call) run one at a time, whatever their threads; the one that ends first held it
  // first. In node order: at each such call's end, every lock-call start seen since the last end
  // gets an edge to it (its own start: the call's duration; the others: weightless, they waited),
  // and the previous end, when the lock node just before was an end, a weightless one too. These
  // edges go in first, as in HTA (the order breaks ties between equally long paths).
  std::vector<char> lock_node(g.nodes.size(), 0);
  {
    std::vector<int> starts;
    int last = -1;
    for (size_t k = 0; k < points.size(); ++k) {
      const Point& p = points[k];
      if (p.owner >= nh || !in.host[p.owner].lock) continue;
      lock_node[k] = 1;
      if (!p.end) {
        starts.push_back((int)k);
      } else {
        for (; !starts.empty(); starts.pop_back()) {
          const int s = starts.back();
          if (g.nodes[(size_t)s].uid == p.uid)
            attribute(g, g.add(s, (int)k, CpEdge::operator_kernel), -1, "cpu_bound");
          else
            g.add(s, (int)k, CpEdge::dependency);
        }
        if (last >= 0 && g.nodes[(size_t)last].end) g.add(last, (int)k, CpEdge::dependency);
      }
      last = (int)k;
    }
  }
  // Two consecutive nodes of the walk below that the lock chain above already links (HTA's
  // _shares_cuda_runtime_lock): both of lock calls, and not an end followed by a start.
  auto shares_lock = [&](int a, int b) {
    return lock_node[(size_t)a] && lock_node[(size_t)b] && (!g.nodes[(size_t)a].end || g.nodes[(size_t)b].end);
  };

  // Threads (HTA's _construct_graph_from_call_stacks): where exactly one thread id has ops or
  // annotations named "...forward..." and exactly one other "...autograd...", the second is the
  // backward pass; its events are walked as the forward thread's (the passes take turns, so the
  // path flows from the forward pass through the backward one).
  int32_t forward_tid = -1, backward_tid = -1;
  {
    auto only = [&](bool CpHost::*mark) {
      int32_t tid = -1;
      for (const CpHost& h : in.host)
        if (h.*mark) {
          if (tid >= 0 && tid != h.tid) return -1;
          tid = h.tid;
        }
      return tid;
    };
    forward_tid = only(&CpHost::forward), backward_tid = only(&CpHost::autograd);
    out.merged = forward_tid >= 0 && backward_tid >= 0 && forward_tid != backward_tid;
  }
  auto thread_of = [&](const CpHost& h) {
    return std::pair(h.pid, out.merged && h.tid == backward_tid ? forward_tid : h.tid);
  };

  // Each thread's call stack over the window's host events, nested by time as HTA's CallStackGraph
  // nests them (not the call tree: the window cuts it, and the merge above joins two threads).
  // Starts and ends in time order; at one moment ends before starts, a longer event starts first
  // and ends last, then by uid; a start's parent is the event on top of the stack, an end pops the
  // top (HTA's rule, which also settles partial overlaps).
  std::vector<int64_t> stack_parent(nh, -1);  // host index
  std::vector<std::vector<size_t>> kids(nh);
  std::vector<std::vector<size_t>> roots;
  {
    std::map<std::pair<int32_t, int32_t>, size_t> thread_at;
    std::vector<std::vector<size_t>> members;
    for (size_t i = 0; i < nh; ++i) {
      auto [it, fresh] = thread_at.try_emplace(thread_of(in.host[i]), members.size());
      if (fresh) members.emplace_back();
      members[it->second].push_back(i);
    }
    roots.resize(members.size());
    struct Mark {
      int64_t ts;
      bool start;
      size_t i;
    };
    std::vector<Mark> marks;
    for (size_t t = 0; t < members.size(); ++t) {
      marks.clear();
      for (size_t i : members[t])
        marks.push_back({in.host[i].ts, true, i}), marks.push_back({in.host[i].end, false, i});
      auto dur = [&](size_t i) { return sat_sub(in.host[i].end, in.host[i].ts); };
      std::sort(marks.begin(), marks.end(), [&](const Mark& a, const Mark& b) {
        if (a.ts != b.ts) return a.ts < b.ts;
        if (a.start != b.start) return !a.start;
        const int64_t da = dur(a.i), db = dur(b.i), ua = in.host[a.i].uid, ub = in.host[b.i].uid;
        if (a.start) return da != db ? da > db : ua < ub;
        return da != db ? da < db : ua > ub;
      });
      std::vector<size_t> open;
      for (const Mark& m : marks) {
        if (m.start) {
          if (!open.empty()) stack_parent[m.i] = (int64_t)open.back();
          (open.empty() ? roots[t] : kids[open.back()]).push_back(m.i);
          open.push_back(m.i);
        } else if (!open.empty()) {
          open.pop_back();
        }
      }
    }
  }

  // Host side, per thread (HTA's _construct_graph_from_call_stack): walk each thread's stack depth
  // first; an edge from each node visited to the next (the time between belongs to an event,
  // attribute()), consecutive top-level ops linked by a dependency. Events that are not nodes
  // (annotations, python frames) are walked through without edges, but stay the parents that
  // attribute() names.
  for (const auto& thread_roots : roots) {
    int last_node = -1, last_top = -1, depth = 0;
    int64_t last_parent = -1;
    auto parent_uid = [&](size_t i) { return stack_parent[i] < 0 ? -1 : in.host[(size_t)stack_parent[i]].uid; };
    auto enter = [&](size_t i) {
      if (!in.host[i].node) return;
      if (depth == 0 && last_top >= 0) g.add(last_top, start_of[i], CpEdge::dependency);
      ++depth;
      if (last_node >= 0 && !shares_lock(last_node, start_of[i]))
        attribute(g, g.add(last_node, start_of[i], CpEdge::operator_kernel), last_parent, "cpu_bound");
      last_node = start_of[i];
      last_parent = parent_uid(i);
    };
    auto leave = [&](size_t i) {
      if (!in.host[i].node) return;
      --depth;
      if (last_node >= 0 && !shares_lock(last_node, end_of[i]))
        attribute(g, g.add(last_node, end_of[i], CpEdge::operator_kernel, in.host[i].blocking), last_parent,
                  "cpu_bound");
      if (depth == 0) {
        last_node = -1, last_top = end_of[i];
      } else {
        last_node = end_of[i], last_parent = parent_uid(i);
      }
    };
    std::vector<std::pair<size_t, size_t>> stack;  // (host index, next child): no recursion
    for (size_t r : thread_roots) {
      enter(r);
      stack.emplace_back(r, 0);
      while (!stack.empty()) {
        auto& [i, next] = stack.back();
        if (next < kids[i].size()) {
          size_t c = kids[i][next++];
          enter(c);
          stack.emplace_back(c, 0);
        } else {
          leave(i);
          stack.pop_back();
        }
      }
    }
  }

  // Queue length per stream (HTA's TraceCounters, over the whole trace): +1 when a launch call
  // starts, -1 when its GPU work starts; read just after each.
  std::vector<int64_t> queued_at_launch(ng), queued_at_start(ng);
  {
    struct Step {
      int64_t stream, ts;
      int delta;
      size_t j;
    };
    std::vector<Step> steps;
    for (size_t j = 0; j < ng; ++j)
      steps.push_back({in.gpu[j].stream, in.gpu[j].runtime_ts, 1, j}),
          steps.push_back({in.gpu[j].stream, in.gpu[j].ts, -1, j});
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
      return std::tuple(a.stream, a.ts, -a.delta, a.j) < std::tuple(b.stream, b.ts, -b.delta, b.j);
    });
    int64_t length = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
      if (k == 0 || steps[k].stream != steps[k - 1].stream) length = 0;
      length += steps[k].delta;
      (steps[k].delta > 0 ? queued_at_launch : queued_at_start)[steps[k].j] = length;
    }
  }

  // Events recorded / waited for: the launch on a stream just before a cudaEventRecord (HTA: on
  // that stream, from any thread), and the launch on the waiting stream from the waiting thread
  // just after a cudaStreamWaitEvent.
  std::unordered_map<int64_t, Launches> on_stream;
  std::unordered_map<uint64_t, Launches> on_thread_stream;
  auto thread_stream = [](int32_t t, int64_t s) { return (uint64_t)(uint32_t)t << 32 | (uint32_t)s; };
  for (size_t j = 0; j < ng; ++j) {
    on_stream[in.gpu[j].stream].emplace_back(in.gpu[j].runtime_ts, j);
    on_thread_stream[thread_stream(in.gpu[j].runtime_thread, in.gpu[j].stream)].emplace_back(in.gpu[j].runtime_ts, j);
  }
  for (auto& [k, v] : on_stream) std::sort(v.begin(), v.end());
  for (auto& [k, v] : on_thread_stream) std::sort(v.begin(), v.end());
  auto recorded = [&](const CpSync& s) -> int64_t {  // gpu index, -1 none
    auto it = on_stream.find(s.record_stream);
    if (s.record_ts < 0 || it == on_stream.end()) return -1;
    auto at = std::upper_bound(it->second.begin(), it->second.end(), std::pair(s.record_ts, SIZE_MAX));
    return at == it->second.begin() ? -1 : (int64_t)std::prev(at)->second;
  };
  auto next_launch = [&](const CpSync& s) -> int64_t {
    auto it = on_thread_stream.find(thread_stream(s.wait_thread, s.stream));
    if (s.wait_thread < 0 || it == on_thread_stream.end()) return -1;
    auto at = std::lower_bound(it->second.begin(), it->second.end(), std::pair(s.wait_ts, (size_t)0));
    return at == it->second.end() ? -1 : (int64_t)at->second;
  };

  // GPU side (HTA's _construct_graph_from_kernels): GPU work by start, sync events by end.
  struct Item {
    int64_t key, uid;
    bool sync;
    size_t i;
  };
  std::vector<Item> items;
  for (size_t j = 0; j < ng; ++j)
    if (in.gpu[j].in_window) items.push_back({in.gpu[j].ts, in.gpu[j].uid, false, j});
  for (size_t s = 0; s < in.sync.size(); ++s) {
    const CpSync& x = in.sync[s];
    if (x.what == CpSync::stream_wait || host_at.count(x.runtime)) items.push_back({x.end, x.uid, true, s});
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return std::pair(a.key, a.uid) < std::pair(b.key, b.uid); });
  std::vector<std::pair<int64_t, int>> last;  // (stream, end node of its latest GPU work), in first-use order
  auto last_on = [&](int64_t stream) -> int* {
    for (auto& [s, n] : last)
      if (s == stream) return &n;
    return nullptr;
  };
  std::unordered_map<size_t, size_t> waits_for;  // gpu index -> gpu index it waits for (stream wait)

  // Stream waits without a sync event (CpWait), inferred where the trace allows: the record call's
  // thread last launched on stream R before it; the wait's thread next launches on stream W after
  // it. The wait is placed when R is not W, R has work launched before the record, that work and
  // the waiting work are both in the graph, and the GPU did wait (the waiting work starts at or
  // after the end of the work waited for: otherwise the guess is wrong and adds nothing).
  std::unordered_map<size_t, std::vector<size_t>> inferred_for;  // gpu index -> gpu indexes it waits for
  {
    std::unordered_map<int32_t, Launches> on_thread;
    for (size_t j = 0; j < ng; ++j) on_thread[in.gpu[j].runtime_thread].emplace_back(in.gpu[j].runtime_ts, j);
    for (auto& [k, v] : on_thread) std::sort(v.begin(), v.end());
    for (const CpWait& w : in.waits) {
      const char* why = nullptr;
      auto t = on_thread.find(w.thread);
      int64_t src = -1, dest = -1;
      if (w.record_ts < 0) {
        why = "no event record (cudaEventRecord, hipEventRecord) before it on its thread";
      } else if (t == on_thread.end()) {
        why = "its thread launches no GPU work";
      } else {
        auto after = std::lower_bound(t->second.begin(), t->second.end(), std::pair(w.ts, (size_t)0));
        auto before = std::lower_bound(t->second.begin(), t->second.end(), std::pair(w.record_ts, (size_t)0));
        if (after == t->second.end()) {
          why = "no GPU work launched after it on its thread";
        } else if (before == t->second.begin()) {
          why = "no GPU work launched before its event's record";
        } else if (const int64_t recorded_on = in.gpu[std::prev(before)->second].stream,
                   waiting = in.gpu[after->second].stream;
                   recorded_on == waiting) {
          // (A stream waiting for its own work waits for nothing: the waiting stream's work comes
          // later or from another thread, and the trace does not say which.)
          why = "its thread's next launch is on the stream its event was recorded on: the waiting stream is unknown";
        } else {
          const Launches& r = on_stream[recorded_on];
          auto at = std::lower_bound(r.begin(), r.end(), std::pair(w.record_ts, (size_t)0));
          src = (int64_t)std::prev(at)->second, dest = (int64_t)after->second;  // at > begin: `before` is one
          if (end_of[nh + (size_t)src] < 0 || start_of[nh + (size_t)dest] < 0)
            why = "the work waited for or the waiting work is outside the window";
          else if (in.gpu[(size_t)dest].ts < in.gpu[(size_t)src].end)
            why = "the next work on the waiting stream started before the inferred one ended";
        }
      }
      if (why) {
        out.waits.unplaced.emplace_back(w.uid, why);
      } else {
        inferred_for[(size_t)dest].push_back((size_t)src);
        ++out.waits.inferred;
      }
    }
  }
  auto runtime_end = [&](int64_t uid) {
    auto it = host_at.find(uid);
    return it == host_at.end() ? -1 : end_of[it->second];
  };
  for (const Item& it : items) {
    if (it.sync) {
      const CpSync& s = in.sync[it.i];
      if (s.what == CpSync::stream_wait) {
        int64_t src = recorded(s), dest = next_launch(s);
        if (src >= 0 && dest >= 0) waits_for[(size_t)dest] = (size_t)src;
      } else if (int to = runtime_end(s.runtime); to >= 0) {
        if (s.what == CpSync::event_sync) {
          if (int64_t src = recorded(s); src >= 0 && end_of[nh + (size_t)src] >= 0)
            g.add(end_of[nh + (size_t)src], to, CpEdge::sync_dependency);
        } else if (s.what == CpSync::stream_sync) {
          if (int* n = last_on(s.stream)) g.add(*n, to, CpEdge::sync_dependency);
        } else {
          for (auto& [stream, n] : last) g.add(n, to, CpEdge::sync_dependency);
        }
      }
      continue;
    }
    const size_t j = it.i;
    const CpGpu& k = in.gpu[j];
    const int start = start_of[nh + j], end = end_of[nh + j];
    attribute(g, g.add(start, end, CpEdge::operator_kernel), -1,
              k.communication ? "gpu_communication_bound" : "gpu_compute_bound");
    int waited_end = -1;  // end node of the GPU work this one waits for
    if (auto w = waits_for.find(j); w != waits_for.end()) {
      waited_end = end_of[nh + w->second];
      if (waited_end >= 0) g.add(waited_end, start, CpEdge::sync_dependency);
      waits_for.erase(w);
    }
    int64_t waited_ts = waited_end >= 0 ? g.nodes[(size_t)waited_end].ts : INT64_MIN;
    // Inferred waits count as the sync event's would: the latest end waited for decides below
    // whether the gap before this work is a delay of its own.
    if (auto w = inferred_for.find(j); w != inferred_for.end())
      for (size_t src : w->second) {
        const int from = end_of[nh + src];
        g.edges[g.add(from, start, CpEdge::sync_dependency)].inferred = true;
        waited_ts = std::max(waited_ts, g.nodes[(size_t)from].ts);
      }
    int* prev = last_on(k.stream);
    auto launch = host_at.find(k.runtime);
    // Launch delay: the stream was empty when the call launched this work and when it started,
    // and nothing it waits for ended after the launch. Otherwise the gap after the stream's
    // previous work is a kernel-kernel delay, when shorter than HTA's threshold; a longer one gets
    // no edge (the work waited for something else, usually its launch: the path comes that way).
    if (queued_at_launch[j] == 1 && queued_at_start[j] == 0 && (!prev || g.nodes[(size_t)*prev].ts < k.runtime_ts) &&
        waited_ts < k.runtime_ts && launch != host_at.end() && start_of[launch->second] >= 0) {
      // Attributed to no event, as in HTA (the kernel is the edge's to_uid).
      g.edges[g.add(start_of[launch->second], start, CpEdge::kernel_launch_delay)].bound_by =
          "gpu_kernel_launch_overhead";
    } else if (prev && sat_sub(k.ts, g.nodes[(size_t)*prev].ts) < kKernelKernelGapNs &&
               waited_ts < g.nodes[(size_t)*prev].ts) {
      attribute(g, g.add(*prev, start, CpEdge::kernel_kernel_delay), -1, "gpu_kernel_kernel_overhead");
    }
    if (prev)
      *prev = end;
    else
      last.emplace_back(k.stream, end);
  }

  // Negative weights (an end before a start: clocks of different resolution) count as 0, as in
  // HTA.
  for (Edge& e : g.edges)
    if (e.weight < 0) e.weight = 0, ++out.negative;
  out.nodes = (int64_t)g.nodes.size(), out.edges = (int64_t)g.edges.size();

  // Longest path (networkx's dag_longest_path): nodes in topological order, generation by
  // generation; each node's best predecessor is the first (in edge order) of the longest.
  const size_t n = g.nodes.size();
  std::vector<std::vector<size_t>> succ(n), pred(n);
  std::vector<int> indegree(n, 0);
  for (size_t e = 0; e < g.edges.size(); ++e)
    succ[(size_t)g.edges[e].u].push_back(e), pred[(size_t)g.edges[e].v].push_back(e), ++indegree[(size_t)g.edges[e].v];
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t v = 0; v < n; ++v)
    if (indegree[v] == 0) order.push_back(v);
  for (size_t k = 0; k < order.size(); ++k)
    for (size_t e : succ[order[k]])
      if (--indegree[(size_t)g.edges[e].v] == 0) order.push_back((size_t)g.edges[e].v);
  if (order.size() != n) {
    out.error = "the dependency graph has a cycle (events that end before they start?)";
    return out;
  }
  std::vector<int64_t> dist(n, 0);
  std::vector<int64_t> best(n, -1);  // edge into the node on its longest path; -1: the path starts here
  size_t far = order[0];
  for (size_t v : order) {
    for (size_t e : pred[v]) {
      int64_t d = sat_add(dist[(size_t)g.edges[e].u], g.edges[e].weight);
      if (best[v] < 0 || d > dist[v]) dist[v] = d, best[v] = (int64_t)e;
    }
    if (dist[v] > dist[far]) far = v;
  }
  std::vector<size_t> walk;
  for (size_t v = far; best[v] >= 0; v = (size_t)g.edges[(size_t)best[v]].u) walk.push_back((size_t)best[v]);
  std::reverse(walk.begin(), walk.end());
  for (size_t e : walk) {
    const Edge& x = g.edges[e];
    const Node &a = g.nodes[(size_t)x.u], &b = g.nodes[(size_t)x.v];
    out.path.push_back({x.type, a.uid, b.uid, a.end, b.end, a.ts, b.ts, x.weight, x.uid, x.bound_by, x.inferred});
  }
  if (out.path.empty()) out.error = "the window holds no dependency between two events";
  return out;
}

}  // namespace tlsql
