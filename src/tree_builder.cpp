#include "src/tree_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "src/kind.h"
#include "src/radix_sort.h"
#include "src/serving_step.h"

namespace tlsql {

namespace {

// Timestamps in real traces are rounded (to the µs in older ones): overlaps smaller than this
// are rounding, not real partial overlaps.
constexpr int64_t kRoundingNs = 1000;

std::optional<int64_t> profiler_step_number(std::string_view name) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  int64_t n = 0;
  auto digits = name.substr(prefix.size());
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || p != digits.data() + digits.size() || n < INT32_MIN + 1 || n > INT32_MAX)
    return std::nullopt;
  return n;
}

// The "Fwd thread id" an args text holds (minified JSON, as the store decodes it), when it is an
// integer an Id32 holds as it is (a tid), else kNull.
int64_t forward_thread(std::string_view args) {
  constexpr std::string_view key = "\"Fwd thread id\":";
  const size_t at = args.find(key);
  if (at == std::string_view::npos) return kNull;
  int64_t v = 0;
  const char* p = args.data() + at + key.size();
  auto [end, ec] = std::from_chars(p, args.data() + args.size(), v);
  if (ec != std::errc() || end == p || v < WideIds::kLow || v > INT32_MAX) return kNull;
  return v;
}

// A GPU event's time in the health checks' shares (a negative or absent duration counts 0), and
// how they print a share of the GPU events' time. Their sums are sat_add's: a file's durations
// may add up past int64 (two kernels of 4.7e15 us did, undefined behaviour UBSan caught).
int64_t gpu_ns_of(const EventRec& e) { return e.dur == kNull || e.dur < 0 ? int64_t{0} : e.dur; }
std::string gpu_time_share(int64_t ns, int64_t all_ns) {
  return fmt::format("{:.3f} ms, {:.1f}% of the GPU events' time", (double)ns / 1e6,
                     all_ns ? 100.0 * (double)ns / (double)all_ns : 0.0);
}

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    return std::hash<int64_t>()(p.first * 0x9E3779B97F4A7C15ull ^ p.second);
  }
};

// Where a flow event binds: (thread, ts).
struct Place {
  int32_t thread;
  int64_t ts;
  bool operator==(const Place& o) const { return thread == o.thread && ts == o.ts; }
};
struct PlaceHash {
  size_t operator()(const Place& p) const { return std::hash<uint64_t>()((uint64_t)p.ts * 31u + (uint64_t)p.thread); }
};

}  // namespace

void sort_by_id(std::vector<std::pair<Id32, int32_t>>& v) {
  if (v.size() < 2) return;
  // Rows are >= 0 and distinct, so (id, row) is a total order and the packed key
  // (id - smallest id, row) sorts exactly as the pairs do. Built in row order (both callers
  // collect rows ascending), a stable sort on the id bits alone is enough.
  int64_t lo = v[0].first.v, hi = lo;
  int32_t max_row = 0;
  bool rows_ascending = true;
  for (size_t k = 0; k < v.size(); ++k) {
    lo = std::min<int64_t>(lo, v[k].first.v), hi = std::max<int64_t>(hi, v[k].first.v);
    max_row = std::max(max_row, v[k].second);
    if (k > 0 && v[k].second <= v[k - 1].second) rows_ascending = false;
  }
  const int row_bits = bits_for((uint64_t)max_row);  // <= 31; the id's range <= 32 bits
  const int id_bits = bits_for((uint64_t)(hi - lo));
  std::vector<uint64_t> keys;
  keys.reserve(v.size());
  for (const auto& [id, row] : v) keys.push_back(((uint64_t)(id.v - lo) << row_bits) | (uint64_t)row);
  radix_sort(keys, rows_ascending ? row_bits : 0, row_bits + id_bits);
  const uint64_t row_mask = (uint64_t{1} << row_bits) - 1;
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = {Id32{(int32_t)((int64_t)(keys[k] >> row_bits) + lo)}, (int32_t)(keys[k] & row_mask)};
}

// Stages that touch disjoint events or fields run in pairs: host nesting writes host parents
// while GPU linking writes GPU parents, and so on. Within a stage, passes over the rows are cut
// into ranges across the load's threads (src/parallel.h), what each range collects joined in row
// order; health counted per range merges to the same rows (Health keeps the smallest example).
void ProfileTreeBuilder::build() {
  workers_ = std::max<size_t>(1, workers_);
  // A trace too small to split a pass is also built on one thread (a folder of small ranks
  // would otherwise start threads for a few thousand rows each).
  const bool pairs = workers_ > 1 && ev_.size() >= min_part_rows_;
  group_threads();
  join_begin_end();
  Health gpu_health;  // Health is not thread-safe: the GPU stage counts into its own
  run_both(
      pairs,
      [&] {
        nest_host_events();
        attach_thread_roots();
      },
      [&] { link_gpu_events(gpu_health); });
  h_.merge(gpu_health);
  compute_depths();
  Health fwd_health;
  run_both(
      pairs, [&] { assign_steps(); }, [&] { link_backward_to_forward(fwd_health); });
  h_.merge(fwd_health);
  attribute_graph_replays();
  run_both(
      pairs, [&] { find_launchers(); }, [&] { build_children(); });
  count_gpu_under_backward_without_forward();
}

// backward_without_forward's impact: the GPU events launched under such a backward op, whose time
// no forward op's accounting can reach. Each row's answer is remembered, so the walks up the tree
// together visit every row once.
void ProfileTreeBuilder::count_gpu_under_backward_without_forward() {
  if (no_forward_.empty()) return;
  std::vector<int8_t> under(ev_.size(), -1);  // -1 unknown, 0 no, 1 under a backward op without forward
  for (int32_t i : no_forward_) under[(size_t)i] = 1;
  // Ranges of rows share the memo as compute_depths does (an answer is a function of the row).
  const RowRanges ranges = row_ranges(ev_.size());
  std::vector<int64_t> counted(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    auto memo = [&](int32_t i) { return std::atomic_ref<int8_t>(under[(size_t)i]); };
    std::vector<int32_t> path;
    for (int32_t g = (int32_t)begin; g < (int32_t)end; ++g) {
      const Kind k = ev_[g].kind;
      if (k != Kind::kernel && k != Kind::memcpy && k != Kind::memset) continue;
      int32_t i = ev_[g].parent;
      int8_t known = -1;
      path.clear();
      while (i >= 0 && (known = memo(i).load(std::memory_order_relaxed)) < 0 && path.size() <= ev_.size())
        path.push_back(i), i = ev_[i].parent;
      const int8_t answer = i >= 0 && known == 1 ? 1 : 0;
      for (int32_t p : path) memo(p).store(answer, std::memory_order_relaxed);
      counted[part] += answer;
    }
  });
  int64_t n = 0;
  for (int64_t c : counted) n += c;
  h_.set_gpu_events("backward_without_forward", n);
}

// Every event with a (pid, tid) gets a thread index; host tree members are listed per thread.
// Threads are numbered in order of their first event. Ranges of rows number the threads they
// meet on their own; the numbers are then made global in range order (a thread's first range
// is where one pass meets it first) and each thread's members joined in range order.
void ProfileTreeBuilder::group_threads() {
  const int32_t n = (int32_t)ev_.size();
  thread_of_.assign(n, -1);
  using Index = std::unordered_map<std::pair<int32_t, int32_t>, int32_t, PairHash>;  // (pid, tid) codes
  const RowRanges ranges = row_ranges((size_t)n);
  std::vector<std::vector<Thread>> found(ranges.parts);  // per range, numbered from 0 there
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    std::vector<Thread>& threads = found[part];
    Index index[4];
    Id32 last_pid, last_tid;
    uint8_t last_text = 255;
    int32_t last = -1;
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {
      const EventRec& e = ev_[i];
      if (e.kind == Kind::meta || e.kind == Kind::counter) continue;
      uint8_t text = e.flags & (EventRec::pid_text | EventRec::tid_text);
      if (e.pid != last_pid || e.tid != last_tid || text != last_text) {
        // (try_emplace: emplace made and freed a node each time the thread changed, most events
        // of a trace whose CPU and GPU events interleave)
        auto [it, fresh] = index[text].try_emplace(std::make_pair(e.pid.v, e.tid.v), (int32_t)threads.size());
        if (fresh) threads.push_back({e.pid, e.tid, text, {}});
        last = it->second, last_pid = e.pid, last_tid = e.tid, last_text = text;
      }
      thread_of_[i] = last;
      // Events whose ts + dur overflows (counted as end_overflow) stay out of the tree.
      if (is_host_node(e.kind) && e.ts != kNull && e.ph != 'E' && (e.dur == kNull || e.end() != kNull))
        threads[(size_t)last].events.push_back(i);
    }
  });
  if (ranges.parts == 1) {  // the range's numbers are the global ones
    threads_ = std::move(found[0]);
    return;
  }
  Index index[4];
  std::vector<std::vector<int32_t>> global(ranges.parts);  // per range: its numbers -> global ones
  for (size_t part = 0; part < ranges.parts; ++part)
    for (Thread& th : found[part]) {
      auto [it, fresh] = index[th.text].emplace(std::make_pair(th.pid.v, th.tid.v), (int32_t)threads_.size());
      if (fresh)
        threads_.push_back(std::move(th));
      else
        threads_[(size_t)it->second].events.insert(threads_[(size_t)it->second].events.end(), th.events.begin(),
                                                   th.events.end());
      global[part].push_back(it->second);
    }
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      if (thread_of_[i] >= 0) thread_of_[i] = global[part][(size_t)thread_of_[i]];
  });
}

// B/E pairs become one complete event on the B row; the E row stays (every element of
// traceEvents is a row) as kind 'other' under its B.
void ProfileTreeBuilder::join_begin_end() {
  std::vector<std::vector<int32_t>> open(threads_.size());
  std::vector<int32_t> overflowed;  // 'B' rows whose span passes int64
  // The 'B' and 'E' rows, found by ranges of rows at once and joined in row order; the pairing
  // itself walks them in that order.
  const RowRanges ranges = row_ranges(ev_.size());
  std::vector<std::vector<int32_t>> found(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      if (ev_[i].ph == 'B' || ev_[i].ph == 'E') found[part].push_back((int32_t)i);
  });
  const std::vector<int32_t> begin_end = join_parts(found);
  const bool any = !begin_end.empty();
  for (int32_t i : begin_end) {
    EventRec& e = ev_[i];
    auto& stack = open[thread_of_[i]];
    if (e.ph == 'B') {
      stack.push_back(i);
      continue;
    }
    e.kind = Kind::other;
    if (stack.empty()) {
      h_.add("end_without_begin", i, "'E' events with no open 'B' on their thread");
      continue;
    }
    EventRec& b = ev_[stack.back()];
    // The pair's span as an X event's dur; counted where it cannot be one, as for X events.
    if (int64_t span; b.ts != kNull && e.ts != kNull) {
      if (__builtin_sub_overflow(e.ts, b.ts, &span)) {
        // Past int64 ns (~292 years): what an X event's ts + dur past int64 gets (end_overflow,
        // the reader's wording): no end, out of the tree.
        h_.add("end_overflow", stack.back(), kEndOverflow);
        overflowed.push_back(stack.back());
      } else if (span < 0) {
        h_.add("end_before_begin", stack.back(), "'B' / 'E' pairs whose 'E' is earlier than the 'B': dur is 0");
        b.dur = 0;
      } else {
        b.dur = span;
      }
    }
    e.parent = stack.back();
    stack.pop_back();
  }
  // group_threads() put them in the tree while their dur was still NULL.
  for (int32_t b : overflowed) {
    auto& members = threads_[thread_of_[b]].events;
    if (auto it = std::lower_bound(members.begin(), members.end(), b); it != members.end() && *it == b)
      members.erase(it);
  }
  if (!any) return;
  for (auto& stack : open)
    for (int32_t b : stack) h_.add("begin_without_end", b, "'B' events never closed by an 'E': dur is NULL");
}

void ProfileTreeBuilder::nest_host_events() {
  // Each host thread nests on its own (it writes its own events' parents). First every thread's
  // members are sorted, threads shared out among the workers (the longest first, each taking the
  // next when done); a long thread is also cut where nothing before an event is still open (no
  // earlier member ends after its start: one walk would pop its whole stack there), so its
  // pieces nest on several workers at once. Each worker counts health into its own Health,
  // merged after (Health keeps the smallest example: the row one walk in order would give).
  std::vector<int32_t> order(threads_.size());
  size_t members = 0;
  for (int32_t t = 0; t < (int32_t)threads_.size(); ++t)
    order[(size_t)t] = t, members += threads_[(size_t)t].events.size();
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return threads_[(size_t)a].events.size() > threads_[(size_t)b].events.size();
  });
  const size_t workers = split_rows(members, workers_, min_part_rows_).parts;
  // Pieces of about this many members at least (a thread shorter than two is not cut).
  const size_t piece = std::max<size_t>({1, min_part_rows_, members / (workers * 2)});
  struct Piece {
    int32_t thread;
    size_t begin, end;  // positions in the thread's sorted members
  };
  std::vector<std::vector<Piece>> pieces(threads_.size());
  std::atomic<size_t> next{0};
  for_row_ranges(RowRanges{workers, workers}, [&](size_t, size_t, size_t) {
    std::vector<NestKey> keys;
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) {
      const int32_t t = order[k];
      std::vector<int32_t>& idx = threads_[(size_t)t].events;
      const bool long_thread = workers > 1 && idx.size() >= 2 * piece;
      // A long thread's sort is itself cut in ranges (the longest is most of the stage's work).
      sort_members(idx, keys, long_thread ? split_rows(idx.size(), workers, piece) : RowRanges{idx.size(), 1});
      auto& cut = pieces[(size_t)t];
      size_t from = 0;
      if (long_thread) {
        int64_t open_until = INT64_MIN;  // the latest end of the members so far
        for (size_t m = 0; m < keys.size(); ++m) {
          if (m - from >= piece && open_until <= keys[m].ts) cut.push_back({t, from, m}), from = m;
          open_until = std::max(open_until, keys[m].ts - keys[m].neg_dur);
        }
      }
      cut.push_back({t, from, idx.size()});
    }
  });
  std::vector<Piece> all;
  for (int32_t t : order) all.insert(all.end(), pieces[(size_t)t].begin(), pieces[(size_t)t].end());
  std::vector<Health> health(workers);
  next = 0;
  for_row_ranges(RowRanges{workers, workers}, [&](size_t w, size_t, size_t) {
    std::vector<int32_t> stack;
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < all.size();) {
      const Piece& p = all[k];
      const std::vector<int32_t>& idx = threads_[(size_t)p.thread].events;
      nest_members(idx.data() + p.begin, idx.data() + p.end, stack, health[w]);
    }
  });
  for (const Health& h : health) h_.merge(h);
}

// A thread's members sorted by (start, longer first, row).
void ProfileTreeBuilder::sort_members(std::vector<int32_t>& idx, std::vector<NestKey>& keys, const RowRanges& r) {
  auto dur0 = [&](int32_t i) { return ev_[i].dur == kNull ? 0 : ev_[i].dur; };
  keys.resize(idx.size());
  std::vector<uint8_t> sorted(r.parts, 1);
  for_row_ranges(r, [&](size_t part, size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const int32_t i = idx[k];
      keys[k] = {ev_[i].ts, -dur0(i), i};
      if (k > begin && keys[k] < keys[k - 1]) sorted[part] = 0;
    }
  });
  bool in_order = std::all_of(sorted.begin(), sorted.end(), [](uint8_t s) { return s; });
  for (size_t p = 1; p < r.parts && in_order; ++p)
    if (const size_t k = r.begin(p); k > 0 && k < keys.size() && keys[k] < keys[k - 1]) in_order = false;
  if (!in_order) sort_runs_parallel(keys, r);  // traces are mostly in order already
  for_row_ranges(r, [&](size_t, size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) idx[k] = keys[k].idx;
  });
}

// Sorted members [first, last) of a thread nested by time with a stack.
void ProfileTreeBuilder::nest_members(const int32_t* first, const int32_t* last, std::vector<int32_t>& stack,
                                      Health& h) {
  auto dur0 = [&](int32_t i) { return ev_[i].dur == kNull ? 0 : ev_[i].dur; };
  {
    stack.clear();
    for (const int32_t* at = first; at != last; ++at) {
      const int32_t i = *at;
      EventRec& e = ev_[i];
      int64_t end = e.ts + dur0(i);
      int32_t parent = -1;
      int rounded_start = 0;  // counted once per event, however many open events it closes
      while (!stack.empty()) {
        const EventRec& top = ev_[stack.back()];
        int64_t top_end = top.ts + dur0(stack.back());
        if (e.ts >= top_end) {  // half-open: an event at the top's exact end is not inside it
          stack.pop_back();
          continue;
        }
        if (end <= top_end) {
          parent = stack.back();
        } else if (end - top_end < kRoundingNs) {
          h.add("nested_rounded_end", i,
                "events overrunning their parent's end by < 1 µs, nested (rounded timestamps)");
          parent = stack.back();
        } else if (top_end - e.ts < kRoundingNs) {
          if (!rounded_start++)
            h.add("sibling_rounded_start", i,
                  "events starting < 1 µs before the open event's end, made its sibling (rounded timestamps)");
          stack.pop_back();
          continue;
        } else {
          // A real partial overlap (e.g. ProfilerStep#N opened inside the python call that
          // records it and outliving it): not the overlapped event's child, but the child of the
          // innermost open event that does contain it.
          // Open events that end before this one can never be a parent again (anything later
          // that they could contain is contained by this one first): dropping them keeps a run of
          // overlapping events linear instead of a scan of an ever-deeper stack.
          h.add("overlap_not_nested", i,
                "events partially overlapping an open event on their thread: nested under the innermost open event "
                "that contains them");
          while (!stack.empty() && ev_[stack.back()].ts + dur0(stack.back()) < end) stack.pop_back();
          if (!stack.empty()) parent = stack.back();
        }
        break;
      }
      e.parent = parent;
      stack.push_back(i);
    }
  }
}

void ProfileTreeBuilder::link_gpu_events(Health& h) {
  // Runtime calls by correlation id: a sorted vector beats a hash map at millions of entries.
  const RowRanges ranges = row_ranges(ev_.size());
  std::vector<std::vector<std::pair<Id32, int32_t>>> found(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i)
      if ((ev_[i].kind == Kind::runtime || ev_[i].kind == Kind::driver) && !ev_[i].correlation.null())
        found[part].emplace_back(ev_[i].correlation, i);
  });
  std::vector<std::pair<Id32, int32_t>> by_corr = join_parts(found);
  sort_by_id(by_corr);
  std::vector<Id32> shared;  // correlations of more than one call, sorted
  for (size_t k = 1; k < by_corr.size(); ++k)
    if (by_corr[k].first == by_corr[k - 1].first) {
      h.add("duplicate_correlation", by_corr[k].second,
            "runtime calls sharing a correlation id with an earlier one (GPU work goes to the first; "
            "gpu_events_affected: the GPU events of those ids, whose launch is a guess)");
      if (shared.empty() || shared.back() != by_corr[k].first) shared.push_back(by_corr[k].first);
    }
  int64_t on_shared = 0;

  // Each range of rows links its own GPU events (a GPU event's parent is its only write).
  struct Linked {
    std::vector<int32_t> unlinked;
    int64_t gpu_work = 0, all_ns = 0, on_shared = 0;
  };
  std::vector<Linked> linked(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    Linked& l = linked[part];
    size_t at = 0;  // the last GPU event's place in by_corr
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {
      EventRec& e = ev_[i];
      if (!is_gpu_side(e.kind)) continue;
      bool counts = e.kind == Kind::kernel || e.kind == Kind::memcpy || e.kind == Kind::memset;
      l.gpu_work += counts;
      if (counts) l.all_ns = sat_add(l.all_ns, gpu_ns_of(e));
      if (!e.correlation.null()) {
        if (!shared.empty() && counts && std::binary_search(shared.begin(), shared.end(), e.correlation)) ++l.on_shared;
        // GPU events come mostly in correlation order: search on from the last one's place.
        at = partition_point_from(by_corr.size(), at, [&](size_t k) { return by_corr[k].first < e.correlation; });
        if (at < by_corr.size() && by_corr[at].first == e.correlation) {
          e.parent = by_corr[at].second;
          continue;
        }
      }
      if (counts) l.unlinked.push_back(i);
    }
  });
  std::vector<int32_t> unlinked;
  int64_t gpu_work = 0, all_ns = 0;
  {
    std::vector<std::vector<int32_t>> parts;
    for (Linked& l : linked)
      gpu_work += l.gpu_work, all_ns = sat_add(all_ns, l.all_ns), on_shared += l.on_shared,
                              parts.push_back(std::move(l.unlinked));
    unlinked = join_parts(parts);
  }

  // Launch flows ('s' at the launch, 'f' at the GPU event, same id) link what correlation did
  // not, and are checked for a partner either way.
  auto launch_flow = [&](const EventRec& e) {
    if (e.kind != Kind::flow || e.is(EventRec::flow_text) || e.flow_id.null()) return false;
    std::string_view c = cat(e);
    return c == "ac2g" || c == "async" || c == "async_cpu_to_gpu";
  };
  for (auto& f : found) f.clear();
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i)
      if (launch_flow(ev_[i])) found[part].emplace_back(ev_[i].flow_id, i);
  });
  std::vector<std::pair<Id32, int32_t>> flows = join_parts(found);  // (id, row), 's' and 'f' together
  sort_by_id(flows);
  std::vector<std::pair<int32_t, int32_t>> pairs;  // (s row, f row)
  std::vector<int32_t> lone_f;                     // 'f' ends without their 's'
  int64_t unmatched = 0, example = -1;
  for (size_t k = 0; k < flows.size();) {
    size_t j = k;
    int32_t s = -1, f = -1;
    for (; j < flows.size() && flows[j].first == flows[k].first; ++j)
      (ev_[flows[j].second].ph == 's' ? s : f) = flows[j].second;
    if (s < 0 || f < 0) {
      ++unmatched;
      if (f >= 0) lone_f.push_back(f);
      if (example < 0) example = std::max(s, f);
    } else {
      pairs.emplace_back(s, f);
    }
    k = j;
  }

  if (!unlinked.empty() && !pairs.empty()) {
    std::unordered_map<Place, int32_t, PlaceHash> gpu_at;  // unlinked GPU events by place
    for (int32_t g : unlinked) gpu_at.emplace(Place{thread_of_[g], ev_[g].ts}, g);
    std::unordered_map<Place, int32_t, PlaceHash> want;  // launch place -> GPU event
    for (auto [s, f] : pairs)
      if (auto it = gpu_at.find({thread_of_[f], ev_[f].ts}); it != gpu_at.end())
        want.emplace(Place{thread_of_[s], ev_[s].ts}, it->second);
    for (int32_t i = 0; i < (int32_t)ev_.size() && !want.empty(); ++i) {
      const EventRec& e = ev_[i];
      if (e.kind != Kind::runtime && e.kind != Kind::driver) continue;
      if (auto it = want.find({thread_of_[i], e.ts}); it != want.end()) {
        ev_[it->second].parent = i;
        h.add("gpu_linked_by_flow", it->second,
              "GPU events linked to their launch by an ac2g flow (no matching correlation)");
        want.erase(it);
      }
    }
    h.set_gpu_events("gpu_linked_by_flow", h.count("gpu_linked_by_flow"));
    unlinked.erase(std::remove_if(unlinked.begin(), unlinked.end(), [&](int32_t g) { return ev_[g].parent >= 0; }),
                   unlinked.end());
  }
  // A flow missing its other end costs a GPU event its launch only when its 'f' end sits on GPU
  // work that nothing linked: an 's' alone sits on a launch call whose GPU work, if any, linked by
  // correlation or is not in the trace (cudaEventQuery, cudaFuncSetAttribute launch nothing).
  if (unmatched) {
    std::unordered_set<Place, PlaceHash> unlinked_at;
    for (int32_t g : unlinked) unlinked_at.insert(Place{thread_of_[g], ev_[g].ts});
    int64_t lost = 0;
    for (int32_t f : lone_f) lost += unlinked_at.count(Place{thread_of_[f], ev_[f].ts}) ? 1 : 0;
    h.add("flow_unmatched", example,
          "launch flows ('s'/'f') whose other end is missing; gpu_events_affected: those ending on GPU work left "
          "without a launch",
          unmatched);
    h.set_gpu_events("flow_unmatched", lost);
  }
  h.set_gpu_events("duplicate_correlation", on_shared);
  if (!unlinked.empty()) {
    int64_t unlinked_ns = 0;
    for (int32_t g : unlinked) unlinked_ns = sat_add(unlinked_ns, gpu_ns_of(ev_[g]));
    h.add("gpu_without_launch", unlinked.front(),
          fmt::format("GPU events (kernel/memcpy/memset) with no runtime call of their correlation id in the trace"
                      "{}: {} of {} linked ({:.2f}%); the others, {}, are in no "
                      "op's GPU time (the ops report leaves them out; the kernels report and the timelines count them)",
                      // No call at all: the profiler did not record the runtime API (no use
                      // guessing at calls made before profiling started).
                      by_corr.empty() ? " (it holds none: the runtime API was not recorded; rocprofv3: --hip-trace, "
                                        "nsys: --trace=cuda, torch.profiler: ProfilerActivity.CPU)"
                                      : ", e.g. launched before profiling started",
                      gpu_work - (int64_t)unlinked.size(), gpu_work,
                      100.0 * (gpu_work - (double)unlinked.size()) / (double)gpu_work,
                      gpu_time_share(unlinked_ns, all_ns)),
          (int64_t)unlinked.size());
    h.set_gpu_events("gpu_without_launch", (int64_t)unlinked.size());
  }
}

// The graph replays of this trace (GPU events whose launch call is a graph launch), each matched to
// the graph it ran (GraphMatcher; identical replays once), ties settled by their place
// (settle_ties_by_order), and, where no captured graph is within reach, the eager runs of the same
// kernels in this trace (EagerRuns).
struct ProfileTreeBuilder::ReplayPlan {
  std::vector<std::tuple<int32_t, int64_t, int32_t>> replayed;  // (graph launch, ts, GPU row), by launch
  int64_t all_ns = 0;                                           // all GPU events' time
  struct Distinct {
    std::vector<ReplayEvent> events;
    ReplayMatch m;
    int64_t eager_runs = 0;  // eager runs found (several: by different ops; -1: not searched)
  };
  std::vector<Distinct> distinct;
  enum class Why { attributed, no_graph, eager_ambiguous, tie_unsettled, near_unlike, unsearched };
  struct Replay {
    size_t from, to;  // its events in `replayed`
    int32_t d = -1;   // its Distinct
    int32_t graph = -1;
    Why why = Why::no_graph;
  };
  std::vector<Replay> replays;
  std::vector<CapturedGraph> eager;  // graphs read from eager runs: ids from `ncap` on
  size_t ncap = 0;
  std::optional<GraphMatcher> matcher;
  std::string tie_example, near_example;  // for health: one unsettled tie, one near tie of different graphs
  const CapturedGraph& graph_at(const std::vector<CapturedGraph>* graphs, int32_t i) const {
    return (size_t)i < ncap ? (*graphs)[(size_t)i] : eager[(size_t)i - ncap];
  }
};

ProfileTreeBuilder::ReplayPlan ProfileTreeBuilder::plan_replays(const std::vector<CapturedGraph>* graphs,
                                                                bool eager_runs) {
  ReplayPlan plan;
  const RowRanges ranges = row_ranges(ev_.size());
  std::vector<std::vector<std::tuple<int32_t, int64_t, int32_t>>> replayed(ranges.parts);
  std::vector<int64_t> all_ns(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {
      const EventRec& e = ev_[i];
      if (!is_gpu_work(e.kind)) continue;
      all_ns[part] = sat_add(all_ns[part], gpu_ns_of(e));
      if (e.parent >= 0 && is_graph_launch(name(ev_[e.parent]))) replayed[part].emplace_back(e.parent, e.ts, i);
    }
  });
  for (int64_t ns : all_ns) plan.all_ns = sat_add(plan.all_ns, ns);
  plan.replayed = join_parts(replayed);
  if (plan.replayed.empty()) return plan;
  std::sort(plan.replayed.begin(), plan.replayed.end());
  const bool have_graphs = graphs && !graphs->empty() && args_;
  plan.ncap = graphs ? graphs->size() : 0;
  if (have_graphs) plan.matcher.emplace(*graphs);
  std::optional<EagerRuns> runs;

  // The batch size of the serving step above a node (what breaks ties between captured graphs),
  // each node's answer remembered: thousands of launches under one deep stack walk it once.
  constexpr int64_t kUnknown = INT64_MIN, kNone = INT64_MIN + 1;
  std::vector<int64_t> batch_of;
  std::vector<int32_t> path;
  auto batch_above = [&](int32_t p) -> std::optional<int64_t> {
    if (batch_of.empty()) batch_of.assign(ev_.size(), kUnknown);
    int64_t found = kNone;
    path.clear();
    for (; p >= 0; p = ev_[p].parent) {
      if (batch_of[p] != kUnknown) {
        found = batch_of[p];
        break;
      }
      path.push_back(p);
      if (auto st = serving_step(ev_[p].kind, name(ev_[p])); st && st->annotation && st->tokens) {
        found = *st->tokens;
        break;
      }
    }
    for (int32_t q : path) batch_of[q] = found;
    return found == kNone ? std::nullopt : std::optional<int64_t>(found);
  };

  std::unordered_map<std::string, int32_t> index;  // a replay's batch and events -> its Distinct
  std::unordered_map<std::string, std::pair<std::optional<int32_t>, int64_t>> eager_by_names;  // -> (graph, runs)
  for (size_t k = 0; k < plan.replayed.size();) {
    const int32_t launch = std::get<0>(plan.replayed[k]);
    size_t j = k;
    while (j < plan.replayed.size() && std::get<0>(plan.replayed[j]) == launch) ++j;
    ReplayPlan::Replay r{k, j};
    k = j;
    if (!args_) {
      plan.replays.push_back(r);
      continue;
    }
    std::vector<ReplayEvent> events;
    std::string buf;
    for (size_t x = r.from; x < r.to; ++x) {
      const EventRec& e = ev_[std::get<2>(plan.replayed[x])];
      events.push_back({e.kind, e.name, launch_geometry(args_of(*args_, e, buf))});
    }
    const std::optional<int64_t> batch = have_graphs ? batch_above(ev_[launch].parent) : std::nullopt;
    // A graph replays many times with the same events: match each distinct replay once.
    std::string key = batch ? std::to_string(*batch) : "-";
    for (const ReplayEvent& e : events) key += fmt::format("|{}:{}:{}", (int)e.work, e.name, e.geometry);
    auto [it, fresh] = index.try_emplace(std::move(key), (int32_t)plan.distinct.size());
    r.d = it->second;
    if (fresh) {
      ReplayPlan::Distinct dd;
      if (have_graphs) dd.m = plan.matcher->match(events, batch);
      // No captured graph is within reach: the same events run eagerly in this trace, if they did
      // (and always by the same ops). (Searched once per kind and name sequence: the geometry and
      // batch do not change it.)
      if (eager_runs && dd.m.graphs.empty() && dd.m.candidates == 0) {
        std::string names;
        for (const ReplayEvent& e : events) names += fmt::format("{}:{}|", (int)e.work, e.name);
        auto [found, first] = eager_by_names.try_emplace(std::move(names));
        if (first) {
          if (!runs) runs.emplace(ev_, strings_, *args_);
          int64_t n = 0;
          if (auto g = runs->graph_for(events, n)) {
            plan.eager.push_back(std::move(*g));
            found->second.first = (int32_t)(plan.ncap + plan.eager.size() - 1);
          }
          found->second.second = n;
        }
        if (found->second.first) dd.m.graphs = {*found->second.first};
        dd.eager_runs = found->second.second;
      }
      dd.events = std::move(events);
      plan.distinct.push_back(std::move(dd));
    }
    const ReplayPlan::Distinct& dd = plan.distinct[(size_t)r.d];
    if (dd.m.graphs.size() == 1) {
      r.graph = dd.m.graphs[0], r.why = ReplayPlan::Why::attributed;
    } else if (dd.m.graphs.size() > 1) {
      r.why = dd.m.distance > 0 && !dd.m.alike ? ReplayPlan::Why::near_unlike : ReplayPlan::Why::tie_unsettled;
    } else {
      r.why = dd.m.candidates < 0 || dd.eager_runs < 0 ? ReplayPlan::Why::unsearched
              : dd.eager_runs > 1                      ? ReplayPlan::Why::eager_ambiguous
                                                       : ReplayPlan::Why::no_graph;
    }
    plan.replays.push_back(r);
  }

  // Ties: by the replay's place among its step's replays that tie between the same graphs. Its
  // step: the outermost step annotation above its launch, else the outermost worker frame
  // (serving_step; as engine_step has them), else the trace. (Each node's answer remembered.)
  constexpr int32_t kOpen = -2;
  std::vector<std::array<int32_t, 2>> step_of;  // per node: outermost (annotation, frame) step at or above
  auto scope_of = [&](int32_t p) -> int64_t {
    if (p < 0) return -1;
    if (step_of.empty()) step_of.assign(ev_.size(), {kOpen, kOpen});
    path.clear();
    for (int32_t q = p; q >= 0 && step_of[q][0] == kOpen; q = ev_[q].parent) path.push_back(q);
    for (size_t i = path.size(); i-- > 0;) {
      const int32_t q = path[i], up = ev_[q].parent;
      std::array<int32_t, 2> above = up >= 0 ? step_of[up] : std::array<int32_t, 2>{-1, -1};
      if (above[0] < 0 || above[1] < 0)
        if (auto st = serving_step(ev_[q].kind, name(ev_[q])))
          if (above[st->annotation ? 0 : 1] < 0) above[st->annotation ? 0 : 1] = q;
      step_of[q] = above;
    }
    return step_of[p][0] >= 0 ? step_of[p][0] : step_of[p][1];
  };
  std::vector<TiedReplay> tied;
  std::vector<size_t> tied_replay;
  for (size_t i = 0; i < plan.replays.size(); ++i) {
    const ReplayPlan::Replay& r = plan.replays[i];
    if (r.why != ReplayPlan::Why::tie_unsettled) continue;
    const int32_t launch = std::get<0>(plan.replayed[r.from]);
    const ReplayMatch& m = plan.distinct[(size_t)r.d].m;
    tied.push_back({scope_of(ev_[launch].parent), {ev_[launch].ts, launch}, &m.graphs, m.alike});
    tied_replay.push_back(i);
  }
  const std::vector<int32_t> settled = settle_ties_by_order(tied);
  int64_t first_unsettled = -1;
  for (size_t t = 0; t < tied.size(); ++t) {
    ReplayPlan::Replay& r = plan.replays[tied_replay[t]];
    if (settled[t] >= 0)
      r.graph = settled[t], r.why = ReplayPlan::Why::attributed;
    else if (first_unsettled < 0)
      first_unsettled = (int64_t)t;
  }
  // What health shows of why: one unsettled tie (how many replays of its step, between how many
  // graphs), and one near tie between different graphs.
  if (first_unsettled >= 0) {
    const TiedReplay& u = tied[(size_t)first_unsettled];
    int64_t m = 0;
    for (const TiedReplay& t : tied) m += t.scope == u.scope && *t.graphs == *u.graphs;
    const size_t shown = std::min<size_t>(u.graphs->size(), 4);
    plan.tie_example = fmt::format("e.g. {} replays {} tie between the same {} {}graphs, {}{}", m,
                                   u.scope >= 0 ? "of one step" : "of the trace (no step recorded)", u.graphs->size(),
                                   u.alike ? "" : "different ",
                                   fmt::join(u.graphs->begin(), u.graphs->begin() + (ptrdiff_t)shown, ", "),
                                   shown < u.graphs->size() ? ", ..." : "");
  }
  for (const ReplayPlan::Replay& r : plan.replays)
    if (r.why == ReplayPlan::Why::near_unlike) {
      const ReplayMatch& m = plan.distinct[(size_t)r.d].m;
      plan.near_example =
          fmt::format("e.g. graphs {} each with {} nodes or events unpaired", fmt::join(m.graphs, ", "), m.distance);
      break;
    }
  return plan;
}

namespace {

// "name ×count, ..." of the most frequent names (then by name), at most 5, and how many more.
std::string name_counts(const std::map<std::string, int64_t>& names) {
  std::vector<std::pair<int64_t, std::string>> by_count;
  for (const auto& [n, c] : names) by_count.emplace_back(-c, n);
  std::sort(by_count.begin(), by_count.end());
  std::string out;
  for (size_t i = 0; i < by_count.size() && i < 5; ++i)
    out += fmt::format("{}{} x{}", i ? ", " : "", by_count[i].second, -by_count[i].first);
  if (by_count.size() > 5) out += fmt::format(" and {} more names", by_count.size() - 5);
  return out;
}

}  // namespace

// GPU work replayed by a graph launch hangs under the launch, but the ops that made those kernels
// ran when the graph was captured. When a capture trace holds the graph (plan_replays), or else
// the same kernels ran eagerly in this trace, always by the same ops (EagerRuns), each replay gets
// a copy of those launch calls and what is above them (ops with their shapes, python frames,
// annotations), placed under the graph launch with its start and zero duration (they took no
// host time then), and each replayed event hangs under its node's launch call: ancestors,
// launched(), gpu_time and the perf numbers then read it as eager work, one op instance per
// replay. The rest is counted with the GPU time it covers.
void ProfileTreeBuilder::attribute_graph_replays() {
  if (capture_trace_) return;  // describe_capture_replays, once its graphs are read
  ReplayPlan plan = plan_replays(captured_, true);
  if (plan.replayed.empty()) return;
  const bool have_graphs = captured_ && !captured_->empty() && args_;
  auto graph_at = [&](int32_t i) -> const CapturedGraph& { return plan.graph_at(captured_, i); };
  // How each attributed replay's events pair with its graph's nodes (per distinct replay and graph).
  std::map<std::pair<int32_t, int32_t>, ReplayPairing> pairings;
  auto pairing = [&](const ReplayPlan::Replay& r) -> const ReplayPairing& {
    auto [it, fresh] = pairings.try_emplace({r.d, r.graph});
    if (fresh) {
      const auto& events = plan.distinct[(size_t)r.d].events;
      if ((size_t)r.graph < plan.ncap) {
        it->second = plan.matcher->pair(events, r.graph);
      } else {  // an eager run: its nodes are the replay's events
        it->second.node_of.resize(events.size());
        for (size_t x = 0; x < events.size(); ++x) it->second.node_of[x] = (int32_t)x;
      }
    }
    return it->second;
  };
  int64_t full_rows = 0;
  for (const ReplayPlan::Replay& r : plan.replays)
    if (r.graph >= 0) full_rows += (int64_t)graph_at(r.graph).rows.size();

  // At most as many copied rows as the trace has (and always 1 M): beyond that, ops, annotations
  // and launch calls only; and never more than 4 times that (a capture trace cannot make the
  // load take any memory it likes): the replays past it stay unattributed, counted.
  const int64_t budget = std::max<int64_t>((int64_t)ev_.size(), int64_t{1} << 20);
  const bool frames = full_rows <= budget;
  const int64_t cap = std::min<int64_t>(4 * budget, INT32_MAX - (int64_t)ev_.size());
  int64_t attributed = 0, attributed_ns = 0, left = 0, left_ns = 0, added = 0, over_cap = 0;
  int64_t exact = 0, by_order = 0, near = 0, near_by_order = 0, from_eager = 0, extra_ns = 0;
  std::map<ReplayPlan::Why, int64_t> why;
  std::map<std::string, int64_t> missing_names, extra_names;
  int64_t missing = 0, extra = 0;
  int32_t attributed_example = -1, left_example = -1, near_example = -1;
  std::set<int32_t> graphs_used;
  auto leave = [&](int32_t g) {
    ++left, left_ns = sat_add(left_ns, gpu_ns_of(ev_[g]));
    if (left_example < 0 || g < left_example) left_example = g;
  };
  for (const ReplayPlan::Replay& r : plan.replays) {
    const int32_t launch = std::get<0>(plan.replayed[r.from]);
    bool skip = r.graph < 0;
    if (!skip) {  // once one replay does not fit, none after it is copied
      const CapturedGraph& g = graph_at(r.graph);
      if (over_cap || added + (int64_t)(frames ? g.rows.size() : g.lean_rows.size()) > cap) ++over_cap, skip = true;
    } else {
      ++why[r.why];
    }
    if (skip) {
      for (size_t x = r.from; x < r.to; ++x) leave(std::get<2>(plan.replayed[x]));
      continue;
    }
    // Copy the graph's capture-time events under the launch (rows may move: no references).
    const CapturedGraph& graph = graph_at(r.graph);
    const ReplayPairing& p = pairing(r);
    const std::vector<EventRec>& rows = frames ? graph.rows : graph.lean_rows;
    const int32_t base = (int32_t)ev_.size();
    const EventRec at = ev_[launch];
    for (const EventRec& c : rows) {
      EventRec e = c;
      e.parent = c.parent >= 0 ? base + c.parent : launch;
      e.depth = ev_[e.parent].depth + 1;
      e.ts = at.ts, e.dur = at.ts == kNull ? kNull : 0;
      e.pid = at.pid, e.tid = at.tid;
      e.flags = (uint8_t)((c.flags & ~(EventRec::pid_text | EventRec::tid_text)) |
                          (at.flags & (EventRec::pid_text | EventRec::tid_text)));
      // Capture-time ids would meet this trace's own: the copies link by parent, not by id.
      e.correlation = e.external_id = e.seq = e.flow_id = Id32{};
      e.fwd = -1, e.step = at.step;
      ev_.push_back(e);
    }
    added += (int64_t)rows.size();
    int32_t extra_here = 0;
    for (size_t x = r.from; x < r.to; ++x) {
      const int32_t g = std::get<2>(plan.replayed[x]);
      const int32_t n = p.node_of[x - r.from];
      if (n < 0) {  // no node launched it: it stays under the graph launch
        ++extra_here, ++extra_names[brief_name(name(ev_[g]))], extra_ns = sat_add(extra_ns, gpu_ns_of(ev_[g]));
        leave(g);
        continue;
      }
      const CapturedGraph::Node& node = graph.nodes[(size_t)n];
      EventRec& e = ev_[g];
      e.parent = base + (frames ? node.row : node.lean_row);
      e.depth = ev_[e.parent].depth + 1;
      graph_launch_of_.emplace(g, launch);
      ++attributed, attributed_ns = sat_add(attributed_ns, gpu_ns_of(e));
      if (attributed_example < 0 || g < attributed_example) attributed_example = g;
    }
    for (int32_t n : p.missing) {
      const CapturedGraph::Node& node = graph.nodes[(size_t)n];
      ++missing_names[node.kernel != StringPool::kNone ? brief_name(strings_.get(node.kernel))
                                                       : std::string(name(graph.rows[(size_t)node.row]))];
    }
    missing += (int64_t)p.missing.size(), extra += extra_here;
    const ReplayPlan::Distinct& dd = plan.distinct[(size_t)r.d];
    const bool ordered = dd.m.graphs.size() > 1;
    const char* rule = graph.eager_start >= 0 ? "eager" : dd.m.distance > 0 ? "near" : "exact";
    if (graph.eager_start >= 0)
      ++from_eager;
    else if (dd.m.distance > 0)
      ++near, near_by_order += ordered;
    else
      ++(ordered ? by_order : exact);
    if (dd.m.distance > 0 && (near_example < 0 || launch < near_example)) near_example = launch;
    replayed_graphs_.push_back({launch, graph.eager_start >= 0 ? -1 : r.graph, graph.eager_start, rule,
                                (int32_t)std::max<size_t>(1, dd.m.graphs.size()), (int32_t)p.missing.size(),
                                extra_here});
    graphs_used.insert(r.graph);
  }
  auto share = [&](int64_t ns) { return gpu_time_share(ns, plan.all_ns); };
  // "a, b, c" of the parts that count something.
  auto listed = [](std::initializer_list<std::pair<int64_t, std::string>> parts) {
    std::string out;
    for (const auto& [n, text] : parts)
      if (n) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, text);
    return out;
  };
  if (attributed)
    h_.add("graph_replay_attributed", attributed_example,
           fmt::format("GPU events replayed by a graph launch, attributed to the ops that captured them: {}; {} "
                       "replays of {} graphs ({}); {} capture-time events copied under their graph launches{} "
                       "(docs/inference.md)",
                       share(attributed_ns), replayed_graphs_.size(), graphs_used.size(),
                       listed({{exact, "matched one graph exactly"},
                               {by_order,
                                "matched several equally and took one by their place in their step (the "
                                "order rule)"},
                               {near, fmt::format("matched all but a few nodes of one graph: near-exact{}",
                                                  near_by_order ? fmt::format(", {} of them by their place among "
                                                                              "alike graphs",
                                                                              near_by_order)
                                                                : "")},
                               {from_eager, "matched an eager run of the same kernels in this trace"}}),
                       added,
                       frames ? ""
                              : fmt::format(" (python frames left out: with them, {} rows, more than the trace's own)",
                                            full_rows)),
           attributed);
  if (near)
    h_.add("graph_replay_near_exact", near_example,
           fmt::format("graph replays attributed to the graph whose nodes all but a few of their GPU events pair with "
                       "(at most 1 per 32 nodes; docs/inference.md): {} graph nodes ran no GPU event{}{}; {} GPU "
                       "events paired with no node and stay under the graph launch{}{}",
                       missing, missing ? ": " : "", name_counts(missing_names), extra,
                       extra ? fmt::format(" ({}): ", share(extra_ns)) : "", name_counts(extra_names)),
           near);
  if (left) {
    auto n = [&](ReplayPlan::Why w) {
      auto it = why.find(w);
      return it == why.end() ? int64_t{0} : it->second;
    };
    const std::string of_replays = listed(
        {{n(ReplayPlan::Why::no_graph), "match no captured graph nor eager run"},
         {n(ReplayPlan::Why::tie_unsettled),
          fmt::format("match several graphs equally, and the order rule cannot pair them with those graphs (alike "
                      "graphs: their step's or trace's replays of them are not a multiple of their number; "
                      "different graphs: not exactly their number in one recorded step): {}",
                      plan.tie_example)},
         {n(ReplayPlan::Why::near_unlike),
          fmt::format("are equally close to several different graphs (near-exact: not guessed; {})",
                      plan.near_example)},
         {n(ReplayPlan::Why::eager_ambiguous), "match eager runs of the same kernels by different ops or shapes"},
         {n(ReplayPlan::Why::unsearched), "were not searched (the search's budget ran out)"},
         {over_cap, fmt::format("would copy more than {} rows", cap)}});
    std::string reasons = of_replays.empty() ? "" : "of their replays, " + of_replays;
    if (extra)
      reasons += fmt::format("{}{} are GPU events of near-exact replays that no node of their graph launched",
                             reasons.empty() ? "" : "; ", extra);
    h_.add("graph_replay_unattributed", left_example,
           fmt::format("GPU events replayed by a CUDA / HIP graph launch, not attributed to the ops that captured them "
                       "(the ops report counts them under the graph launch call, or the op above it, with no shapes "
                       "nor perf model; gemm, sdpa and the roofline leave them out): {}; {}{} (view graph_replay; "
                       "docs/inference.md)",
                       share(left_ns), reasons, have_graphs ? "" : "; no capture trace given (--capture)"),
           left);
    h_.set_gpu_events("graph_replay_unattributed", left);
  }
  // Attributed replays are linked to their ops (the row says how, not what is missing); the
  // near-exact ones' unpaired GPU events stay under the graph launch.
  h_.set_gpu_events("graph_replay_attributed", 0);
  h_.set_gpu_events("graph_replay_near_exact", extra);
}

// The capture trace's own replays (vLLM and xDiT replay a graph right after capturing it): not
// loaded, nor attributed; whether they run what the graphs read from this trace hold tells the
// user how far its replays in the served trace can be trusted to match.
void ProfileTreeBuilder::describe_capture_replays(const std::vector<CapturedGraph>& graphs) {
  ReplayPlan plan = plan_replays(&graphs, false);
  if (plan.replayed.empty()) return;
  int64_t replayed_ns = 0, exact = 0, near = 0, tied = 0, none = 0;
  for (const auto& r : plan.replayed) replayed_ns = sat_add(replayed_ns, gpu_ns_of(ev_[std::get<2>(r)]));
  for (const ReplayPlan::Replay& r : plan.replays) {
    if (r.graph < 0) {
      ++none;
      continue;
    }
    const ReplayMatch& m = plan.distinct[(size_t)r.d].m;
    ++(m.distance > 0 ? near : exact);
    tied += m.graphs.size() > 1;
  }
  h_.add("graph_replay_in_capture_trace", std::get<2>(plan.replayed.front()),
         fmt::format("GPU events the capture trace's own graph launches replayed (a capture trace is read for its "
                     "graphs, not loaded: these are neither kept nor attributed): {}, {} replays; of those, {} run "
                     "a graph read from this trace exactly, {} all but a few of its nodes, {} none ({} of them "
                     "matched by their place among equal graphs; docs/inference.md)",
                     gpu_time_share(replayed_ns, plan.all_ns), plan.replays.size(), exact, near, none, tied),
         (int64_t)plan.replayed.size());
}

// HTA's rule: a root on another thread of a process (the autograd engine's backward thread,
// a data-loader thread) belongs under the innermost annotation of the main thread that is open
// when it starts, so that a step's subtree holds all its work.
void ProfileTreeBuilder::attach_thread_roots() {
  auto step_marker = [&](const EventRec& e) {
    // ProfilerStep#N marks a step: a user_annotation today, an Operator in 2021-era traces.
    return (e.kind == Kind::annotation || e.kind == Kind::cpu_op) && profiler_step_number(name(e)).has_value();
  };
  // Main thread of each process: the one holding ProfilerStep annotations, else tid == pid.
  // Threads are searched for a marker on several workers (a thread without one is read to its
  // end), and the first thread of a process that holds one, in thread order, is its main thread.
  std::unordered_map<int64_t, int32_t> main_thread;  // integer pid (its Id32 code) -> thread index
  std::vector<uint8_t> has_marker(threads_.size());
  {
    const size_t workers = std::max<size_t>(1, std::min(threads_.size(), row_ranges(ev_.size()).parts));
    std::atomic<size_t> next{0};
    for_row_ranges(RowRanges{workers, workers}, [&](size_t, size_t, size_t) {
      for (size_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < threads_.size();)
        if (!(threads_[t].text & EventRec::pid_text))
          has_marker[t] = std::any_of(threads_[t].events.begin(), threads_[t].events.end(),
                                      [&](int32_t i) { return step_marker(ev_[i]); });
    });
  }
  for (int32_t t = 0; t < (int32_t)threads_.size(); ++t)
    if (has_marker[(size_t)t]) main_thread.emplace(threads_[(size_t)t].pid.v, t);
  for (int32_t t = 0; t < (int32_t)threads_.size(); ++t)
    if (!threads_[t].text && threads_[t].pid == threads_[t].tid && !threads_[t].events.empty())
      main_thread.emplace(threads_[t].pid.v, t);
  if (main_thread.empty()) return;

  auto by_start = [&](int32_t a, int32_t b) {
    return ev_[a].ts != ev_[b].ts ? ev_[a].ts < ev_[b].ts : ev_[a].dur != ev_[b].dur ? ev_[a].dur > ev_[b].dur : a < b;
  };
  std::unordered_map<int64_t, std::vector<int32_t>> threads_of;  // integer pid -> its threads
  for (int32_t t = 0; t < (int32_t)threads_.size(); ++t)
    if (!(threads_[t].text & EventRec::pid_text)) threads_of[threads_[t].pid.v].push_back(t);
  int64_t orphans = 0, example = -1;
  for (auto [pid, main] : main_thread) {
    // The main thread's annotations, found by ranges of its members at once, joined in order.
    const std::vector<int32_t>& members = threads_[main].events;
    const RowRanges ranges = row_ranges(members.size());
    std::vector<std::vector<int32_t>> found(ranges.parts);
    for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
      for (size_t k = begin; k < end; ++k)
        if (const int32_t i = members[k];
            (ev_[i].kind == Kind::annotation || step_marker(ev_[i])) && ev_[i].dur != kNull)
          found[part].push_back(i);
    });
    std::vector<int32_t> anns = join_parts(found), roots;
    if (anns.empty()) continue;  // nothing to attach to: these roots are simply roots
    for (int32_t t : threads_of[pid])
      if (t != main)
        for (int32_t i : threads_[t].events)
          if (ev_[i].parent < 0) roots.push_back(i);
    std::sort(anns.begin(), anns.end(), by_start);
    std::sort(roots.begin(), roots.end(), by_start);
    std::vector<int32_t> open;  // annotations containing the current time, outermost first
    size_t a = 0;
    for (int32_t r : roots) {
      while (a < anns.size() && ev_[anns[a]].ts <= ev_[r].ts) {
        while (!open.empty() && ev_[open.back()].end() <= ev_[anns[a]].ts) open.pop_back();
        open.push_back(anns[a++]);
      }
      while (!open.empty() && ev_[open.back()].end() <= ev_[r].ts) open.pop_back();
      if (!open.empty()) {
        ev_[r].parent = open.back();
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

// A row's depth is a function of the tree alone, so ranges of rows walk up their chains at once,
// sharing what each learns: a depth another thread is writing is read as unknown (-1) or as the
// one value it can be (relaxed atomics), and at worst a chain is walked twice.
void ProfileTreeBuilder::compute_depths() {
  const int32_t n = (int32_t)ev_.size();
  std::vector<int32_t> depth(n, -1);
  const RowRanges ranges = row_ranges((size_t)n);
  for_row_ranges(ranges, [&](size_t, size_t begin, size_t end) {
    auto get = [&](int32_t i) { return std::atomic_ref<int32_t>(depth[(size_t)i]).load(std::memory_order_relaxed); };
    auto put = [&](int32_t i, int32_t d) {
      std::atomic_ref<int32_t>(depth[(size_t)i]).store(d, std::memory_order_relaxed);
    };
    std::vector<int32_t> chain;
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {
      int32_t j = i;
      chain.clear();
      // Parents always come from an earlier stage (host stack, launch, annotation), so chains end
      // at a root; the length bound only guards against a builder bug.
      while (get(j) < 0 && ev_[j].parent >= 0 && (int32_t)chain.size() < n) {
        chain.push_back(j);
        j = ev_[j].parent;
      }
      int32_t d = get(j);
      if (d < 0) put(j, d = 0);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) put(*it, ++d);
    }
  });
  for_row_ranges(ranges, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) ev_[i].depth = depth[i];
  });
}

void ProfileTreeBuilder::assign_steps() {
  struct Step {
    int64_t ts, end;
    int32_t n;
  };
  const RowRanges ranges = row_ranges(ev_.size());
  std::vector<std::vector<Step>> found(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const EventRec& e = ev_[i];
      if ((e.kind == Kind::annotation || e.kind == Kind::cpu_op) && e.dur != kNull && e.ts != kNull)
        if (auto n = profiler_step_number(name(e))) found[part].push_back({e.ts, e.ts + e.dur, (int32_t)*n});
    }
  });
  std::vector<Step> steps = join_parts(found);  // in row order, as one pass would list them
  if (steps.empty()) return;
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.ts < b.ts; });
  // Host events first, everywhere, then GPU events from their launch's step (a GPU event's
  // parent is a runtime call, a host event: the second pass reads only what the first wrote).
  for_row_ranges(ranges, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      EventRec& e = ev_[i];
      if (!is_host_node(e.kind) || e.ts == kNull || e.ph == 'E') continue;
      auto it = std::upper_bound(steps.begin(), steps.end(), e.ts, [](int64_t ts, const Step& s) { return ts < s.ts; });
      if (it != steps.begin() && e.ts < std::prev(it)->end) e.step = std::prev(it)->n;
    }
  });
  for_row_ranges(ranges, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      EventRec& e = ev_[i];
      if (is_gpu_side(e.kind) && e.parent >= 0) e.step = ev_[e.parent].step;
    }
  });
}

// A backward op's forward op: by the fwdbwd flow when the trace has one, else as PyTorch's
// profiler draws those flows: the last forward op (by start) with the same "Sequence number".
// Ops that create no autograd node only peek the counter, so several share a number and the
// one that created the node is the last of them (aten::to, _to_copy, ..., aten::gather).
void ProfileTreeBuilder::link_backward_to_forward(Health& h) {
  if (std::none_of(ev_.begin(), ev_.end(), [](const EventRec& e) { return e.is(EventRec::backward); })) return;

  // A forward op by (process, seq, start, depth): sequence numbers count per process (every DDP
  // rank's move together), so a backward op is matched within its own process.
  struct Fwd {
    int64_t process;
    Id32 seq;
    int64_t ts;
    int32_t depth, idx;
  };
  auto process_of = [](const EventRec& e) { return (int64_t)e.pid.v << 1 | (e.is(EventRec::pid_text) ? 1 : 0); };
  const RowRanges ranges = row_ranges(ev_.size());
  std::vector<std::vector<Fwd>> forward_found(ranges.parts);
  std::vector<std::vector<std::pair<Id32, int32_t>>> fwdbwd_found(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {
      const EventRec& e = ev_[i];
      if (e.kind == Kind::cpu_op && !e.seq.null() && !e.is(EventRec::backward) && e.ts != kNull)
        forward_found[part].push_back({process_of(e), e.seq, e.ts, e.depth, i});
      else if (e.kind == Kind::flow && !e.is(EventRec::flow_text) && !e.flow_id.null() && cat(e) == "fwdbwd")
        fwdbwd_found[part].emplace_back(e.flow_id, i);
    }
  });
  // In row order, as one pass lists them: std::sort's order of equal keys follows its input.
  std::vector<Fwd> forward = join_parts(forward_found);
  std::vector<std::pair<Id32, int32_t>> fwdbwd = join_parts(fwdbwd_found);  // (flow id, row)
  // Sorted by (process, seq, ts, depth): the last entry of a (process, seq) is the op that made the
  // node.
  std::sort(forward.begin(), forward.end(), [](const Fwd& a, const Fwd& b) {
    return std::tie(a.process, a.seq, a.ts, a.depth) < std::tie(b.process, b.seq, b.ts, b.depth);
  });
  auto same_seq_before = [](const Fwd& a, const Fwd& b) {
    return std::tie(a.process, a.seq) < std::tie(b.process, b.seq);
  };

  if (!fwdbwd.empty()) {
    std::sort(fwdbwd.begin(), fwdbwd.end());
    // The outermost cpu_op (and the outermost backward one) at each place the flows name.
    struct Outermost {
      int32_t any = -1, backward = -1;
    };
    std::unordered_map<Place, Outermost, PlaceHash> at;
    for (auto [id, i] : fwdbwd) at.emplace(Place{thread_of_[i], ev_[i].ts}, Outermost{});
    auto outer = [&](int32_t& best, int32_t i) {
      if (best < 0 || ev_[i].depth < ev_[best].depth) best = i;
    };
    // A thread's ops are looked up by ranges at once; the hits are then applied in its order
    // (the first of equal depth wins, as in one walk).
    using Hit = std::pair<Outermost*, int32_t>;
    for (const Thread& th : threads_) {
      const RowRanges ranges = row_ranges(th.events.size());
      std::vector<std::vector<Hit>> hits(ranges.parts);
      for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
        for (size_t k = begin; k < end; ++k)
          if (const int32_t i = th.events[k]; ev_[i].kind == Kind::cpu_op)
            if (auto it = at.find({thread_of_[i], ev_[i].ts}); it != at.end()) hits[part].emplace_back(&it->second, i);
      });
      for (const auto& part : hits)
        for (auto [o, i] : part) {
          outer(o->any, i);
          if (ev_[i].is(EventRec::backward)) outer(o->backward, i);
        }
    }
    auto outermost_at = [&](int32_t flow, bool want_backward) {
      auto it = at.find({thread_of_[flow], ev_[flow].ts});
      return it == at.end() ? -1 : want_backward ? it->second.backward : it->second.any;
    };
    for (size_t k = 0; k + 1 < fwdbwd.size(); ++k) {
      if (fwdbwd[k].first != fwdbwd[k + 1].first) continue;
      int32_t a = fwdbwd[k].second, b = fwdbwd[k + 1].second;
      if (ev_[a].ph != 's') std::swap(a, b);
      int32_t f = outermost_at(a, false), bw = outermost_at(b, true);
      if (f >= 0 && bw >= 0) ev_[bw].fwd = f;
    }
  }
  // Each range of rows links its own backward ops; what it counts is merged in range order.
  std::vector<Health> health(ranges.parts);
  std::vector<std::vector<int32_t>> no_forward(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    std::string buf;
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {
      EventRec& e = ev_[i];
      if (!e.is(EventRec::backward) || e.fwd >= 0 || e.kind != Kind::cpu_op || e.seq.null()) continue;
      auto [lo, hi] =
          std::equal_range(forward.begin(), forward.end(), Fwd{process_of(e), e.seq, 0, 0, 0}, same_seq_before);
      // The forward op on the thread the backward op names ("Fwd thread id", as PyTorch links
      // them), else the process's last of that seq.
      if (lo != hi) {
        auto pick = std::prev(hi);
        if (const int64_t fwd_tid = args_ ? forward_thread(args_of(*args_, e, buf)) : kNull; fwd_tid != kNull)
          for (auto f = hi; f != lo; --f) {
            const EventRec& c = ev_[std::prev(f)->idx];
            if (!c.is(EventRec::tid_text) && c.tid.v == fwd_tid) {
              pick = std::prev(f);
              break;
            }
          }
        e.fwd = pick->idx;
      } else
        health[part].add(
            "backward_without_forward", i,
            "backward ops whose forward op (same Sequence number) is not in the trace: expected when the profile "
            "starts after a forward pass, and with pipeline-parallel schedules (1F1B, interleaved, DualPipe), whose "
            "backward chunks run for forward passes of earlier micro-batches or steps; gpu_events_affected counts the "
            "GPU events they launched"),
            no_forward[part].push_back(i);
    }
  });
  for (const Health& p : health) h.merge(p);
  no_forward_ = join_parts(no_forward);
}

void ProfileTreeBuilder::find_launchers() {
  // The launcher above a node depends only on that node, and graph replays put thousands of
  // kernels on one runtime call under deep python stacks: each node's answer is remembered
  // (kUnknown until walked), so the walks together visit every node once.
  // Ranges of rows share the memo as compute_depths does: an answer is read as unknown or as
  // the one value it can be.
  constexpr int32_t kUnknown = -2;
  std::vector<int32_t> above(ev_.size(), kUnknown);
  auto launcher_above = [&](int32_t p, std::vector<int32_t>& path) {
    auto memo = [&](int32_t i) { return std::atomic_ref<int32_t>(above[(size_t)i]); };
    int32_t found = -1;  // -1: none (the runtime call launches itself)
    path.clear();
    for (; p >= 0; p = ev_[p].parent) {
      if (const int32_t known = memo(p).load(std::memory_order_relaxed); known != kUnknown) {
        found = known;
        break;
      }
      const EventRec& e = ev_[p];
      if (e.kind == Kind::cpu_op && name(e) != "execute") {  // pass-through op (conv_bn_fused -> execute -> launch)
        found = p;
        break;
      }
      // Python frames and annotations (record_function ranges such as nccl:all_reduce under
      // record_param_comms) are passed over: the op above them launched the work.
      if (e.kind != Kind::cpu_op && e.kind != Kind::python && e.kind != Kind::annotation) break;
      path.push_back(p);
    }
    for (int32_t q : path) memo(q).store(found, std::memory_order_relaxed);
    return found;
  };
  const RowRanges ranges = row_ranges(ev_.size());
  std::vector<std::vector<LaunchLink>> found(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t begin, size_t end) {
    std::vector<int32_t> path;
    for (int32_t i = (int32_t)begin; i < (int32_t)end; ++i) {
      const EventRec& g = ev_[i];
      if (!(g.kind == Kind::kernel || g.kind == Kind::memcpy || g.kind == Kind::memset) || g.parent < 0) continue;
      // A replay attributed to its capture hangs under the capture-time launch call; the call that
      // launched it at run time is the graph launch.
      const int32_t call = g.parent, launcher = launcher_above(ev_[call].parent, path);
      const auto replay = graph_launch_of_.find(i);
      found[part].push_back(
          {i, replay == graph_launch_of_.end() ? call : replay->second, launcher >= 0 ? launcher : call});
    }
  });
  launches_ = join_parts(found);
}

// Children of every event as CSR, in row order: children(uid) and descendants cost O(answer).
// Ranges of rows count and place children at once (atomic counters): a parent's children then
// sit in the order the threads reached them, and sorting each parent's list restores row order
// (lists are short, and already in order where one range placed them all).
void ProfileTreeBuilder::build_children() {
  const size_t n = ev_.size();
  auto& start = t_.child_start;
  start.assign(n + 1, 0);
  const RowRanges ranges = row_ranges(n);
  const bool one = ranges.parts == 1;
  for_row_ranges(ranges, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      if (const int32_t p = ev_[i].parent; p >= 0) {
        if (one)
          ++start[(size_t)p + 1];
        else
          std::atomic_ref(start[(size_t)p + 1]).fetch_add(1, std::memory_order_relaxed);
      }
  });
  for (size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  t_.children.resize(start[n]);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for_row_ranges(ranges, [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      if (const int32_t p = ev_[i].parent; p >= 0) {
        const uint32_t at =
            one ? fill[(size_t)p]++ : std::atomic_ref(fill[(size_t)p]).fetch_add(1, std::memory_order_relaxed);
        t_.children[at] = (uint32_t)i;
      }
  });
  if (one) return;
  for_row_ranges(ranges, [&](size_t, size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      auto first = t_.children.begin() + start[p], last = t_.children.begin() + start[p + 1];
      if (!std::is_sorted(first, last)) std::sort(first, last);
    }
  });
}

}  // namespace tlsql
