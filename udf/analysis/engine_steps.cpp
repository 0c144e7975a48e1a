#include "udf/analysis/engine_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "udf/interval_union.h"
#include "udf/tree/parent_walk.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

StepName::StepName(std::string_view name)
    : annotation(serving_step(Kind::annotation, name)),
      frame(serving_step(Kind::python, name)),
      graph_launch(is_graph_launch(name)),
      gpu_wait(gpu_wait_call(name)) {
  // "ProfilerStep#N", written as the step column's N is (the mfu report's rule: name =
  // 'ProfilerStep#' || step): no sign but a minus, no leading zeros, nothing after.
  constexpr std::string_view prefix = "ProfilerStep#";
  if (!name.starts_with(prefix)) return;
  const std::string_view digits = name.substr(prefix.size());
  int64_t n = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec == std::errc() && p == digits.data() + digits.size() && fmt::format("{}", n) == digits) profiler_step = n;
}

void StepRows::add(int64_t uid, int64_t parent, int64_t trace, Kind kind, std::string_view name, int64_t ts,
                   int64_t end, ThreadKey thread, int64_t step) {
  auto [it, fresh] = by_name_.try_emplace(std::string(name), (int32_t)names_.size());
  if (fresh) names_.emplace_back(name);
  uid_.push_back(uid), parent_.push_back(parent), trace_.push_back(trace), kind_.push_back(kind);
  ts_.push_back(ts), end_.push_back(end), thread_.push_back(thread), step_.push_back(step);
  name_.push_back(it->second), launch_.push_back(-1);
}

const char* source_name(EngineStep::Source s) {
  switch (s) {
    case EngineStep::annotation: return "annotation";
    case EngineStep::frame: return "frame";
    case EngineStep::loop: return "loop";
    case EngineStep::profiler_step: return "profiler_step";
  }
  return "?";
}

namespace {

struct ThreadOf {
  int64_t trace;
  ThreadKey t;
  bool operator==(const ThreadOf&) const = default;
};
struct ThreadHash {
  size_t operator()(const ThreadOf& k) const {
    uint64_t h = (uint64_t)k.trace * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)k.t.pid + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h ^= (uint64_t)k.t.tid + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return (size_t)(h ^ k.t.text);
  }
};

// Whether trace `t` is one `wanted` accepts, remembering the last answer (rows come trace by trace).
struct TraceFilter {
  const std::function<bool(int64_t)>& wanted;
  int64_t last = kNull;
  bool answer = true;
  bool operator()(int64_t t) {
    if (!wanted) return true;
    if (t != last) last = t, answer = wanted(t);
    return answer;
  }
};

EngineStep serving_step_of(const StepInput& rows, size_t r, EngineStep::Source source, const ServingStep& st) {
  EngineStep s;
  s.trace = rows.trace(r), s.uid = rows.uid(r), s.row = (int64_t)r, s.ts = rows.ts(r), s.end = rows.end(r);
  s.source = source, s.tokens = st.tokens, s.prefill = st.prefill, s.decode = st.decode, s.phase = st.phase();
  return s;
}

// The outermost candidates of `source` (annotations or frames): those with no candidate of the
// same source above them.
std::vector<uint32_t> outermost(const StepInput& rows, const std::vector<uint32_t>& candidates) {
  if (candidates.empty()) return {};
  std::vector<uint8_t> mark(rows.size(), 0);
  for (uint32_t c : candidates) mark[c] = 1;
  const std::vector<int32_t> at = nearest_above(
      rows.size(), [&](size_t k) { return rows.parent(k); }, [&](size_t k) { return mark[k] != 0; });
  std::vector<uint32_t> out;
  for (uint32_t c : candidates)
    if (const int64_t p = rows.parent(c); p < 0 || at[(size_t)p] < 0) out.push_back(c);
  return out;
}

// Adds GPU row `r` to step `s`'s numbers; `iv` collects its intervals.
void add_gpu(const StepInput& rows, size_t r, EngineStep& s, std::vector<std::pair<int64_t, int64_t>>& iv) {
  const int64_t ts = rows.ts(r), end = rows.end(r);
  if (rows.kind(r) == Kind::kernel) ++s.kernels;
  if (ts != kNull) s.gpu_start = s.gpu_start == kNull ? ts : std::min(s.gpu_start, ts);
  if (end != kNull) s.gpu_end = s.gpu_end == kNull ? end : std::max(s.gpu_end, end);
  if (ts != kNull && end != kNull) iv.emplace_back(ts, end);
}

}  // namespace

std::vector<LoopRow> loop_rows(const StepInput& rows, const std::function<bool(int64_t)>& wanted) {
  const size_t n = rows.size();
  // The threads that launch graphs.
  std::unordered_map<ThreadOf, int32_t, ThreadHash> threads;
  TraceFilter in{wanted};
  for (size_t i = 0; i < n; ++i)
    if (launch_call_kind(rows.kind(i)) && in(rows.trace(i)) && rows.name(i).graph_launch)
      threads.try_emplace({rows.trace(i), rows.thread(i)}, (int32_t)threads.size());
  if (threads.empty()) return {};
  // Their host events with a start, and the ends of their GPU waits.
  std::vector<std::pair<uint32_t, int32_t>> host;  // (row, thread)
  std::vector<std::vector<int64_t>> ends(threads.size());
  for (size_t i = 0; i < n; ++i) {
    const Kind k = rows.kind(i);
    if (!loop_host_kind(k) || rows.ts(i) == kNull || !in(rows.trace(i))) continue;
    auto it = threads.find({rows.trace(i), rows.thread(i)});
    if (it == threads.end()) continue;
    host.emplace_back((uint32_t)i, it->second);
    if (launch_call_kind(k) && rows.name(i).gpu_wait && rows.end(i) != kNull)
      ends[(size_t)it->second].push_back(rows.end(i));
  }
  for (auto& e : ends) std::sort(e.begin(), e.end());
  // k: the waits that ended at or before the event's start (a wait's end sorts before an event
  // starting at that instant: that event is the next turn's). Each turn's step: its first wait by uid.
  std::vector<std::vector<int64_t>> first_wait(threads.size());
  for (size_t t = 0; t < ends.size(); ++t) first_wait[t].assign(ends[t].size() + 1, -1);
  std::vector<LoopRow> out;
  out.reserve(host.size());
  for (auto [r, t] : host) {
    const auto& e = ends[(size_t)t];
    const int64_t k = std::upper_bound(e.begin(), e.end(), rows.ts(r)) - e.begin();
    const bool wait = launch_call_kind(rows.kind(r)) && rows.name(r).gpu_wait;
    if (wait && first_wait[(size_t)t][(size_t)k] < 0) first_wait[(size_t)t][(size_t)k] = r;
    out.push_back({r, k, -1, wait});
  }
  for (size_t j = 0; j < out.size(); ++j) out[j].step = first_wait[(size_t)host[j].second][(size_t)out[j].k];
  return out;
}

EngineSteps find_engine_steps(const StepInput& rows) {
  EngineSteps out;
  const size_t n = rows.size();
  if (n > (size_t)INT32_MAX) {
    out.error = "over 2^31 events";
    return out;
  }
  if (auto at = parent_loop(n, [&](size_t k) { return rows.parent(k); })) {
    out.error = cycle_at(rows.uid(*at));
    return out;
  }

  // 1. Annotation and frame steps: the outermost of each source; a trace with annotations uses
  // those, else its frames.
  std::vector<uint32_t> candidates[2];  // annotations, frames
  for (size_t i = 0; i < n; ++i) {
    const Kind k = rows.kind(i);
    if (k == Kind::annotation && rows.name(i).annotation) candidates[0].push_back((uint32_t)i);
    if (k == Kind::python && rows.name(i).frame) candidates[1].push_back((uint32_t)i);
  }
  const std::vector<uint32_t> found[2] = {outermost(rows, candidates[0]), outermost(rows, candidates[1])};
  std::map<int64_t, uint8_t> sources;  // trace -> bit 1: annotation steps, 2: frame steps
  for (int s = 0; s < 2; ++s)
    for (uint32_t r : found[s]) sources[rows.trace(r)] |= (uint8_t)(1 << s);
  std::vector<EngineStep>& steps = out.steps;
  for (uint32_t r : found[0])
    steps.push_back(serving_step_of(rows, r, EngineStep::annotation, *rows.name(r).annotation));
  for (uint32_t r : found[1])
    if (!(sources[rows.trace(r)] & 1))
      steps.push_back(serving_step_of(rows, r, EngineStep::frame, *rows.name(r).frame));
  const size_t tree_steps = steps.size();

  // 2. Loop steps, in the traces with neither: each turn that a wait ends.
  const std::vector<LoopRow> loop = loop_rows(rows, [&](int64_t t) { return !sources.count(t); });
  std::unordered_map<int64_t, size_t> turn;  // the wait's row -> its step (before numbering)
  for (const LoopRow& l : loop) {
    if (l.step < 0) continue;
    auto [it, fresh] = turn.try_emplace(l.step, steps.size());
    if (fresh) {
      EngineStep s;
      const auto w = (size_t)l.step;
      s.trace = rows.trace(w), s.uid = rows.uid(w), s.row = l.step, s.ts = rows.ts(l.row), s.end = rows.end(w);
      s.source = EngineStep::loop;
      steps.push_back(s);
    }
    EngineStep& s = steps[it->second];
    s.ts = std::min(s.ts, rows.ts(l.row));
  }

  // Numbered per trace by start, then uid (a step without a start first, as SQLite sorts NULL).
  {
    std::vector<size_t> order(steps.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(steps[a].trace, steps[a].ts, steps[a].uid) < std::tie(steps[b].trace, steps[b].ts, steps[b].uid);
    });
    for (size_t j = 0; j < order.size(); ++j)
      steps[order[j]].iteration =
          j > 0 && steps[order[j - 1]].trace == steps[order[j]].trace ? steps[order[j - 1]].iteration + 1 : 0;
  }

  // 3. The traces with no serving step: their ProfilerSteps, numbered N.
  std::set<int64_t> serving;
  for (const EngineStep& s : steps) serving.insert(s.trace);
  bool profiler = false;
  for (size_t i = 0; i < n; ++i) {
    const Kind k = rows.kind(i);
    if ((k != Kind::annotation && k != Kind::cpu_op) || rows.step(i) == kNull || serving.count(rows.trace(i)) ||
        rows.name(i).profiler_step != rows.step(i))
      continue;
    EngineStep s;
    s.trace = rows.trace(i), s.uid = rows.uid(i), s.row = (int64_t)i, s.ts = rows.ts(i), s.end = rows.end(i);
    s.source = EngineStep::profiler_step, s.iteration = rows.step(i);
    steps.push_back(s);
    profiler = true;
  }

  // All in their final order: by trace, then iteration. index_of: where each step went.
  std::vector<int32_t> index_of(steps.size());
  {
    std::vector<size_t> order(steps.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const EngineStep &x = steps[a], &y = steps[b];
      return std::tie(x.trace, x.iteration, x.ts, x.uid) < std::tie(y.trace, y.iteration, y.ts, y.uid);
    });
    std::vector<EngineStep> sorted;
    sorted.reserve(steps.size());
    for (size_t j = 0; j < order.size(); ++j) index_of[order[j]] = (int32_t)j, sorted.push_back(steps[order[j]]);
    steps = std::move(sorted);
  }
  std::vector<std::pair<int64_t, int64_t>> iv;

  // 4. Members: an annotation's or frame's subtree; a loop step's turn.
  if (!serving.empty()) {
    out.member.assign(n, -1);
    for (size_t j = 0; j < steps.size(); ++j)
      if (steps[j].source == EngineStep::annotation || steps[j].source == EngineStep::frame)
        out.member[(size_t)steps[j].row] = (int32_t)j;
    if (tree_steps > 0) {
      const std::vector<int32_t> at = nearest_above(
          n, [&](size_t k) { return rows.parent(k); }, [&](size_t k) { return out.member[k] >= 0; });
      for (size_t i = 0; i < n; ++i)
        if (at[i] >= 0) out.member[i] = out.member[(size_t)at[i]];  // (a step's own row keeps its index)
    }
    for (const LoopRow& l : loop)
      if (l.step >= 0) out.member[l.row] = index_of[turn.at(l.step)];

    // 5. Their GPU work: members (annotation, frame steps), or launched by members (loop steps);
    // and the graph launches among the members.
    for (size_t i = 0; i < n; ++i) {
      const Kind k = rows.kind(i);
      int32_t s = out.member[i];
      if (is_gpu_work(k)) {
        if (s < 0 && !turn.empty())
          if (const int64_t r = rows.launch(i);
              r >= 0 && out.member[(size_t)r] >= 0 && steps[(size_t)out.member[(size_t)r]].source == EngineStep::loop)
            s = out.member[(size_t)r];
        if (s >= 0) out.gpu.emplace_back((uint32_t)i, s);
      } else if (s >= 0 && launch_call_kind(k) && rows.name(i).graph_launch) {
        ++steps[(size_t)s].graph_replays;
      }
    }
    std::stable_sort(out.gpu.begin(), out.gpu.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    for (size_t j = 0; j < out.gpu.size();) {
      EngineStep& s = steps[(size_t)out.gpu[j].second];
      iv.clear();
      for (const int32_t at = out.gpu[j].second; j < out.gpu.size() && out.gpu[j].second == at; ++j)
        add_gpu(rows, out.gpu[j].first, s, iv);
      s.gpu_busy = merge_union(iv);
    }
  }

  // 6. A ProfilerStep's GPU work and graph launches: those whose step (a GPU event's: its launch's)
  // is its N. Steps are keyed by (trace, N, start): a trace may hold several ProfilerStep#N (a
  // profile of several cycles, scale_trace.py's copies), and a row belongs to the one of them
  // whose start is the latest at or before the row's host time (a GPU event's: its launch call's
  // start), as the loader gave it the step's number (ProfileTreeBuilder::assign_steps). Keyed by
  // (trace, N) alone, every row was added to every step of its number: quadratic time and memory.
  if (profiler) {
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, size_t>>> of;  // (trace, N) -> (start, step)
    for (size_t j = 0; j < steps.size(); ++j)
      if (steps[j].source == EngineStep::profiler_step)
        of[{steps[j].trace, steps[j].iteration}].emplace_back(steps[j].ts, j);
    for (auto& [key, v] : of) std::sort(v.begin(), v.end());
    // The step of a row with number N at host time t (kNull: unknown, the first step of N).
    auto step_at = [](const std::vector<std::pair<int64_t, size_t>>& v, int64_t t) {
      if (v.size() == 1 || t == kNull) return v.front().second;
      auto it = std::upper_bound(v.begin(), v.end(), std::pair(t, SIZE_MAX));
      return it == v.begin() ? v.front().second : std::prev(it)->second;
    };
    std::vector<std::vector<std::pair<int64_t, int64_t>>> ivs(steps.size());
    for (size_t i = 0; i < n; ++i) {
      const Kind k = rows.kind(i);
      const bool gpu = is_gpu_work(k);
      if ((!gpu && !launch_call_kind(k)) || rows.step(i) == kNull) continue;
      auto it = of.find({rows.trace(i), rows.step(i)});
      if (it == of.end() || (!gpu && !rows.name(i).graph_launch)) continue;
      const int64_t p = gpu ? rows.parent(i) : -1;
      const size_t j = step_at(it->second, gpu ? (p >= 0 ? rows.ts((size_t)p) : kNull) : rows.ts(i));
      gpu ? add_gpu(rows, i, steps[j], ivs[j]) : (void)++steps[j].graph_replays;
    }
    for (size_t j = 0; j < steps.size(); ++j)
      if (steps[j].source == EngineStep::profiler_step) steps[j].gpu_busy = merge_union(ivs[j]);
  }
  return out;
}

}  // namespace tlsql
