#include "src/graph_capture.h"

#include <algorithm>
#include <cstdlib>
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

// CapturedGraph::content: each kept row's kind, name, input shapes and types and parent, then each
// node's row. (Name ids compare within the one string pool the capture traces share.)
uint64_t content_of(const CapturedGraph& g, const TextArena& args) {
  std::string text, buf;
  for (const EventRec& r : g.lean_rows) {
    std::string_view a = args_of(args, r, buf);
    text += std::to_string((int)r.kind) + ":" + std::to_string(r.name) + ":" + std::to_string(r.parent) + ":";
    text += json_scan::find_member(a, "Input Dims");
    text += ":";
    text += json_scan::find_member(a, "Input type");
    text += "\n";
  }
  for (const auto& n : g.nodes) text += std::to_string(n.lean_row) + ",";
  return std::hash<std::string>{}(text);
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
    g.content = content_of(g, args);
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

int32_t near_bound(size_t nodes, bool named) {
  if (!named || nodes < 8) return 0;
  return (int32_t)std::clamp<size_t>(nodes / 32, 1, 32);
}

namespace {

constexpr int32_t kMaxBound = 32;  // near_bound's largest

// A node's or event's pairing key: its work kind, and its kernel's name when the graph records them.
uint64_t key_of(Kind work, uint32_t kernel, bool named) {
  return (uint64_t)(uint8_t)work << 32 | (named && work == Kind::kernel ? kernel : StringPool::kNone);
}

// (key, count) by key of a sequence of keys.
std::vector<std::pair<uint64_t, int32_t>> count_keys(std::vector<uint64_t> keys) {
  std::sort(keys.begin(), keys.end());
  std::vector<std::pair<uint64_t, int32_t>> out;
  for (uint64_t k : keys) {
    if (out.empty() || out.back().first != k) out.emplace_back(k, 0);
    ++out.back().second;
  }
  return out;
}

}  // namespace

GraphMatcher::GraphMatcher(const std::vector<CapturedGraph>& graphs) : graphs_(graphs) {
  shapes_.resize(graphs.size());
  for (size_t gi = 0; gi < graphs.size(); ++gi) {
    Shape& sh = shapes_[gi];
    for (const auto& n : graphs[gi].nodes)
      if (n.work == Kind::kernel && n.kernel == StringPool::kNone) sh.named = false;
    std::vector<uint64_t> keys;
    for (const auto& n : graphs[gi].nodes) keys.push_back(key_of(n.work, n.kernel, sh.named));
    for (const auto& n : graphs[gi].nodes) sh.geometry = sh.geometry || !n.geometry.empty();
    sh.counts = count_keys(std::move(keys));
    if (!graphs[gi].nodes.empty()) by_size_.emplace_back(graphs[gi].nodes.size(), (int32_t)gi);
  }
  std::sort(by_size_.begin(), by_size_.end());
}

ReplayPairing GraphMatcher::pair(const std::vector<ReplayEvent>& replay, int32_t g) const {
  const CapturedGraph& graph = graphs_[(size_t)g];
  const bool named = shapes_[(size_t)g].named;
  std::unordered_map<uint64_t, std::pair<std::vector<int32_t>, std::vector<int32_t>>> by_key;  // (nodes, events)
  for (int32_t n = 0; n < (int32_t)graph.nodes.size(); ++n)
    by_key[key_of(graph.nodes[(size_t)n].work, graph.nodes[(size_t)n].kernel, named)].first.push_back(n);
  for (int32_t e = 0; e < (int32_t)replay.size(); ++e)
    by_key[key_of(replay[(size_t)e].work, replay[(size_t)e].name, named)].second.push_back(e);
  ReplayPairing p;
  p.node_of.assign(replay.size(), -1);
  std::vector<char> paired(graph.nodes.size(), 0);
  for (auto& [key, lists] : by_key) {
    const auto& [nodes, events] = lists;
    if (nodes.size() == events.size()) {
      for (size_t i = 0; i < nodes.size(); ++i) p.node_of[(size_t)events[i]] = nodes[i], paired[(size_t)nodes[i]] = 1;
      continue;
    }
    // The shorter list pairs with as many of the longer, skipping s of them, monotone, at the
    // least sum of |event index - node index|: f[i][t] is the cost of the first i of the shorter
    // paired with the first i + t of the longer, t of those skipped.
    const bool fewer_events = events.size() < nodes.size();
    const std::vector<int32_t>& a = fewer_events ? events : nodes;
    const std::vector<int32_t>& b = fewer_events ? nodes : events;
    const size_t s = b.size() - a.size(), w = s + 1;
    constexpr int64_t kInf = INT64_MAX / 4;
    std::vector<int64_t> f((a.size() + 1) * w, kInf);
    std::vector<char> paired_last((a.size() + 1) * w, 0);  // how f[i][t] was reached: 1 = by a pair
    f[0] = 0;
    for (size_t i = 0; i <= a.size(); ++i)
      for (size_t t = 0; t <= s; ++t) {
        int64_t& here = f[i * w + t];
        if (i > 0 && f[(i - 1) * w + t] < kInf) {
          const int64_t c = f[(i - 1) * w + t] + std::abs((int64_t)a[i - 1] - (int64_t)b[i - 1 + t]);
          if (c < here) here = c, paired_last[i * w + t] = 1;
        }
        if (t > 0 && f[i * w + t - 1] <= here) here = f[i * w + t - 1], paired_last[i * w + t] = 0;
      }
    for (size_t i = a.size(), t = s; i > 0;) {
      if (paired_last[i * w + t]) {
        const int32_t ev = fewer_events ? a[i - 1] : b[i - 1 + t], node = fewer_events ? b[i - 1 + t] : a[i - 1];
        p.node_of[(size_t)ev] = node, paired[(size_t)node] = 1;
        --i;
      } else {
        --t;
      }
    }
  }
  for (int32_t n = 0; n < (int32_t)graph.nodes.size(); ++n)
    if (!paired[(size_t)n]) p.missing.push_back(n);
  return p;
}

ReplayMatch GraphMatcher::match(const std::vector<ReplayEvent>& replay, std::optional<int64_t> batch) {
  ReplayMatch m;
  if (replay.empty()) return m;
  std::vector<std::pair<uint64_t, int32_t>> counts[2];  // the replay's keys without and with kernel names
  for (int named = 0; named < 2; ++named) {
    std::vector<uint64_t> keys;
    for (const ReplayEvent& e : replay) keys.push_back(key_of(e.work, e.name, named));
    counts[named] = count_keys(std::move(keys));
  }
  // Graphs within reach: as many nodes as events give or take the bound, and the counts of each
  // key, node against event, differ by at most the bound in all.
  struct Candidate {
    int32_t graph, distance;
  };
  std::vector<Candidate> found;
  const size_t size = replay.size();
  auto it = std::lower_bound(by_size_.begin(), by_size_.end(),
                             std::make_pair(size > (size_t)kMaxBound ? size - kMaxBound : 0, INT32_MIN));
  for (; it != by_size_.end() && it->first <= size + kMaxBound; ++it) {
    const int32_t gi = it->second;
    const Shape& sh = shapes_[(size_t)gi];
    const int64_t bound = near_bound(it->first, sh.named);
    if (std::abs((int64_t)it->first - (int64_t)size) > bound) continue;
    const auto& mine = counts[sh.named];
    int64_t d = 0;
    size_t x = 0, y = 0;
    while ((x < sh.counts.size() || y < mine.size()) && d <= bound) {
      if (y == mine.size() || (x < sh.counts.size() && sh.counts[x].first < mine[y].first))
        d += sh.counts[x++].second;
      else if (x == sh.counts.size() || mine[y].first < sh.counts[x].first)
        d += mine[y++].second;
      else
        d += std::abs(sh.counts[x++].second - mine[y++].second);
    }
    budget -= (int64_t)(x + y);
    if (budget < 0) {
      m.candidates = -1;
      return m;
    }
    if (d <= bound) found.push_back({gi, (int32_t)d});
  }
  m.candidates = (int32_t)found.size();
  if (found.empty()) return m;
  int32_t best = INT32_MAX;
  for (const Candidate& c : found) best = std::min(best, c.distance);
  std::erase_if(found, [&](const Candidate& c) { return c.distance != best; });
  m.distance = best;
  // Grid and block: the most paired events with their node's.
  // (CUDA's launch calls record none: thousands of graphs that tie by their kernel counts are not
  // paired for nothing.)
  bool geometry = false;
  for (const ReplayEvent& e : replay) geometry = geometry || !e.geometry.empty();
  bool recorded = false;
  for (const Candidate& c : found) recorded = recorded || shapes_[(size_t)c.graph].geometry;
  geometry = geometry && recorded;
  if (found.size() > 1 && geometry) {
    std::vector<int64_t> same(found.size(), 0);
    for (size_t c = 0; c < found.size(); ++c) {
      const CapturedGraph& g = graphs_[(size_t)found[c].graph];
      const ReplayPairing p = pair(replay, found[c].graph);
      budget -= (int64_t)replay.size();
      for (size_t e = 0; e < replay.size(); ++e)
        if (p.node_of[e] >= 0 && !replay[e].geometry.empty() &&
            replay[e].geometry == g.nodes[(size_t)p.node_of[e]].geometry)
          ++same[c];
    }
    const int64_t most = *std::max_element(same.begin(), same.end());
    std::vector<Candidate> kept;
    for (size_t c = 0; c < found.size(); ++c)
      if (same[c] == most) kept.push_back(found[c]);
    found = std::move(kept);
  }
  if (found.size() > 1 && batch) {
    auto of_batch = [&](const Candidate& c) { return graphs_[(size_t)c.graph].batch_size == batch; };
    if (std::any_of(found.begin(), found.end(), of_batch))
      std::erase_if(found, [&](const Candidate& c) { return !of_batch(c); });
  }
  for (const Candidate& c : found) m.graphs.push_back(c.graph);
  std::sort(m.graphs.begin(), m.graphs.end());
  const auto& first = graphs_[(size_t)m.graphs.front()].nodes;
  for (int32_t g : m.graphs) {
    const auto& nodes = graphs_[(size_t)g].nodes;
    m.alike = m.alike && graphs_[(size_t)g].content == graphs_[(size_t)m.graphs.front()].content &&
              nodes.size() == first.size() &&
              std::equal(nodes.begin(), nodes.end(), first.begin(), [](const auto& a, const auto& b) {
                return a.work == b.work && a.kernel == b.kernel && a.geometry == b.geometry;
              });
  }
  return m;
}

std::vector<int32_t> settle_ties_by_order(const std::vector<TiedReplay>& tied) {
  // Each distinct set of graphs numbered once (replays of one distinct replay share theirs), then
  // the tied replays by (scope, set, launch order).
  std::map<std::vector<int32_t>, int32_t> set_ids;
  std::unordered_map<const std::vector<int32_t>*, int32_t> id_of;
  std::vector<int32_t> set(tied.size());
  for (size_t i = 0; i < tied.size(); ++i) {
    auto [it, fresh] = id_of.try_emplace(tied[i].graphs, 0);
    if (fresh) it->second = set_ids.try_emplace(*tied[i].graphs, (int32_t)set_ids.size()).first->second;
    set[i] = it->second;
  }
  std::vector<size_t> order(tied.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(tied[a].scope, set[a], tied[a].at) < std::tie(tied[b].scope, set[b], tied[b].at);
  });
  std::vector<int32_t> out(tied.size(), -1);
  for (size_t k = 0; k < order.size();) {
    const TiedReplay& t = tied[order[k]];
    size_t j = k;
    while (j < order.size() && tied[order[j]].scope == t.scope && set[order[j]] == set[order[k]]) ++j;
    const size_t n = t.graphs->size(), m = j - k;
    if (n > 0 && (t.alike ? m % n == 0 : t.scope >= 0 && m == n))
      for (size_t x = k; x < j; ++x) out[order[x]] = (*t.graphs)[(x - k) % n];
    k = j;
  }
  return out;
}

std::string brief_name(std::string_view name) {
  name = name.substr(0, std::min(name.find('('), name.find('<')));
  if (name.size() <= 60) return std::string(name);
  return std::string(name.substr(0, 57)) + "...";
}

}  // namespace tlsql
