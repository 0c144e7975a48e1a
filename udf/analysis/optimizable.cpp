// optimizable_events(trace [, top [, schema]]): torch.profiler._utils.BasicEvaluation over one
// loaded trace — per host event its self time, the GPU queue depth when it starts and the GPU idle
// time while it runs, and the ranking of the events in the falling phases of the queue depth by
// z(idle fraction) + 0.6 z(self time). Returns the top events as a JSON array (json_each it).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/event_store.h"
#include "src/event_table.h"
#include "src/sql_names.h"
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
      if (i > 0) area = sat_add(area, sat_mul(count, sat_sub(steps[i].first, steps[i - 1].first)));
      count += steps[i].second;
      if (!at_.empty() && at_.back() == steps[i].first)
        area_.back() = area, count_.back() = count;
      else
        at_.push_back(steps[i].first), area_.push_back(area), count_.push_back(count);
    }
  }
  int64_t overlap(int64_t s, int64_t e) const { return e > s ? sat_sub(before(e), before(s)) : 0; }

 private:
  int64_t before(int64_t t) const {
    auto it = std::upper_bound(at_.begin(), at_.end(), t);
    if (it == at_.begin()) return 0;
    size_t k = (size_t)(it - at_.begin()) - 1;
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

struct Query {
  sqlite3_stmt* s = nullptr;
  Query(sqlite3* db, const std::string& sql, int64_t trace) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK) sqlite3_bind_int64(s, 1, trace);
  }
  ~Query() { sqlite3_finalize(s); }
  bool ok() const { return s != nullptr; }
  bool next() { return s && (rc = sqlite3_step(s)) == SQLITE_ROW; }
  bool complete() const { return rc == SQLITE_DONE; }  // every row read (not stopped by an error)
  int rc = SQLITE_OK;
  int64_t i(int c) { return sqlite3_column_int64(s, c); }
  std::string t(int c) { return sqlite3_column_text(s, c) ? (const char*)sqlite3_column_text(s, c) : ""; }
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
bool is_memory_kernel(std::string_view name) { return lower(std::string(name)).find("mem") != std::string::npos; }

bool read_sql_host(sqlite3* db, const std::string& q, int64_t trace, Rows& out) {
  Query h(db,
          fmt::format("SELECT uid, ts, end, dur, parent FROM {}.event WHERE trace = ?1 AND ts IS NOT NULL "
                      "AND +kind IN ('cpu_op', 'annotation', 'python', 'runtime', 'driver')",  // a scan, by uid
                      q),
          trace);
  if (!h.ok()) return false;
  while (h.next()) {
    out.host.push_back({h.i(0), h.i(1), h.i(2), h.i(3), h.i(1)});
    if (sqlite3_column_type(h.s, 4) != SQLITE_NULL) out.parent_dur.emplace_back(h.i(4), h.i(3));
  }
  return h.complete();
}

bool read_sql_gpu(sqlite3* db, const std::string& q, int64_t trace, Rows& out) {
  auto key = [](const Query& x, int c) {
    return sqlite3_column_type(x.s, c) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(x.s, c);
  };
  Query k(db, fmt::format("SELECT uid, ts, end, name FROM {}.event WHERE trace = ?1 AND kind = 'kernel'", q), trace);
  while (k.next())
    if (!is_memory_kernel(k.t(3))) out.kernels.push_back({k.i(0), k.i(1), k.i(2), key(k, 1)});
  Query l(db,
          fmt::format("SELECT r.ts, r.end, r.name, l.gpu, r.uid FROM {0}.event r LEFT JOIN {0}.launch_link l "
                      "ON l.runtime = r.uid WHERE r.trace = ?1 AND r.kind IN ('runtime', 'driver')",
                      q),
          trace);
  while (l.next())
    if (is_launch(l.t(2)))
      out.launches.push_back({l.i(4), l.i(0), l.i(1), key(l, 0),
                              sqlite3_column_type(l.s, 3) == SQLITE_NULL ? std::nullopt : std::optional(l.i(3))});
  return k.complete() && l.complete();
}

// A saved file is read on two connections at once: host events on this one, kernels and launches
// on a second, read-only one (when it can be opened and read; else all here).
bool read_sql(sqlite3* db, const std::string& schema, int64_t trace, Rows& out) {
  const std::string q = schema_sql(db, schema);
  sqlite3* second = open_second_reader(db, schema);
  bool gpu_read = false;
  std::thread other;
  std::exception_ptr failed;  // (a bad_alloc in the thread: the caller's error, not std::terminate)
  if (second)
    other = std::thread([&] {
      try {
        gpu_read = read_sql_gpu(second, schema_sql(second, "main"), trace, out);
      } catch (...) {
        failed = std::current_exception();
      }
    });
  bool ok = false;
  try {
    ok = read_sql_host(db, q, trace, out);
  } catch (...) {
    if (second) other.join();
    sqlite3_close(second);
    throw;
  }
  if (second) other.join();
  sqlite3_close(second);
  if (failed) std::rethrow_exception(failed);
  if (!ok) return false;
  if (gpu_read) return true;
  out.kernels.clear(), out.launches.clear();
  return read_sql_gpu(db, q, trace, out);
}

bool read_store(const EventStore& s, sqlite3* db, const std::string& q, int64_t trace, Rows& out) {
  std::vector<std::pair<int64_t, int64_t>> links;  // (runtime, gpu), sorted
  Query l(db, fmt::format("SELECT runtime, gpu FROM {}.launch_link", q), trace);
  if (!l.ok()) return false;
  while (l.next()) links.emplace_back(l.i(0), l.i(1));
  std::sort(links.begin(), links.end());
  // Per name: 0 not looked at, 1 yes, 2 no (names repeat millions of times).
  std::vector<uint8_t> launch_name(s.strings.size(), 0), memory_name(s.strings.size(), 0);
  auto fact = [&](std::vector<uint8_t>& cache, uint32_t n, bool (*test)(std::string_view)) {
    if (n == StringPool::kNone) return test({});
    if (!cache[n]) cache[n] = test(s.strings.get(n)) ? 1 : 2;
    return cache[n] == 1;
  };
  auto or0 = [](int64_t v) { return v == kNull ? 0 : v; };
  for (const auto& t : s.traces) {
    if (t->id != trace) continue;
    for (size_t i = 0; i < t->rows.size(); ++i) {
      const EventRec& e = t->rows[i];
      const int64_t uid = t->uid_base + (int64_t)i, start = or0(e.ts), key = e.ts == kNull ? INT64_MIN : e.ts;
      if (is_host(e.kind) && e.ts != kNull) {
        out.host.push_back({uid, e.ts, or0(e.end()), or0(e.dur), e.ts});
        if (e.parent >= 0) out.parent_dur.emplace_back(t->uid_base + e.parent, or0(e.dur));
      }
      if (e.kind == Kind::kernel && !fact(memory_name, e.name, is_memory_kernel))
        out.kernels.push_back({uid, start, or0(e.end()), key});
      if ((e.kind == Kind::runtime || e.kind == Kind::driver) &&
          fact(launch_name, e.name, [](std::string_view n) { return is_launch(std::string(n)); })) {
        auto it = std::lower_bound(links.begin(), links.end(), std::pair<int64_t, int64_t>{uid, INT64_MIN});
        if (it == links.end() || it->first != uid)
          out.launches.push_back({uid, start, or0(e.end()), key, std::nullopt});
        for (; it != links.end() && it->first == uid; ++it)
          out.launches.push_back({uid, start, or0(e.end()), key, it->second});
      }
    }
  }
  return true;
}

// One ranked host event.
struct Ranked {
  int64_t position, uid, self_ns, idle_ns;
  double idle_fraction;
  int64_t queue_depth;
  double score;
};

std::vector<Ranked> rank_events(sqlite3* db, int64_t trace, int64_t top, const std::string& schema) {
  const std::string q = schema_sql(db, schema);
  Rows rows;
  if (const EventStore* store = loaded_store(db, schema)) {
    if (!read_store(*store, db, q, trace, rows)) throw FunctionError("cannot read a tlsql event table in that schema");
  } else if (!read_sql(db, schema, trace, rows)) {
    throw FunctionError("cannot read a tlsql event table in that schema");
  }
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
  std::sort(host.begin(), host.end(), by_start);

  // Kernels (not memcpy / memset) by start, and each launch call's kernel index.
  std::sort(rows.kernels.begin(), rows.kernels.end(), by_start);
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
  std::sort(launches.begin(), launches.end(), by_start);

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
// DIRECTONLY: it opens a second connection on a saved file and reads every host event.
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
    return rank_events(call.db, trace, top, schema_arg(call.db, call.arg(2)));
  }
};

}  // namespace

std::vector<SqlFunction> optimizable_functions() {
  return {table_function<OptimizableEvents>(
      "optimizable_events",
      "table: the host events torch.profiler's BasicEvaluation ranks first (position, uid, self_ns, idle_ns, "
      "idle_fraction, queue_depth, score)")};
}

}  // namespace tlsql
