// optimizable_events(trace [, top [, schema]]): torch.profiler._utils.BasicEvaluation over one
// loaded trace — per host event its self time, the GPU queue depth when it starts and the GPU idle
// time while it runs, and the ranking of the events in the falling phases of the queue depth by
// z(idle fraction) + 0.6 z(self time). Returns the top events as a JSON array (json_each it).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/radix_sort.h"
#include "src/sqlite_util.h"
#include "udf/connection_cache.h"
#include "udf/registry.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

namespace {

struct Host {  // (a host event is read only with a start: no sort key of its own, as kernels have)
  int64_t uid, start, end, self;
  int64_t idle = 0;
  int queue_depth = 0;
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

// The rows of `kind` in trace `trace` of a loaded store (its kind index: positions ascending), 0
// when there is no such trace: what read_rows' lists reserve, so that they are not grown by
// doubling (each step fresh pages the kernel clears, and a copy; the host list is 22 MB on the
// 200 MB control trace).
size_t rows_in_trace(const EventStore& s, int64_t trace, Kind kind) {
  if ((size_t)kind >= s.rows_of_kind.size()) return 0;
  for (const auto& t : s.traces) {
    if (t->id != trace) continue;
    const std::vector<uint32_t>& rows = s.rows_of_kind[(size_t)kind];
    const int64_t from = t->uid_base - s.first_uid, to = from + (int64_t)t->rows.size();
    return (size_t)(std::lower_bound(rows.begin(), rows.end(), to) - std::lower_bound(rows.begin(), rows.end(), from));
  }
  return 0;
}

// One scan of the trace's host events, kernels and runtime calls in uid order (EventSource: the
// loaded store or the saved table, the same rows), and launch_link.
void read_rows(EventSource& source, int64_t trace, Rows& out) {
  const std::vector<std::pair<int64_t, int64_t>> links = source.launch_links();  // (runtime, gpu), sorted
  auto or0 = [](int64_t v) { return v == EventView::none ? 0 : v; };
  EventScan what;
  what.trace = trace;
  what.kinds = {Kind::cpu_op, Kind::annotation, Kind::python, Kind::runtime, Kind::driver, Kind::kernel};
  if (const EventStore* s = source.store()) {
    size_t host = 0;
    for (Kind k : what.kinds)
      if (is_host(k)) host += rows_in_trace(*s, trace, k);
    out.host.reserve(host), out.parent_dur.reserve(host);
    out.kernels.reserve(rows_in_trace(*s, trace, Kind::kernel));
  }
  source.scan(what, [&](const EventView& e) {
    if (is_host(e.kind) && e.ts != EventView::none) {
      out.host.push_back({e.uid, e.ts, or0(e.end), or0(e.dur)});
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

  // Host events (torch's event tree) and their self time: duration less the children's durations.
  std::vector<Host>& host = rows.host;
  auto by_uid = [](const Host& a, const Host& b) { return a.uid < b.uid; };
  if (!std::is_sorted(host.begin(), host.end(), by_uid)) std::sort(host.begin(), host.end(), by_uid);
  // Each parent found by its uid: a trace's uids are one range, so an array over the range (4
  // bytes a uid) finds it at once, where a binary search per child was a fifth of the function
  // (an array would be too large only for uids spread far apart: a database written by hand,
  // whose uids may lie more than 2^63 apart: the differences are unsigned).
  const int64_t lo = host.empty() ? 0 : host.front().uid;
  const uint64_t span = host.empty() ? 0 : (uint64_t)host.back().uid - (uint64_t)lo;
  if (!host.empty() && span < 4 * host.size() + 4096) {
    std::vector<int32_t> at(span + 1, -1);
    for (size_t i = 0; i < host.size(); ++i) at[(uint64_t)host[i].uid - (uint64_t)lo] = (int32_t)i;
    for (auto [p, d] : rows.parent_dur)
      if (const uint64_t k = (uint64_t)p - (uint64_t)lo; k <= span && at[k] >= 0) {
        int64_t& self = host[(size_t)at[k]].self;
        self = sat_sub(self, d);
      }
  } else {
    for (auto [p, d] : rows.parent_dur) {
      auto it = std::lower_bound(host.begin(), host.end(), Host{p, 0, 0, 0}, by_uid);
      if (it != host.end() && it->uid == p) it->self = sat_sub(it->self, d);
    }
  }
  rows.parent_dur = {};
  // (Merging the runs of start order the uid order holds, a few dozen on a trace: a comparison
  // sort of every event was a tenth of the function. (start, uid) is a total order: the same list.)
  sort_runs(host, [](const Host& a, const Host& b) { return std::pair(a.start, a.uid) < std::pair(b.start, b.uid); });

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
  // The three lists merged as they are walked, as a stable sort by (start, group) of the three
  // would order them: each in its own order, which is start order unless a start is missing
  // (read as 0: the list's order then comes from a stable sort of its positions by start).
  auto start_order = [](size_t n, auto start_of) {
    std::vector<size_t> order;  // (empty: the list's own)
    bool sorted = true;
    for (size_t i = 1; i < n && sorted; ++i) sorted = start_of(i - 1) <= start_of(i);
    if (sorted) return order;
    order.resize(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return start_of(a) < start_of(b); });
    return order;
  };
  const std::vector<size_t> orders[3] = {start_order(launches.size(), [&](size_t i) { return launches[i].start; }),
                                         start_order(kernels.size(), [&](size_t i) { return kernels[i].first; }),
                                         start_order(host.size(), [&](size_t i) { return host[i].start; })};
  const size_t sizes[3] = {launches.size(), kernels.size(), host.size()};
  auto item_start = [&](int group, size_t i) {
    return group == 0 ? launches[i].start : group == 1 ? kernels[i].first : host[i].start;
  };
  std::vector<Span> depth;  // launches and kernels
  depth.reserve(launches.size() + kernels.size());
  int64_t spawned = -1;
  size_t current = 0, next[3] = {0, 0, 0};
  for (;;) {
    int group = -1;  // the list whose next item comes first (the lower group on a tie)
    size_t i = 0;
    int64_t start = 0;
    for (int g = 0; g < 3; ++g) {
      if (next[g] == sizes[g]) continue;
      const size_t k = orders[g].empty() ? next[g] : orders[g][next[g]];
      if (group < 0 || item_start(g, k) < start) group = g, i = k, start = item_start(g, k);
    }
    if (group < 0) break;
    ++next[group];
    if (group == 0 && launches[i].kernel) spawned = (int64_t)*launches[i].kernel;
    while (current < kernels.size() && kernels[current].first <= start) ++current;
    int d = (int)std::max<int64_t>(spawned - (int64_t)current + 1, 0);
    if (group == 0) depth.push_back({launches[i].start, launches[i].end, d});
    if (group == 1) depth.push_back({kernels[i].first, kernels[i].second, d});
    if (group == 2) host[i].queue_depth = d;
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
  // The first `top` of a stable sort by score, highest first: the order of the chosen events on a
  // tie (their start order). Only those are sorted (a trace chooses 10^5 events and shows 10).
  const size_t shown = (size_t)std::clamp<int64_t>(top, 0, (int64_t)ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + (std::ptrdiff_t)shown, ranked.end(), [](auto& a, auto& b) {
    return a.first > b.first || (!(b.first > a.first) && a.second < b.second);
  });
  std::vector<Ranked> out;
  for (size_t k = 0; k < shown; ++k) {
    const Host& e = host[ranked[k].second];
    out.push_back({(int64_t)k, e.uid, e.self, e.idle, fraction(e), e.queue_depth, ranked[k].first});
  }
  return out;
}

// The rankings last computed on a connection, per (trace, top), kept while the schema holds the
// same rows: the optimizable report's note asks for each trace's ranking the report reads (the
// function was half of the report's time beyond its load). Rankings of over 1,000 rows are not
// kept (a large top lists every chosen event: 10^5 on a 200 MB trace), nor over 2^20 rows in all.
struct LastRankings {
  RowsVersion rows;
  std::map<std::pair<int64_t, int64_t>, std::vector<Ranked>> by_trace_top;
  size_t kept = 0;  // rows in by_trace_top
};
constexpr size_t kKeptRanking = 1000, kKeptRows = 1u << 20;  // (56 MiB of rows at most)

std::vector<Ranked> rankings(EventSource& source, int64_t trace, int64_t top) {
  sqlite3* db = source.db();
  const RowsVersion rows = rows_version(db, source.schema(), source.store());
  LastRankings* last =
      connection_cached<LastRankings>(db, "optimizable_events", [] { return std::make_unique<LastRankings>(); });
  if (last && last->rows == rows)
    if (auto it = last->by_trace_top.find({trace, top}); it != last->by_trace_top.end()) return it->second;
  std::vector<Ranked> out = rank_events(source, trace, top);
  if (last && out.size() <= kKeptRanking) {
    if (!(last->rows == rows) || last->kept + out.size() > kKeptRows)
      last->rows = rows, last->by_trace_top.clear(), last->kept = 0;
    last->by_trace_top[{trace, top}] = out;
    last->kept += out.size();
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
    return rankings(event_source(call.db, call.arg(2), own), trace, top);
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
