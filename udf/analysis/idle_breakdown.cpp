// idle_breakdown([steps [, threshold_us [, schema]]]): HTA's GPU idle time breakdown
// (get_idle_time_breakdown), per trace and stream: the gap before each GPU event (kernel, memcpy,
// memset) on its stream, in (ts, uid) order, is host_wait when the event's launch call started
// after the previous event ended (the CPU was late), else kernel_wait when shorter than
// threshold_us (default 30, HTA's), else other. Rows: trace, stream, category ('host_wait',
// 'kernel_wait', 'other': all three for every stream with a GPU event in scope, 0 where none),
// idle_ns; in that order. steps: 'complete' (default: the GPU work gpu_steps.complete keeps, HTA's
// scope), 'all', or a step number, as the idle report's @steps.
//
// The events in scope and their launch times come from the gpu_steps view (which decides
// `complete`); the stream order and the gaps are worked out here: as a window (lag() OVER each
// stream) SQLite sorted and re-read every GPU event, 0.13 s of the idle report's 0.25 s past a
// 200 MB trace's load. DIRECTONLY: it runs SQL of its own (docs/extending.md).
//
// Where it departs from that SQL: GPU events with no stream form one stream, their gaps counted
// (the report joined its sums back on `stream =`, which no NULL matches, and said 0); a gap or a
// sum past int64 is clamped at its limit (hostile times), where SQL's arithmetic went over to REAL.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/sqlite_util.h"
#include "src/trace_model.h"
#include "udf/analysis/view_statement.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {
namespace {

constexpr std::array<const char*, 3> kCategories{"host_wait", "kernel_wait", "other"};

// `gap < threshold` as SQLite compares an integer with the threshold's value (an integer, a real,
// or NULL: never), exactly: a gap of 10^16 - 1 ns is below a threshold of 10^16.0, which a double
// cannot tell from it.
class Threshold {
 public:
  Threshold() = default;
  Threshold(sqlite3_stmt* q, int col) : type_(sqlite3_column_type(q, col)) {
    if (type_ == SQLITE_INTEGER) i_ = sqlite3_column_int64(q, col);
    if (type_ == SQLITE_FLOAT) r_ = sqlite3_column_double(q, col);
  }
  bool below(int64_t gap) const {  // gap < threshold
    if (type_ == SQLITE_INTEGER) return gap < i_;
    if (type_ != SQLITE_FLOAT || std::isnan(r_)) return false;
    if (r_ >= 0x1p63) return true;
    if (r_ < -0x1p63) return false;
    const double whole = std::floor(r_);  // in [-2^63, 2^63): exact as an int64
    const auto w = (int64_t)whole;
    return gap < w || (gap == w && r_ > whole);
  }

 private:
  int type_ = SQLITE_INTEGER;
  int64_t i_ = 30000;  // (no row read: HTA's 30 us)
  double r_ = 0;
};

struct IdleBreakdown {
  struct Row {
    int64_t trace;
    std::optional<int64_t> stream;
    const char* category;
    int64_t idle_ns;
  };
  static constexpr bool direct_only = true;
  static constexpr TableArgument arguments[] = {
      {"steps", "steps"}, {"threshold_us", "threshold_us"}, {"schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<IdleBreakdown, Row>>({{"trace", "INTEGER", field<&Row::trace>},
                                                           {"stream", "INTEGER", field<&Row::stream>},
                                                           {"category", "TEXT", field<&Row::category>},
                                                           {"idle_ns", "INTEGER", field<&Row::idle_ns>}});
  }

  std::vector<Row> rows(const TableCall& call) {
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(2), own);
    // The scope and the threshold as SQL reads them (a step number given as text, a threshold of
    // 2.5 or '30'), the report's own expressions; the threshold in ns.
    auto st = view_statement(
        events, "gpu_steps",
        "SELECT g.trace, g.stream, g.ts, g.end, g.uid, r.ts, coalesce(?2, 30) * 1000 "
        "FROM {v}.gpu_steps g LEFT JOIN {s}.launch_link l ON l.gpu = g.uid LEFT JOIN {s}.event r ON r.uid = l.runtime "
        "WHERE CASE coalesce(?1, 'complete') WHEN 'all' THEN 1 WHEN 'complete' THEN g.complete ELSE g.step = ?1 END");
    if (call.arg(0)) sqlite3_bind_value(st->get(), 1, call.arg(0));
    if (call.arg(1)) sqlite3_bind_value(st->get(), 2, call.arg(1));
    struct Event {
      int64_t trace, stream, ts, end, uid, launch;  // stream, ts, end, launch: kNone when NULL
    };
    constexpr int64_t kNone = INT64_MIN;  // (sorts first, as SQLite's NULL)
    std::vector<Event> in;
    Threshold threshold;
    while (st->step()) {
      sqlite3_stmt* q = st->get();
      auto integer = [&](int c) {
        return sqlite3_column_type(q, c) == SQLITE_NULL ? kNone : sqlite3_column_int64(q, c);
      };
      in.push_back(
          {sqlite3_column_int64(q, 0), integer(1), integer(2), integer(3), sqlite3_column_int64(q, 4), integer(5)});
      threshold = Threshold(q, 6);
    }
    // lag(end) OVER (PARTITION BY trace, stream ORDER BY ts, uid), then the report's CASE.
    std::sort(in.begin(), in.end(), [](const Event& a, const Event& b) {
      return std::tie(a.trace, a.stream, a.ts, a.uid) < std::tie(b.trace, b.stream, b.ts, b.uid);
    });
    std::vector<Row> out;
    for (size_t i = 0; i < in.size();) {
      const Event& first = in[i];
      std::array<int64_t, 3> ns{};
      size_t j = i + 1;
      for (; j < in.size() && in[j].trace == first.trace && in[j].stream == first.stream; ++j) {
        const Event &e = in[j], &prev = in[j - 1];
        // (a NULL before it: no gap, as `WHERE prev_end IS NOT NULL`; a NULL ts: a NULL gap, which
        // sum() skips)
        if (prev.end == kNone || e.ts == kNone) continue;
        const int64_t gap = sat_sub(e.ts, prev.end);
        const size_t c = e.launch != kNone && e.launch > prev.end ? 0 : threshold.below(gap) ? 1 : 2;
        ns[c] = sat_add(ns[c], gap);
      }
      for (size_t c = 0; c < kCategories.size(); ++c)
        out.push_back({first.trace, first.stream == kNone ? std::nullopt : std::optional<int64_t>(first.stream),
                       kCategories[c], ns[c]});
      i = j;
    }
    return out;
  }
};

}  // namespace

std::vector<SqlFunction> idle_breakdown_functions() {
  return {table_function<IdleBreakdown>(
      "idle_breakdown", "table: GPU idle ns per trace, stream and category (host_wait, kernel_wait, other): HTA's")};
}
TLSQL_FUNCTIONS(idle_breakdown_functions);

}  // namespace tlsql
