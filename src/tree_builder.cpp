#include "tree_builder.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <optional>
#include <unordered_map>

#include "kind.h"

namespace tlsql {

namespace {

// Timestamps in real traces are rounded (to the µs in older ones): overlaps smaller than this
// are rounding, not real partial overlaps.
constexpr int64_t kRoundingNs = 1000;

struct ScalarHash {
  size_t operator()(const Scalar& s) const {
    return s.type == Scalar::integer ? std::hash<int64_t>()(s.i) * 31 + 1
                                     : std::hash<std::string_view>()(s.s) * 31 + s.type;
  }
};
struct ThreadKey {
  Scalar pid, tid;
  bool operator==(const ThreadKey& o) const { return pid == o.pid && tid == o.tid; }
};
struct ThreadKeyHash {
  size_t operator()(const ThreadKey& k) const { return ScalarHash()(k.pid) * 1000003 ^ ScalarHash()(k.tid); }
};
// Where a flow event binds: the event on the same thread starting at the same time.
struct PlaceKey {
  ThreadKey thread;
  int64_t ts;
  bool operator==(const PlaceKey& o) const { return ts == o.ts && thread == o.thread; }
};
struct PlaceKeyHash {
  size_t operator()(const PlaceKey& k) const { return ThreadKeyHash()(k.thread) ^ std::hash<int64_t>()(k.ts) * 7; }
};

bool is_launch_flow(const Event& e) {
  return e.kind == Kind::flow && (e.cat == "ac2g" || e.cat == "async" || e.cat == "async_cpu_to_gpu");
}

std::optional<int64_t> profiler_step_number(std::string_view name) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  int64_t n = 0;
  auto digits = name.substr(prefix.size());
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  return n;
}

// ProfilerStep#N marks a step: a user_annotation today, an Operator in 2021-era traces.
bool is_step_marker(const Event& e) {
  return (e.kind == Kind::annotation || e.kind == Kind::cpu_op) && profiler_step_number(e.name).has_value();
}

}  // namespace

void ProfileTreeBuilder::build() {
  join_begin_end();
  nest_host_events();
  link_gpu_events();
  attach_thread_roots();
  compute_depths();
  assign_steps();
  link_backward_to_forward();
  find_launchers();
}

// B/E pairs become one complete event on the B row; the E row stays (every element of
// traceEvents is a row) as kind 'other' under its B.
void ProfileTreeBuilder::join_begin_end() {
  std::unordered_map<ThreadKey, std::vector<int64_t>, ThreadKeyHash> open;
  auto& ev = t_.events;
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    if (ev[i].ph == 'B') {
      open[{ev[i].pid, ev[i].tid}].push_back(i);
    } else if (ev[i].ph == 'E') {
      auto& stack = open[{ev[i].pid, ev[i].tid}];
      ev[i].kind = Kind::other;
      if (stack.empty()) {
        h_.add("end_without_begin", i, "'E' events with no open 'B' on their thread");
        continue;
      }
      Event& b = ev[stack.back()];
      stack.pop_back();
      if (b.ts != kNull && ev[i].ts != kNull) b.dur = std::max<int64_t>(0, ev[i].ts - b.ts);
      ev[i].parent = &b - ev.data();
    }
  }
  for (auto& [thread, stack] : open)
    for (int64_t b : stack) h_.add("begin_without_end", b, "'B' events never closed by an 'E': dur is NULL");
}

void ProfileTreeBuilder::nest_host_events() {
  auto& ev = t_.events;
  std::unordered_map<ThreadKey, std::vector<int64_t>, ThreadKeyHash> threads;
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    const Event& e = ev[i];
    if (is_host_node(e.kind) && e.ts != kNull && e.ph != 'E') threads[{e.pid, e.tid}].push_back(i);
  }
  auto dur0 = [&](int64_t i) { return ev[i].dur == kNull ? 0 : ev[i].dur; };
  std::vector<int64_t> stack;
  for (auto& [thread, idx] : threads) {
    std::sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
      if (ev[a].ts != ev[b].ts) return ev[a].ts < ev[b].ts;
      if (dur0(a) != dur0(b)) return dur0(a) > dur0(b);
      return a < b;
    });
    stack.clear();
    for (int64_t i : idx) {
      Event& e = ev[i];
      int64_t end = e.ts + dur0(i);
      int64_t parent = -1;
      int rounded_start = 0;  // counted once per event, however many open events it closes
      while (!stack.empty()) {
        const Event& top = ev[stack.back()];
        int64_t top_end = top.ts + dur0(stack.back());
        if (e.ts >= top_end) {  // half-open: an event at the top's exact end is not inside it
          stack.pop_back();
          continue;
        }
        if (end <= top_end) {
          parent = stack.back();
        } else if (end - top_end < kRoundingNs) {
          h_.add("nested_rounded_end", i, "events overrunning their parent's end by < 1 µs, nested (rounded timestamps)");
          parent = stack.back();
        } else if (top_end - e.ts < kRoundingNs) {
          if (!rounded_start++)
            h_.add("sibling_rounded_start", i, "events starting < 1 µs before the open event's end, made its sibling (rounded timestamps)");
          stack.pop_back();
          continue;
        } else {
          h_.add("overlap_not_nested", i, "events partially overlapping the open event on their thread: made its sibling, not its child");
          parent = ev[stack.back()].parent;
        }
        break;
      }
      e.parent = parent;
      stack.push_back(i);
    }
  }
}

void ProfileTreeBuilder::link_gpu_events() {
  auto& ev = t_.events;
  std::unordered_map<int64_t, int64_t> by_correlation;
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    const Event& e = ev[i];
    if ((e.kind == Kind::runtime || e.kind == Kind::driver) && e.correlation != kNull) {
      auto [it, fresh] = by_correlation.emplace(e.correlation, i);
      if (!fresh) h_.add("duplicate_correlation", i, "runtime calls sharing a correlation id with an earlier one (GPU work goes to the first)");
    }
  }
  std::vector<int64_t> unlinked;
  int64_t gpu_work = 0;
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    Event& e = ev[i];
    if (!is_gpu_side(e.kind)) continue;
    bool counts = e.kind == Kind::kernel || e.kind == Kind::memcpy || e.kind == Kind::memset;
    gpu_work += counts;
    if (e.correlation != kNull)
      if (auto it = by_correlation.find(e.correlation); it != by_correlation.end()) {
        e.parent = it->second;
        continue;
      }
    if (counts) unlinked.push_back(i);
  }

  // Flow events ('s' at the launch, 'f' at the GPU event, same id) link what correlation did not,
  // and are checked for a partner either way.
  std::unordered_map<PlaceKey, int64_t, PlaceKeyHash> place;  // (thread, ts) -> outermost event
  bool need_places = !unlinked.empty();
  struct FlowEnds { int64_t s = -1, f = -1; };
  std::unordered_map<int64_t, FlowEnds> flows;
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    const Event& e = ev[i];
    if (is_launch_flow(e) && e.flow_id.type == Scalar::integer) {
      FlowEnds& f = flows[e.flow_id.i];
      (e.ph == 's' ? f.s : f.f) = i;
    } else if (need_places && e.ts != kNull && (e.kind == Kind::runtime || e.kind == Kind::driver || is_gpu_side(e.kind))) {
      place.emplace(PlaceKey{{e.pid, e.tid}, e.ts}, i);
    }
  }
  int64_t unmatched = 0, example = -1;
  for (auto& [id, f] : flows)
    if (f.s < 0 || f.f < 0) {
      ++unmatched;
      example = example < 0 ? std::max(f.s, f.f) : example;
    }
  if (unmatched) h_.add("flow_unmatched", example, "launch flows ('s'/'f') whose other end is missing", unmatched);

  if (need_places) {
    std::unordered_map<int64_t, int64_t> flow_of_gpu;  // gpu event -> flow id
    for (auto& [id, f] : flows)
      if (f.s >= 0 && f.f >= 0)
        if (auto it = place.find({{ev[f.f].pid, ev[f.f].tid}, ev[f.f].ts}); it != place.end()) flow_of_gpu[it->second] = id;
    std::vector<int64_t> still;
    for (int64_t g : unlinked) {
      auto fi = flow_of_gpu.find(g);
      if (fi != flow_of_gpu.end()) {
        const Event& s = ev[flows[fi->second].s];
        auto it = place.find({{s.pid, s.tid}, s.ts});
        if (it != place.end() && (ev[it->second].kind == Kind::runtime || ev[it->second].kind == Kind::driver)) {
          ev[g].parent = it->second;
          h_.add("gpu_linked_by_flow", g, "GPU events linked to their launch by an ac2g flow (no matching correlation)");
          continue;
        }
      }
      still.push_back(g);
    }
    unlinked.swap(still);
  }
  if (!unlinked.empty())
    h_.add("gpu_without_launch", unlinked.front(),
           fmt::format("GPU events (kernel/memcpy/memset) with no runtime call of their correlation id in the trace, "
                       "e.g. launched before profiling started: {} of {} linked ({:.2f}%)",
                       gpu_work - (int64_t)unlinked.size(), gpu_work,
                       100.0 * (gpu_work - (double)unlinked.size()) / (double)gpu_work),
           (int64_t)unlinked.size());
}

// HTA's rule: a root on another thread of a process (the autograd engine's backward thread,
// a data-loader thread) belongs under the innermost annotation of the main thread that is open
// when it starts, so that a step's subtree holds all its work.
void ProfileTreeBuilder::attach_thread_roots() {
  auto& ev = t_.events;
  // Main thread of each process: the one holding ProfilerStep annotations, else tid == pid.
  std::unordered_map<Scalar, Scalar, ScalarHash> main_thread;
  for (const Event& e : ev)
    if (is_step_marker(e)) main_thread.emplace(e.pid, e.tid);
  for (const Event& e : ev)
    if (is_host_node(e.kind) && e.pid == e.tid && e.pid.type == Scalar::integer) main_thread.emplace(e.pid, e.tid);
  if (main_thread.empty()) return;

  std::unordered_map<Scalar, std::vector<int64_t>, ScalarHash> annotations, roots;
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    const Event& e = ev[i];
    if (e.ts == kNull || !is_host_node(e.kind) || e.ph == 'E') continue;
    auto m = main_thread.find(e.pid);
    if (m == main_thread.end()) continue;
    if (e.tid == m->second) {
      if ((e.kind == Kind::annotation || is_step_marker(e)) && e.dur != kNull) annotations[e.pid].push_back(i);
    } else if (e.parent < 0) {
      roots[e.pid].push_back(i);
    }
  }
  auto by_start = [&](int64_t a, int64_t b) {
    return ev[a].ts != ev[b].ts ? ev[a].ts < ev[b].ts : ev[a].dur != ev[b].dur ? ev[a].dur > ev[b].dur : a < b;
  };
  int64_t orphans = 0, example = -1;
  for (auto& [pid, rs] : roots) {
    auto& anns = annotations[pid];
    if (anns.empty()) continue;  // nothing to attach to: these roots are simply roots
    std::sort(anns.begin(), anns.end(), by_start);
    std::sort(rs.begin(), rs.end(), by_start);
    std::vector<int64_t> open;  // annotations containing the current time, outermost first
    size_t a = 0;
    for (int64_t r : rs) {
      while (a < anns.size() && ev[anns[a]].ts <= ev[r].ts) {
        while (!open.empty() && ev[open.back()].end() <= ev[anns[a]].ts) open.pop_back();
        open.push_back(anns[a++]);
      }
      while (!open.empty() && ev[open.back()].end() <= ev[r].ts) open.pop_back();
      if (!open.empty()) {
        ev[r].parent = open.back();
      } else {
        ++orphans;
        if (example < 0) example = r;
      }
    }
  }
  if (orphans)
    h_.add("thread_root_unattached", example,
           "roots on secondary threads with no main-thread annotation open at their start: left as roots", orphans);
}

void ProfileTreeBuilder::compute_depths() {
  auto& ev = t_.events;
  const int64_t n = (int64_t)ev.size();
  std::vector<int32_t> depth(n, -1);
  std::vector<int64_t> chain;
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = i;
    chain.clear();
    // Parents always come from an earlier stage (host stack, launch, annotation), so chains
    // end at a root; the length bound only guards against a builder bug.
    while (depth[j] < 0 && ev[j].parent >= 0 && (int64_t)chain.size() < n) {
      chain.push_back(j);
      j = ev[j].parent;
    }
    if (depth[j] < 0) depth[j] = 0;
    int32_t d = depth[j];
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) depth[*it] = ++d;
  }
  for (int64_t i = 0; i < n; ++i) ev[i].depth = depth[i];
}

void ProfileTreeBuilder::assign_steps() {
  auto& ev = t_.events;
  struct Step { int64_t ts, end, n; };
  std::vector<Step> steps;
  for (const Event& e : ev)
    if (is_step_marker(e) && e.dur != kNull && e.ts != kNull) steps.push_back({e.ts, e.ts + e.dur, *profiler_step_number(e.name)});
  if (steps.empty()) return;
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.ts < b.ts; });
  for (Event& e : ev) {
    if (!is_host_node(e.kind) || e.ts == kNull || e.ph == 'E') continue;
    auto it = std::upper_bound(steps.begin(), steps.end(), e.ts, [](int64_t ts, const Step& s) { return ts < s.ts; });
    if (it != steps.begin() && e.ts < std::prev(it)->end) e.step = std::prev(it)->n;
  }
  for (Event& e : ev)
    if (is_gpu_side(e.kind) && e.parent >= 0) e.step = ev[e.parent].step;
}

// A backward op's forward op: by the fwdbwd flow when the trace has one, else as PyTorch's
// profiler draws those flows: the last forward op (by start) with the same "Sequence number".
// Ops that create no autograd node only peek the counter, so several share a number and the
// one that created the node is the last of them (aten::to, _to_copy, ..., aten::gather).
void ProfileTreeBuilder::link_backward_to_forward() {
  auto& ev = t_.events;
  bool any_backward = false;
  for (const Event& e : ev) any_backward |= e.backward;
  if (!any_backward) return;

  std::unordered_map<PlaceKey, std::vector<int64_t>, PlaceKeyHash> ops_at;
  std::unordered_map<int64_t, int64_t> forward_of_seq;
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> fwdbwd;  // id -> (s, f)
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    const Event& e = ev[i];
    if (e.kind == Kind::cpu_op && e.ts != kNull) {
      ops_at[{{e.pid, e.tid}, e.ts}].push_back(i);
      if (e.seq != kNull && !e.backward) {
        auto [it, fresh] = forward_of_seq.emplace(e.seq, i);
        const Event& prev = ev[it->second];
        if (!fresh && (e.ts > prev.ts || (e.ts == prev.ts && e.depth > prev.depth))) it->second = i;
      }
    } else if (e.kind == Kind::flow && e.cat == "fwdbwd" && e.flow_id.type == Scalar::integer) {
      auto& p = fwdbwd.emplace(e.flow_id.i, std::pair<int64_t, int64_t>{-1, -1}).first->second;
      (e.ph == 's' ? p.first : p.second) = i;
    }
  }
  auto outermost_at = [&](const Event& flow, bool want_backward) -> int64_t {
    auto it = ops_at.find({{flow.pid, flow.tid}, flow.ts});
    if (it == ops_at.end()) return -1;
    int64_t best = -1;
    for (int64_t i : it->second)
      if ((!want_backward || ev[i].backward) && (best < 0 || ev[i].depth < ev[best].depth)) best = i;
    return best;
  };
  for (auto& [id, sf] : fwdbwd) {
    if (sf.first < 0 || sf.second < 0) continue;
    int64_t f = outermost_at(ev[sf.first], false), b = outermost_at(ev[sf.second], true);
    if (f >= 0 && b >= 0) ev[b].fwd = f;
  }
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    Event& e = ev[i];
    if (!e.backward || e.fwd >= 0 || e.kind != Kind::cpu_op || e.seq == kNull) continue;
    if (auto it = forward_of_seq.find(e.seq); it != forward_of_seq.end())
      e.fwd = it->second;
    else
      h_.add("backward_without_forward", i, "backward ops whose forward op (same Sequence number) is not in the trace");
  }
}

void ProfileTreeBuilder::find_launchers() {
  auto& ev = t_.events;
  for (int64_t i = 0; i < (int64_t)ev.size(); ++i) {
    const Event& g = ev[i];
    if (!(g.kind == Kind::kernel || g.kind == Kind::memcpy || g.kind == Kind::memset) || g.parent < 0) continue;
    int64_t runtime = g.parent, launcher = runtime;
    for (int64_t p = ev[runtime].parent; p >= 0; p = ev[p].parent) {
      if (ev[p].kind == Kind::cpu_op) {
        if (ev[p].name == "execute") continue;  // pass-through op (conv_bn_fused -> execute -> launch)
        launcher = p;
        break;
      }
      if (ev[p].kind != Kind::python) break;
    }
    launches_.push_back({i, runtime, launcher});
  }
}

}  // namespace tlsql
