// optimizable_events(trace [, top [, schema]]): torch.profiler._utils.BasicEvaluation over one
// loaded trace — per host event its self time, the GPU queue depth when it starts and the GPU idle
// time while it runs, and the ranking of the events in the falling phases of the queue depth by
// z(idle fraction) + 0.6 z(self time). Returns the top events as a JSON array (json_each it).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "udf/registry.h"
#include "udf/tree_access.h"

namespace tlsql {

namespace {

struct Host {
  int64_t uid, start, end, self;
  int queue_depth = 0;
  int64_t idle = 0;
};
struct Span {
  int64_t start, end;
  int depth;
};

bool is_launch(const std::string& name) {
  for (const char* p : {"cudaLaunchKernel", "cudaLaunchKernelExC", "__cudaLaunchKernel", "cudaLaunchCooperativeKernel"})
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

std::string lower(std::string s) {
  for (char& c : s) c = (char)tolower((unsigned char)c);
  return s;
}

// Sum over the spans of their overlap with [s, e) (spans may overlap each other: each counts), for
// many queries: the integral of the coverage count, F(t) = ns of span time before t, so that
// overlap(s, e) = F(e) - F(s). O(log spans) per query instead of a pass over every span.
class Coverage {
 public:
  explicit Coverage(const std::vector<Span>& spans) {
    std::vector<std::pair<int64_t, int>> steps;  // (time, +1 at a start / -1 at an end)
    for (const Span& x : spans)
      if (x.end > x.start) steps.emplace_back(x.start, 1), steps.emplace_back(x.end, -1);
    std::sort(steps.begin(), steps.end());
    int64_t count = 0, area = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (i > 0) area += count * (steps[i].first - steps[i - 1].first);
      count += steps[i].second;
      if (!at_.empty() && at_.back() == steps[i].first)
        area_.back() = area, count_.back() = count;
      else
        at_.push_back(steps[i].first), area_.push_back(area), count_.push_back(count);
    }
  }
  int64_t overlap(int64_t s, int64_t e) const { return e > s ? before(e) - before(s) : 0; }

 private:
  int64_t before(int64_t t) const {
    auto it = std::upper_bound(at_.begin(), at_.end(), t);
    if (it == at_.begin()) return 0;
    size_t k = (size_t)(it - at_.begin()) - 1;
    return area_[k] + count_[k] * (t - at_[k]);
  }
  std::vector<int64_t> at_, area_, count_;  // breakpoints; span time before each; spans open after it
};

// uid -> position, for uids collected in another order: a sorted vector (16 bytes an entry; a hash
// map takes ~3x that, and a GB trace has millions of host events).
class UidIndex {
 public:
  void add(int64_t uid, size_t at) { v_.emplace_back(uid, at); }
  void seal() { std::sort(v_.begin(), v_.end()); }
  std::optional<size_t> find(int64_t uid) const {
    auto it = std::lower_bound(v_.begin(), v_.end(), std::pair<int64_t, size_t>{uid, 0});
    if (it == v_.end() || it->first != uid) return std::nullopt;
    return it->second;
  }

 private:
  std::vector<std::pair<int64_t, size_t>> v_;
};

struct Query {
  sqlite3_stmt* s = nullptr;
  Query(sqlite3* db, const std::string& sql, int64_t trace) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK) sqlite3_bind_int64(s, 1, trace);
  }
  ~Query() { sqlite3_finalize(s); }
  bool ok() const { return s != nullptr; }
  bool next() { return s && sqlite3_step(s) == SQLITE_ROW; }
  int64_t i(int c) { return sqlite3_column_int64(s, c); }
  std::string t(int c) { return sqlite3_column_text(s, c) ? (const char*)sqlite3_column_text(s, c) : ""; }
};

void optimizable_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  sqlite3* db = sqlite3_context_db_handle(ctx);
  int64_t trace = sqlite3_value_int64(argv[0]);
  int64_t top = argc > 1 && sqlite3_value_type(argv[1]) != SQLITE_NULL ? sqlite3_value_int64(argv[1]) : 10;
  std::string q = fmt::format("\"{}\"", schema_arg(db, argc > 2 ? argv[2] : nullptr));

  // Host events (torch's event tree) and their self time: duration less the children's durations.
  std::vector<Host> host;
  UidIndex index;
  Query h(db,
          fmt::format("SELECT uid, ts, end, dur, parent FROM {}.event WHERE trace = ?1 AND ts IS NOT NULL "
                      "AND kind IN ('cpu_op', 'annotation', 'python', 'runtime', 'driver') ORDER BY ts, uid",
                      q),
          trace);
  if (!h.ok()) return sqlite3_result_error(ctx, "optimizable_events: no tlsql event table in that schema", -1);
  std::vector<std::pair<int64_t, int64_t>> parent_dur;
  while (h.next()) {
    index.add(h.i(0), host.size());
    host.push_back({h.i(0), h.i(1), h.i(2), h.i(3)});
    if (sqlite3_column_type(h.s, 4) != SQLITE_NULL) parent_dur.emplace_back(h.i(4), h.i(3));
  }
  index.seal();
  for (auto [p, d] : parent_dur)
    if (auto at = index.find(p)) host[*at].self -= d;
  parent_dur = {};
  index = {};

  // Kernels (not memcpy / memset) by start, and each launch call's kernel index.
  std::vector<std::pair<int64_t, int64_t>> kernels;  // (start, end)
  UidIndex kernel_index;                             // kernel uid -> position
  Query k(
      db,
      fmt::format("SELECT uid, ts, end, name FROM {}.event WHERE trace = ?1 AND kind = 'kernel' ORDER BY ts, uid", q),
      trace);
  while (k.next())
    if (lower(k.t(3)).find("mem") == std::string::npos) {
      kernel_index.add(k.i(0), kernels.size());
      kernels.emplace_back(k.i(1), k.i(2));
    }
  struct Launch {
    int64_t uid, start, end;
    std::optional<size_t> kernel;
  };
  std::vector<Launch> launches;
  kernel_index.seal();
  Query l(
      db,
      fmt::format(
          "SELECT r.ts, r.end, r.name, l.gpu, r.uid FROM {0}.event r LEFT JOIN {0}.launch_link l ON l.runtime = r.uid "
          "WHERE r.trace = ?1 AND r.kind IN ('runtime', 'driver') ORDER BY r.ts, r.uid",
          q),
      trace);
  while (l.next()) {
    if (!is_launch(l.t(2))) continue;
    std::optional<size_t> kid;
    if (sqlite3_column_type(l.s, 3) != SQLITE_NULL) kid = kernel_index.find(l.i(3));
    if (!launches.empty() && launches.back().uid == l.i(4)) {
      if (!launches.back().kernel) launches.back().kernel = kid;  // one launch, several GPU events
      continue;
    }
    launches.push_back({l.i(4), l.i(0), l.i(1), kid});
  }

  // Queue depth: walk launches, kernels and host events by start (launch before kernel before host
  // event on ties); depth = index of the kernel spawned by the latest launch - kernels started + 1.
  struct Item {
    int64_t start;
    int group;  // 0 launch, 1 kernel, 2 host
    size_t i;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < launches.size(); ++i) items.push_back({launches[i].start, 0, i});
  for (size_t i = 0; i < kernels.size(); ++i) items.push_back({kernels[i].first, 1, i});
  for (size_t i = 0; i < host.size(); ++i) items.push_back({host[i].start, 2, i});
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.start != b.start ? a.start < b.start : a.group < b.group;
  });
  std::vector<Span> depth;  // launches and kernels
  int64_t spawned = -1;
  size_t current = 0;
  for (const Item& it : items) {
    if (it.group == 0 && launches[it.i].kernel) spawned = (int64_t)*launches[it.i].kernel;
    while (current < kernels.size() && kernels[current].first <= it.start) ++current;
    int d = (int)std::max<int64_t>(spawned - (int64_t)current + 1, 0);
    if (it.group == 0) depth.push_back({launches[it.i].start, launches[it.i].end, d});
    if (it.group == 1) depth.push_back({kernels[it.i].first, kernels[it.i].second, d});
    if (it.group == 2) host[it.i].queue_depth = d;
  }

  // GPU idle: before the first and after the last queue point, and from the end of a point with
  // depth 0 to the start of the next point with depth > 0.
  std::vector<Span> idle;
  if (!depth.empty() && !host.empty()) {
    idle.push_back({host.front().start, depth.front().start, 0});
    idle.push_back({depth.back().end, host.back().end, 0});
  }
  bool is_idle = false;
  int64_t idle_start = 0;
  for (const Span& p : depth) {
    if (p.depth == 0 && !is_idle) idle_start = p.end, is_idle = true;
    if (p.depth > 0 && is_idle) idle.push_back({idle_start, p.start, 0}), is_idle = false;
  }
  const Coverage idle_cover(idle);
  for (Host& e : host) e.idle = idle_cover.overlap(e.start, e.end);

  // Falling phases, walking the depth points backwards: from a point at depth 0 back to the highest
  // point (>= 4) of the run of non-zero depths before it.
  std::vector<int> qd;
  std::vector<Span> rev(depth.rbegin(), depth.rend());
  for (const Span& p : rev) qd.push_back(p.depth);
  size_t n = qd.size();
  std::vector<size_t> next_min(n + 1, n), peak(n + 1, n);  // per j: next index with qd <= 0; argmax of qd[j, next_min)
  for (size_t j = n; j-- > 0;) {
    next_min[j] = qd[j] <= 0 ? j : next_min[j + 1];
    if (qd[j] <= 0)
      peak[j] = n;  // empty slice
    else
      peak[j] = (peak[j + 1] == n || qd[j] >= qd[peak[j + 1]]) ? j : peak[j + 1];
  }
  std::vector<size_t> good(n + 2, n);  // first j' >= j whose slice peak reaches 4
  for (size_t j = n; j-- > 0;) good[j] = (peak[j] < n && qd[peak[j]] >= 4) ? j : good[j + 1];
  std::vector<Span> falling;
  for (size_t i = 0; i < n; ++i) {
    if (qd[i] > 0) continue;
    size_t j = i + 1 < n ? good[i + 1] : n;
    if (j >= n) continue;
    falling.push_back({rev[peak[j]].start, rev[i].start, 0});
    if (next_min[j] < n) i = next_min[j];
  }

  std::vector<size_t> chosen;
  const Coverage falling_cover(falling);
  for (size_t i = 0; i < host.size(); ++i)
    if (falling_cover.overlap(host[i].start, host[i].end) > 0) chosen.push_back(i);
  auto fraction = [&](const Host& e) { return e.end > e.start ? (double)e.idle / (double)(e.end - e.start) : 0.0; };
  auto zscores = [&](auto value) {
    std::vector<double> z(chosen.size(), 0.0);
    if (chosen.size() < 2) return z;
    double mean = 0, var = 0;
    for (size_t c : chosen) mean += value(host[c]);
    mean /= chosen.size();
    for (size_t c : chosen) var += (value(host[c]) - mean) * (value(host[c]) - mean);
    double sd = std::sqrt(var / (chosen.size() - 1));  // torch.std: unbiased
    for (size_t k = 0; k < chosen.size(); ++k) z[k] = sd > 0 ? (value(host[chosen[k]]) - mean) / sd : 0.0;
    return z;
  };
  auto zi = zscores(fraction);
  auto zs = zscores([](const Host& e) { return (double)e.self; });
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t k = 0; k < chosen.size(); ++k) ranked.emplace_back(zi[k] + 0.6 * zs[k], chosen[k]);
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first > b.first; });
  nlohmann::json out = nlohmann::json::array();
  for (size_t k = 0; k < ranked.size() && (int64_t)k < top; ++k) {
    const Host& e = host[ranked[k].second];
    out.push_back({{"uid", e.uid},
                   {"self_ns", e.self},
                   {"idle_ns", e.idle},
                   {"idle_fraction", fraction(e)},
                   {"queue_depth", e.queue_depth},
                   {"score", ranked[k].first}});
  }
  std::string text = out.dump();
  sqlite3_result_text(ctx, text.c_str(), -1, SQLITE_TRANSIENT);
}

}  // namespace

std::vector<SqlFunction> optimizable_functions() {
  SqlFunction f{"optimizable_events", "(trace [, top [, schema]])",
                "JSON array: the host events torch.profiler's BasicEvaluation ranks first (uid, self_ns, idle_ns, "
                "idle_fraction, queue_depth, score)"};
  f.max_args = 3, f.flags = SQLITE_UTF8, f.fn = optimizable_fn;
  return {f};
}

}  // namespace tlsql
