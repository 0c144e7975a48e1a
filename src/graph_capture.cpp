#include "src/graph_capture.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>

#include "src/json_scan.h"
#include "src/kind.h"

namespace tlsql {

std::string launch_geometry(std::string_view args) {
  std::string_view grid = json_scan::find_member(args, "grid"), block = json_scan::find_member(args, "block");
  if (grid.empty() || block.empty()) return {};
  return json_scan::minify(grid) + "|" + json_scan::minify(block);
}

namespace {

// The `kernel` arg of a launch call as text: a JSON string, decoded.
std::optional<std::string> kernel_arg(std::string_view args) {
  std::string_view raw = json_scan::find_member(args, "kernel");
  if (raw.size() < 2 || raw.front() != '"') return std::nullopt;
  if (raw.find('\\') == std::string_view::npos) return std::string(raw.substr(1, raw.size() - 2));
  auto j = nlohmann::json::parse(raw, nullptr, false);
  if (!j.is_string()) return std::nullopt;
  return j.get<std::string>();
}

// A graph of the launch calls `launches` (in node order) and the events above each that `keep`
// says belong to it (walking up from the call; the first refusal ends the walk), parents first
// (by depth, then row), with the lean copy that leaves python frames out. Nodes: rows only.
template <class Keep>
CapturedGraph graph_of_calls(const RowArray& ev, const std::vector<int32_t>& launches, Keep keep) {
  CapturedGraph g;
  std::unordered_map<int32_t, int32_t> local;
  std::vector<int32_t> members;
  for (int32_t l : launches)
    for (int32_t p = l; p >= 0 && (p == l || keep(p)) && local.emplace(p, -1).second; p = ev[p].parent)
      members.push_back(p);
  std::sort(members.begin(), members.end(),
            [&](int32_t a, int32_t b) { return std::make_pair(ev[a].depth, a) < std::make_pair(ev[b].depth, b); });
  std::unordered_map<int32_t, int32_t> lean;  // member -> lean_rows index (python frames: their kept parent's)
  for (int32_t m : members) {
    EventRec r = ev[m];
    auto up = r.parent >= 0 ? local.find(r.parent) : local.end();
    auto lean_up = r.parent >= 0 ? lean.find(r.parent) : lean.end();
    local[m] = (int32_t)g.rows.size();
    r.parent = up != local.end() ? up->second : -1;
    g.rows.push_back(r);
    const int32_t lean_parent = lean_up != lean.end() ? lean_up->second : -1;
    if (r.kind == Kind::python) {
      lean[m] = lean_parent;
      continue;
    }
    lean[m] = (int32_t)g.lean_rows.size();
    r.parent = lean_parent;
    g.lean_rows.push_back(r);
  }
  for (int32_t l : launches) {
    CapturedGraph::Node node;
    node.row = local.at(l), node.lean_row = lean.at(l);
    g.nodes.push_back(std::move(node));
  }
  return g;
}

}  // namespace

std::vector<CapturedGraph> captured_graphs(const LoadedTrace& trace, StringPool& strings, const TextArena& args,
                                           const std::string& file) {
  const RowArray& ev = trace.rows;
  auto name = [&](const EventRec& e) { return e.name == StringPool::kNone ? std::string_view() : strings.get(e.name); };
  // Runtime and driver calls by thread, then start: a capture is one thread's calls between its
  // begin and end calls.
  std::vector<int32_t> calls;
  for (int32_t i = 0; i < (int32_t)ev.size(); ++i) {
    const EventRec& e = ev[i];
    if ((e.kind == Kind::runtime || e.kind == Kind::driver) && e.ts != kNull) calls.push_back(i);
  }
  auto thread_key = [&](int32_t i) {
    return std::make_tuple(ev[i].flags & (EventRec::pid_text | EventRec::tid_text), ev[i].pid, ev[i].tid);
  };
  std::stable_sort(calls.begin(), calls.end(), [&](int32_t a, int32_t b) {
    return std::make_tuple(thread_key(a), ev[a].ts) < std::make_tuple(thread_key(b), ev[b].ts);
  });

  std::vector<CapturedGraph> graphs;
  int32_t capture = 0;
  for (size_t k = 0; k < calls.size();) {
    if (capture_boundary(name(ev[calls[k]])) != 1) {
      ++k;
      continue;
    }
    // The launch calls up to the end-capture call on the same thread (or the thread's last call).
    std::vector<int32_t> launches;
    const size_t k0 = k;
    size_t j = k + 1;
    for (; j < calls.size() && thread_key(calls[j]) == thread_key(calls[k]); ++j) {
      std::string_view n = name(ev[calls[j]]);
      if (capture_boundary(n) != 0) break;
      if (launched_work(n) != Kind::other) launches.push_back(calls[j]);
    }
    const bool ended = j < calls.size() && capture_boundary(name(ev[calls[j]])) == -1;
    k = ended ? j + 1 : j;
    if (!ended) continue;  // an unfinished capture made no graph
    const int32_t index = capture++;
    if (launches.empty()) continue;

    // The launch calls and the events above them that started inside the capture (the model's
    // ops, frames and modules; not the harness around the capture, which the replay's own stack
    // stands for).
    const int64_t begin = ev[calls[k0]].ts;
    CapturedGraph g = graph_of_calls(ev, launches, [&](int32_t p) { return ev[p].ts >= begin; });
    g.file = file;
    g.capture = index;
    std::string buf;
    for (size_t n = 0; n < launches.size(); ++n) {
      const EventRec& l = ev[launches[n]];
      CapturedGraph::Node& node = g.nodes[n];
      node.work = launched_work(name(l));
      std::string_view a = args_of(args, l, buf);
      if (node.work == Kind::kernel)
        if (auto k = kernel_arg(a)) node.kernel = strings.intern(*k);
      node.geometry = launch_geometry(a);
    }
    graphs.push_back(std::move(g));
  }
  return graphs;
}

EagerRuns::EagerRuns(const RowArray& ev, const StringPool& strings, const TextArena& args) : ev_(ev), args_(args) {
  std::map<std::pair<int32_t, Id32>, uint32_t> index;  // (device, stream) -> streams_ index
  for (int32_t i = 0; i < (int32_t)ev.size(); ++i) {
    const EventRec& e = ev[i];
    if (!is_gpu_work(e.kind) || e.parent < 0 || e.ts == kNull) continue;
    const EventRec& call = ev[e.parent];
    if (call.name != StringPool::kNone && is_graph_launch(strings.get(call.name))) continue;
    auto [it, fresh] = index.try_emplace({e.device, e.stream}, (uint32_t)streams_.size());
    if (fresh) streams_.emplace_back();
    streams_[it->second].push_back(i);
  }
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    auto& rows = streams_[s];
    std::stable_sort(rows.begin(), rows.end(), [&](int32_t a, int32_t b) { return ev[a].ts < ev[b].ts; });
    for (uint32_t k = 0; k < rows.size(); ++k) starts_[ev[rows[k]].name].emplace_back(s, k);
  }
}

std::optional<CapturedGraph> EagerRuns::graph_for(const std::vector<ReplayEvent>& replay, int64_t& runs) {
  runs = 0;
  if (budget_ < 0) {
    runs = -1;
    return std::nullopt;
  }
  if (replay.empty()) return std::nullopt;
  auto it = starts_.find(replay[0].name);
  if (it == starts_.end()) return std::nullopt;
  // The op that launched a GPU event (the nearest cpu_op above its call) and its shapes: what two
  // runs must share to be the same graph's work.
  // (Every step up the tree is charged to the budget too: runs under a deep python stack.)
  auto launcher = [&](int32_t gpu) {
    int32_t p = ev_[gpu].parent;
    while (p >= 0 && ev_[p].kind != Kind::cpu_op) p = ev_[p].parent, --budget_;
    return p;
  };
  auto signature = [&](int32_t gpu) {
    const int32_t op = launcher(gpu);
    if (op < 0) return std::string("-");
    std::string buf;
    std::string_view a = args_of(args_, ev_[op], buf);
    return std::to_string(ev_[op].name) + "|" + std::string(json_scan::find_member(a, "Input Dims"));
  };
  std::vector<int32_t> first;
  std::vector<std::string> first_signature;
  for (auto [s, k] : it->second) {
    const auto& rows = streams_[s];
    if (k + replay.size() > rows.size()) continue;
    bool same = true;
    for (size_t n = 0; n < replay.size() && same; ++n, --budget_)
      same = ev_[rows[k + n]].name == replay[n].name && ev_[rows[k + n]].kind == replay[n].work;
    if (budget_ < 0) {
      runs = -1;
      return std::nullopt;
    }
    if (!same) continue;
    budget_ -= (int64_t)replay.size() * 8;  // the signatures below cost more than a comparison
    std::vector<std::string> sig;
    for (size_t n = 0; n < replay.size(); ++n) sig.push_back(signature(rows[k + n]));
    if (budget_ < 0) {
      runs = -1;
      return std::nullopt;
    }
    if (runs++ == 0) {
      first.assign(rows.begin() + k, rows.begin() + k + (ptrdiff_t)replay.size());
      first_signature = std::move(sig);
    } else if (sig != first_signature) {
      return std::nullopt;
    }
  }
  if (runs == 0) return std::nullopt;
  runs = 1;  // one graph of work, however many times it ran
  std::vector<int32_t> calls;
  for (int32_t g : first) calls.push_back(ev_[g].parent);
  // The lowest common ancestor of the calls, whose own stack the replay's stands for; for one
  // call, the event above its op.
  int32_t stop = -1;
  if (calls.size() == 1) {
    const int32_t op = launcher(first[0]);
    stop = op >= 0 ? ev_[op].parent : -1;
  } else {
    std::unordered_map<int32_t, int32_t> up;  // ancestor of calls[0] -> its distance
    int32_t d = 0;
    for (int32_t p = calls[0]; p >= 0; p = ev_[p].parent) up.emplace(p, d++), --budget_;
    int32_t far = 0;
    bool common = true;
    for (size_t n = 1; n < calls.size() && common; ++n) {
      int32_t p = calls[n];
      while (p >= 0 && !up.count(p) && budget_ >= 0) p = ev_[p].parent, --budget_;
      if (budget_ < 0) {
        runs = -1;
        return std::nullopt;
      }
      if (p < 0)
        common = false;
      else
        far = std::max(far, up.at(p));
    }
    if (common)
      for (int32_t p = calls[0]; p >= 0; p = ev_[p].parent)
        if (up.at(p) == far) stop = p;
  }
  CapturedGraph g = graph_of_calls(ev_, calls, [&](int32_t p) { return p != stop; });
  g.eager_start = first[0];
  std::string buf;
  for (size_t n = 0; n < first.size(); ++n) {
    const EventRec& e = ev_[first[n]];
    g.nodes[n].work = e.kind, g.nodes[n].kernel = e.name;
    g.nodes[n].geometry = launch_geometry(args_of(args_, e, buf));
  }
  return g;
}

ReplayMatch match_replay(const std::vector<ReplayEvent>& replay, const std::vector<CapturedGraph>& graphs,
                         std::optional<int64_t> batch) {
  struct Candidate {
    int32_t graph;
    int64_t same_geometry;
    std::vector<int32_t> node_of;
  };
  std::vector<Candidate> found;
  for (int32_t gi = 0; gi < (int32_t)graphs.size(); ++gi) {
    const CapturedGraph& g = graphs[gi];
    if (g.nodes.size() != replay.size() || replay.empty()) continue;
    bool named = true;
    for (const auto& n : g.nodes)
      if (n.work == Kind::kernel && n.kernel == StringPool::kNone) named = false;
    auto key = [&](Kind work, uint32_t kernel) {
      return std::make_pair(work, named && work == Kind::kernel ? kernel : StringPool::kNone);
    };
    // The nodes of each key in launch order, and how many of them replay events have taken.
    std::map<std::pair<Kind, uint32_t>, std::pair<std::vector<int32_t>, size_t>> by_key;
    for (int32_t n = 0; n < (int32_t)g.nodes.size(); ++n)
      by_key[key(g.nodes[n].work, g.nodes[n].kernel)].first.push_back(n);
    Candidate c{gi, 0, {}};
    c.node_of.reserve(replay.size());
    bool ok = true;
    for (const ReplayEvent& e : replay) {
      auto it = by_key.find(key(e.work, e.name));
      if (it == by_key.end() || it->second.second >= it->second.first.size()) {
        ok = false;
        break;
      }
      const int32_t n = it->second.first[it->second.second++];
      c.node_of.push_back(n);
      if (!e.geometry.empty() && e.geometry == g.nodes[n].geometry) ++c.same_geometry;
    }
    if (ok) found.push_back(std::move(c));
  }
  ReplayMatch m;
  m.candidates = (int32_t)found.size();
  if (found.empty()) return m;
  int64_t best = 0;
  for (const Candidate& c : found) best = std::max(best, c.same_geometry);
  std::erase_if(found, [&](const Candidate& c) { return c.same_geometry != best; });
  if (found.size() > 1 && batch) {
    auto of_batch = [&](const Candidate& c) { return graphs[c.graph].batch_size == batch; };
    if (std::any_of(found.begin(), found.end(), of_batch))
      std::erase_if(found, [&](const Candidate& c) { return !of_batch(c); });
  }
  if (found.size() != 1) return m;
  m.graph = found.front().graph;
  m.node_of = std::move(found.front().node_of);
  return m;
}

}  // namespace tlsql
