// optimizable_events(trace [, top [, schema]]): torch.profiler._utils.BasicEvaluation over one
// loaded trace — per host event its self time, the GPU queue depth when it starts and the GPU idle
// time while it runs, and the ranking of the events in the falling phases of the queue depth by
// z(idle fraction) + 0.6 z(self time). Returns the top events as a JSON array (json_each it).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/radix_sort.h"
#include "src/sqlite_util.h"
#include "udf/registry.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

namespace {

struct Host {
  int64_t uid, start, end, self, key;
  int queue_depth = 0;
  int64_t idle = 0;
};
struct Span {
  int64_t start, end;
  int depth;
};

bool is_launch(std::string_view name) {
  for (const char* p : {"cudaLaunchKernel", "cudaLaunchKernelExC", "__cudaLaunchKernel", "cudaLaunchCooperativeKernel"})
    if (name.starts_with(p)) return true;
  return false;
}

// Sum over the spans of their overlap with [s, e) (spans may overlap each other: each counts), for
// many queries: the integral of the coverage count, F(t) = ns of span time before t, so that
// overlap(s, e) = F(e) - F(s) (Walk). O(log spans) per query instead of a pass over every span.
class Coverage {
 public:
  explicit Coverage(const std::vector<Span>& spans) {
    std::vector<std::pair<int64_t, int>> steps;  // (time, +1 at a start / -1 at an end)
    for (const Span& x : spans)
      if (x.end > x.start) steps.emplace_back(x.start, 1), steps.emplace_back(x.end, -1);
    std::sort(steps.begin(), steps.end());
    int64_t count = 0, area = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (i > 0) area = sat_add(area, sat_mul(count, sat_sub(steps[i].first, steps[i - 1].first)));
      count += steps[i].second;
      if (!at_.empty() && at_.back() == steps[i].first)
        area_.back() = area, count_.back() = count;
      else
        at_.push_back(steps[i].first), area_.push_back(area), count_.push_back(count);
    }
  }
  // overlap(s, e) for queries in start order (the host events): the breakpoints <= s are found by
  // searching on from the last query's, those <= e from the start's (most events end a few
  // breakpoints later). The same answers as a binary search each, which was a fifth of the
  // function's instructions on a trace of 10^5 host events.
  class Walk {
   public:
    explicit Walk(const Coverage& c) : c_(c) {}
    int64_t overlap(int64_t s, int64_t e) {
      const std::vector<int64_t>& at = c_.at_;
      k_ = partition_point_from(at.size(), k_, [&](size_t k) { return at[k] <= s; });
      if (e <= s) return 0;
      const size_t upto_e = partition_point_from(at.size(), k_, [&](size_t k) { return at[k] <= e; });
      return sat_sub(c_.before(e, upto_e), c_.before(s, k_));
    }

   private:
    const Coverage& c_;
    size_t k_ = 0;  // breakpoints <= the last query's start
  };

 private:
  // Span time before t, given how many breakpoints are <= t.
  int64_t before(int64_t t, size_t upto) const {
    if (upto == 0) return 0;
    const size_t k = upto - 1;
    return sat_add(area_[k], sat_mul(count_[k], sat_sub(t, at_[k])));
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

// What the function reads of one trace: host events (ops, annotations, python frames, runtime
// calls) with a start, kernels (not memcpy / memset) and launch calls with the GPU events they
// launched, each list in uid order. From the loaded store directly or through SQL (a saved
// database): the same rows either way. (ORDER BY ts in SQL sorted a GB trace's millions of rows
// through temporary files, most of this function's time: the lists are sorted in C++.)
struct Rows {
  std::vector<Host> host;                               // self = the event's duration, for now
  std::vector<std::pair<int64_t, int64_t>> parent_dur;  // (parent uid, duration) of each host event
  struct Kernel {
    int64_t uid, start, end, key;  // key: the start, INT64_MIN for none (the start reads 0)
  };
  std::vector<Kernel> kernels;
  struct LaunchRow {  // one per (launch call, GPU event it launched), by uid then GPU uid
    int64_t uid, start, end, key;
    std::optional<int64_t> gpu;
  };
  std::vector<LaunchRow> launches;
};

bool is_host(Kind k) {
  return k == Kind::cpu_op || k == Kind::annotation || k == Kind::python || k == Kind::runtime || k == Kind::driver;
}
// Whether a kernel's name says memory ("mem", any case: memcpy / memset kernels), without a copy
// (a GB trace has millions of kernels).
bool is_memory_kernel(std::string_view name) {
  for (size_t i = 0; i + 3 <= name.size(); ++i)
    if ((name[i] | 0x20) == 'm' && (name[i + 1] | 0x20) == 'e' && (name[i + 2] | 0x20) == 'm') return true;
  return false;
}

// One scan of the trace's host events, kernels and runtime calls in uid order (EventSource: the
// loaded store or the saved table, the same rows), and launch_link.
void read_rows(EventSource& source, int64_t trace, Rows& out) {
  const std::vector<std::pair<int64_t, int64_t>> links = source.launch_links();  // (runtime, gpu), sorted
  auto or0 = [](int64_t v) { return v == EventView::none ? 0 : v; };
  EventScan what;
  what.trace = trace;
  what.kinds = {Kind::cpu_op, Kind::annotation, Kind::python, Kind::runtime, Kind::driver, Kind::kernel};
  source.scan(what, [&](const EventView& e) {
    if (is_host(e.kind) && e.ts != EventView::none) {
      out.host.push_back({e.uid, e.ts, or0(e.end), or0(e.dur), e.ts});
      if (e.parent != EventView::none) out.parent_dur.emplace_back(e.parent, or0(e.dur));
    }
    if (e.kind == Kind::kernel && !is_memory_kernel(e.name))
      out.kernels.push_back({e.uid, e.ts_or0(), or0(e.end), e.ts});  // key: none is INT64_MIN
    if ((e.kind == Kind::runtime || e.kind == Kind::driver) && is_launch(e.name)) {
      auto it = std::lower_bound(links.begin(), links.end(), std::pair<int64_t, int64_t>{e.uid, INT64_MIN});
      if (it == links.end() || it->first != e.uid)
        out.launches.push_back({e.uid, e.ts_or0(), or0(e.end), e.ts, std::nullopt});
      for (; it != links.end() && it->first == e.uid; ++it)
        out.launches.push_back({e.uid, e.ts_or0(), or0(e.end), e.ts, it->second});
    }
  });
}

// One ranked host event.
struct Ranked {
  int64_t position, uid, self_ns, idle_ns;
  double idle_fraction;
  int64_t queue_depth;
  double score;
};

std::vector<Ranked> rank_events(EventSource& source, int64_t trace, int64_t top) {
  Rows rows;
  read_rows(source, trace, rows);
  // Each list is sorted here by (start, uid) (where a start is missing, key is INT64_MIN: ORDER BY
  // ts puts a NULL first; the start itself reads 0, as SQLite's integer of a NULL).
  auto by_start = [](const auto& a, const auto& b) { return std::pair(a.key, a.uid) < std::pair(b.key, b.uid); };

  // Host events (torch's event tree) and their self time: duration less the children's durations,
  // each parent found by binary search over the uid order the rows come in.
  std::vector<Host>& host = rows.host;
  auto by_uid = [](const Host& a, const Host& b) { return a.uid < b.uid; };
  if (!std::is_sorted(host.begin(), host.end(), by_uid)) std::sort(host.begin(), host.end(), by_uid);
  for (auto [p, d] : rows.parent_dur) {
    auto it = std::lower_bound(host.begin(), host.end(), Host{p, 0, 0, 0, 0}, by_uid);
    if (it != host.end() && it->uid == p) it->self = sat_sub(it->self, d);
  }
  rows.parent_dur = {};
  // (Merging the runs of start order the uid order holds, a few dozen on a trace: a comparison
  // sort of every event was a tenth of the function. (start, uid) is a total order: the same list.)
  sort_runs(host, by_start);

  // Kernels (not memcpy / memset) by start, and each launch call's kernel index.
  sort_runs(rows.kernels, by_start);
  std::vector<std::pair<int64_t, int64_t>> kernels;  // (start, end)
  UidIndex kernel_index;                             // kernel uid -> position
  for (const Rows::Kernel& x : rows.kernels)
    kernel_index.add(x.uid, kernels.size()), kernels.emplace_back(x.start, x.end);
  rows.kernels = {};
  kernel_index.seal();
  struct Launch {
    int64_t uid, start, end, key;
    std::optional<size_t> kernel;
  };
  std::vector<Launch> launches;
  for (const Rows::LaunchRow& l : rows.launches) {
    std::optional<size_t> kid;
    if (l.gpu) kid = kernel_index.find(*l.gpu);
    if (!launches.empty() && launches.back().uid == l.uid) {
      if (!launches.back().kernel) launches.back().kernel = kid;  // one launch, several GPU events
      continue;
    }
    launches.push_back({l.uid, l.start, l.end, l.key, kid});
  }
  rows.launches = {};
  sort_runs(launches, by_start);

  // Queue depth: walk launches, kernels and host events by start (launch before kernel before host
  // event on ties); depth = index of the kernel spawned by the latest launch - kernels started + 1.
  struct Item {
    int64_t start;
    int group;  // 0 launch, 1 kernel, 2 host
    size_t i;
  };
  std::vector<Item> items;
  items.reserve(launches.size() + kernels.size() + host.size());
  for (size_t i = 0; i < launches.size(); ++i) items.push_back({launches[i].start, 0, i});
  for (size_t i = 0; i < kernels.size(); ++i) items.push_back({kernels[i].first, 1, i});
  for (size_t i = 0; i < host.size(); ++i) items.push_back({host[i].start, 2, i});
  // A stable sort by (start, group). Each list is already in start order unless a start is
  // missing (read as 0): then three runs merge in linear time, as the sort would order them.
  auto before = [](const Item& a, const Item& b) { return a.start != b.start ? a.start < b.start : a.group < b.group; };
  const auto mid1 = items.begin() + (std::ptrdiff_t)launches.size(), mid2 = mid1 + (std::ptrdiff_t)kernels.size();
  if (std::is_sorted(items.begin(), mid1, before) && std::is_sorted(mid1, mid2, before) &&
      std::is_sorted(mid2, items.end(), before)) {
    std::inplace_merge(items.begin(), mid1, mid2, before);
    std::inplace_merge(items.begin(), mid2, items.end(), before);
  } else {
    std::stable_sort(items.begin(), items.end(), before);
  }
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
  Coverage::Walk idle_walk(idle_cover);
  for (Host& e : host) e.idle = idle_walk.overlap(e.start, e.end);

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
  Coverage::Walk falling_walk(falling_cover);
  for (size_t i = 0; i < host.size(); ++i)
    if (falling_walk.overlap(host[i].start, host[i].end) > 0) chosen.push_back(i);
  auto fraction = [&](const Host& e) {
    return e.end > e.start ? (double)e.idle / ((double)e.end - (double)e.start) : 0.0;
  };
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
  std::vector<Ranked> out;
  for (size_t k = 0; k < ranked.size() && (int64_t)k < top; ++k) {
    const Host& e = host[ranked[k].second];
    out.push_back({(int64_t)k, e.uid, e.self, e.idle, fraction(e), e.queue_depth, ranked[k].first});
  }
  return out;
}

// optimizable_events(trace [, top [, schema]]): the ranking as rows, best first (position 0).
// DIRECTONLY: it reads and sorts every host event, kernel and launch of a trace (seconds on a GB
// trace), which a view in a file must not make every query over it pay.
struct OptimizableEvents {
  using Row = Ranked;
  static constexpr bool direct_only = true;
  static constexpr TableArgument arguments[] = {{"trace", "trace", true}, {"top", "top"}, {"schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<OptimizableEvents, Row>>({
        {"position", "INTEGER", field<&Row::position>},
        {"uid", "INTEGER", field<&Row::uid>},
        {"self_ns", "INTEGER", field<&Row::self_ns>},
        {"idle_ns", "INTEGER", field<&Row::idle_ns>},
        {"idle_fraction", "REAL", field<&Row::idle_fraction>},
        {"queue_depth", "INTEGER", field<&Row::queue_depth>},
        {"score", "REAL", field<&Row::score>},
    });
  }
  std::vector<Row> rows(const TableCall& call) {
    const int64_t trace = int_arg(call.arg(0), "trace");
    const int64_t top =
        call.arg(1) && sqlite3_value_type(call.arg(1)) != SQLITE_NULL ? int_arg(call.arg(1), "top") : 10;
    std::unique_ptr<EventSource> own;
    return rank_events(event_source(call.db, call.arg(2), own), trace, top);
  }
};

}  // namespace

std::vector<SqlFunction> optimizable_functions() {
  return {table_function<OptimizableEvents>(
      "optimizable_events",
      "table: the host events torch.profiler's BasicEvaluation ranks first (position, uid, self_ns, idle_ns, "
      "idle_fraction, queue_depth, score)")};
}
TLSQL_FUNCTIONS(optimizable_functions);

}  // namespace tlsql
