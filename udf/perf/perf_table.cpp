#include "udf/perf/perf_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "args/op_args.h"
#include "src/args_text.h"
#include "src/event_table.h"
#include "src/kind.h"
#include "src/parallel.h"
#include "src/readers/pipeline.h"
#include "src/serving_step.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"
#include "udf/connection_cache.h"
#include "udf/interval_union.h"
#include "udf/perf/perf_cache.h"
#include "udf/perf/perf_model.h"
#include "udf/perf/user_models.h"
#include "udf/statement_memo.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

void TraceStats::add(Kind k, std::optional<int64_t> ts, std::optional<int64_t> end, std::optional<int64_t> step) {
  ++kinds[(size_t)k];
  if (!ts) return;  // the span and steps count events with a start (as the summary's SQL did)
  timed = true;
  first_start = std::min(first_start, *ts);
  if (end) last_end = std::max(last_end.value_or(INT64_MIN), *end);
  if (step && step != recent_step) steps.insert(*step), recent_step = step;  // (rows come in runs of one step)
}

void TraceStats::merge(const TraceStats& o) {
  for (size_t k = 0; k < kinds.size(); ++k) kinds[k] += o.kinds[k];
  timed = timed || o.timed;
  first_start = std::min(first_start, o.first_start);
  if (o.last_end) last_end = std::max(last_end.value_or(INT64_MIN), *o.last_end);
  steps.insert(o.steps.begin(), o.steps.end());
}

int32_t PerfTable::trace_of(size_t r) const {
  // (the last run starting at or before r; the first starts at row 0)
  auto it = std::upper_bound(trace_runs.begin(), trace_runs.end(), r,
                             [](size_t row, const TraceRuns::value_type& run) { return row < run.first; });
  return it == trace_runs.begin() ? 0 : std::prev(it)->second;
}

int64_t PerfTable::row(int64_t uid) const {
  if (uids.empty()) {
    // (unsigned: a saved database's uids may lie anywhere in int64)
    if (uid < first_uid || (uint64_t)uid - (uint64_t)first_uid >= rows) return -1;
    return uid - first_uid;
  }
  auto it = std::lower_bound(uids.begin(), uids.end(), uid);
  return it != uids.end() && *it == uid ? it - uids.begin() : -1;
}

namespace {

// What the pass needs of each row, read from either source. Rows are in uid order.
struct Input {
  std::vector<int64_t> uids;  // empty: dense from first_uid
  int64_t first_uid = 0;
  // Per row: its parent's row (or -1), its kind, its name (index in `names`). A loaded store of one
  // trace lends its rows, read in place (`lent`: 9 bytes a row less at a save's peak); else these
  // are the pass's own arrays, filled from the store's traces or a saved database.
  std::vector<int32_t> parents;
  std::vector<Kind> kinds;
  std::vector<uint32_t> name_ids;
  const EventRec* lent = nullptr;
  uint32_t no_name = 0;  // an unnamed lent row's name
  size_t rows = 0;
  int32_t parent(size_t r) const { return lent ? lent[r].parent : parents[r]; }
  Kind kind(size_t r) const { return lent ? lent[r].kind : kinds[r]; }
  uint32_t name(size_t r) const {
    if (!lent) return name_ids[r];
    const uint32_t n = lent[r].name;
    return n == StringPool::kNone ? no_name : n;
  }
  std::vector<std::string_view> names;
  PerfTable::TraceRuns trace_runs;  // as PerfTable's (a saved database's rows)
  std::vector<int32_t> device;
  struct Interval {
    uint32_t row;
    int64_t ts, end;
  };
  std::vector<Interval> gpu;  // GPU work with a start and an end
  // Per row: the op's own model (index in own_models), or kNone. Made with the first model (4 bytes
  // a row at a save's peak, for nothing on a trace without shapes: an Nsight export's NVTX ops).
  std::vector<uint32_t> own;
  std::vector<OpPerf> own_models;
  uint32_t own_of(size_t r) const { return own.empty() ? PerfTable::kNone : own[r]; }
  void add_own(size_t r, OpPerf m) {
    if (own.empty()) own.assign(rows, PerfTable::kNone);
    own[r] = (uint32_t)own_models.size();
    own_models.push_back(std::move(m));
  }
  // Inductor-augmented rows and their numbers.
  std::vector<std::tuple<uint32_t, std::optional<double>, std::optional<double>>> augmented;
  std::vector<std::pair<uint32_t, uint32_t>> launches;  // (GPU row, launcher row)
  // The rows' children (CSR, each row's in row order) where the source has them: a loaded store
  // of one trace (its tree's own). Empty: the pass makes them from `parent`.
  std::span<const uint32_t> child_start, children;
  std::vector<std::pair<uint32_t, std::string>> per_step;  // kStepModel rows, until model_per_step
  std::map<int64_t, TraceStats> traces;
  const UserModels* user = nullptr;  // the connection's own models, or none

  size_t size() const { return rows; }
};

// How an op's own model is computed: none; from its args (parse_args); from its args and its
// serving step's lengths (model_per_step, once the rows' parents are known).
constexpr uint8_t kNoModel = 0, kOwnModel = 1, kStepModel = 2;

// An FX / record_function marker's name (SQL: name GLOB '## * ##').
bool is_marker(std::string_view s) {
  return s.size() >= 6 && s.substr(0, 3) == "## " && s.substr(s.size() - 3) == " ##";
}

// Per name: does it have a model, its family, is it an FX marker. Names repeat millions of times.
class NameFacts {
 public:
  // `names` may grow while this is in use (a saved database's names are interned as rows are read).
  // `user`: the connection's own models (user_models.h), which add names and override categories.
  explicit NameFacts(const std::vector<std::string_view>& names, const UserModels* user = nullptr)
      : names_(names), user_(user) {}
  bool has_model(uint32_t n) { return get(n).has_model; }
  // How parse_args models an op of this name (kNoModel, kOwnModel, kStepModel).
  uint8_t modeled(uint32_t n) {
    const Facts& f = get(n);
    return !f.has_model ? kNoModel : f.per_step ? kStepModel : kOwnModel;
  }
  uint32_t family_bit(uint32_t n) { return get(n).family_bit; }
  uint32_t family(uint32_t n) { return get(n).family; }
  // The families numbered so far: while at most 32, no two share a bit.
  size_t families() const { return families_.size(); }
  bool tf32(uint32_t n) { return get(n).tf32; }
  // The row's gpu_classes bits for a GPU event of kind k (kernel, memcpy, memset) named n.
  uint16_t gpu_classes(uint32_t n, Kind k) {
    Facts& f = get(n);
    const size_t i = k == Kind::kernel ? 0 : k == Kind::memcpy ? 1 : 2;
    if (!f.classes_known[i]) {
      f.classes[i] = 0;
      for (int rule = 0; rule < kGpuRules; ++rule)
        f.classes[i] |= (uint16_t)((uint16_t)classify_gpu(k, names_[n], (GpuRule)rule) << (3 * rule));
      f.classes_known[i] = true;
    }
    return f.classes[i];
  }

  struct Facts {
    bool known = false, has_model = false, per_step = false, marker = false, link_copy = false, tf32 = false;
    bool classes_known[3] = {false, false, false};  // by kind: kernel, memcpy, memset
    uint16_t classes[3] = {0, 0, 0};
    uint32_t family_bit = 0, family = 0;  // (family: its index, numbered in the order first met)
  };
  // The facts of name n made now (warm), then read without a write (seen) by the threads of a pass
  // over the tree. (The order names are first met in numbers their families: a serial pass warms.)
  void warm(uint32_t n) { get(n); }
  const Facts& seen(uint32_t n) const { return facts_[n]; }

 private:
  Facts& get(uint32_t n) {
    if (n >= facts_.size()) facts_.resize(names_.size());
    Facts& f = facts_[n];
    if (f.known) return f;
    std::string_view s = names_[n];
    f.known = true;
    f.has_model = has_perf_model(user_, s);
    f.per_step = f.has_model && model_needs_step(s);
    const std::string fam = op_category(user_, s);
    auto it = std::find(families_.begin(), families_.end(), fam);
    if (it == families_.end()) it = families_.insert(families_.end(), fam);
    // A copy_ below an op converts an operand (add_ of a long to a float tensor casts it first):
    // it never makes the op a wrapper. (The ops whose work is a copy_, to / clone / contiguous,
    // have no model of their own.)
    f.family = (uint32_t)(it - families_.begin());
    f.family_bit = s == "aten::copy_" ? 0u : 1u << (f.family % 32);
    f.marker = is_marker(s);
    f.link_copy = memcpy_over_link(s);
    f.tf32 = tf32_kernel(s);
    return f;
  }
  const std::vector<std::string_view>& names_;
  const UserModels* user_;
  std::vector<Facts> facts_;
  std::vector<std::string> families_;
};

// The per-row work both sources share: inductor's numbers, and the op's own model (`modeled`:
// a cpu_op whose name has one). Pure, so rows can be parsed on several threads.
struct Parsed {
  std::vector<std::pair<uint32_t, OpPerf>> own;
  std::vector<std::tuple<uint32_t, std::optional<double>, std::optional<double>>> augmented;
  std::vector<std::pair<uint32_t, std::string>> per_step;  // kStepModel rows and their args, for model_per_step
  OpModelMemo memo;                                        // this thread's
};
void parse_args(uint32_t row, std::string_view name, uint8_t modeled, std::string_view args, Parsed& out) {
  // (A plain search for "kernel_" first: '"' starts most of an args text, 'k' little of it.)
  if (args.find("kernel_") != std::string_view::npos && (args.find("\"kernel_flop\"") != std::string_view::npos ||
                                                         args.find("\"kernel_num_gb\"") != std::string_view::npos)) {
    auto j = args::parse_bounded(args);
    if (j.is_object() && (j.contains("kernel_flop") || j.contains("kernel_num_gb"))) {
      std::optional<double> f, b;
      if (j.contains("kernel_flop") && j["kernel_flop"].is_number()) f = j["kernel_flop"].get<double>();
      if (j.contains("kernel_num_gb") && j["kernel_num_gb"].is_number()) b = j["kernel_num_gb"].get<double>() * 1e9;
      out.augmented.emplace_back(row, f, b);
    }
  }
  if (modeled == kStepModel)
    out.per_step.emplace_back(row, args);
  else if (modeled == kOwnModel)
    if (auto m = out.memo.model(name, args)) out.own.emplace_back(row, std::move(*m));
}
// The parts' models, in part order. (Moved into one array reserved for all of them: grown as they
// came, the moves and fresh pages of each doubling took 6-24 ms of a 200 MB trace's pass,
// serially. model_per_step may add a serving step's few after.)
void add_parsed(Input& in, std::span<Parsed> parts) {
  size_t owns = in.own_models.size();
  for (const Parsed& p : parts) owns += p.own.size();
  in.own_models.reserve(owns);
  for (Parsed& p : parts) {
    for (auto& [r, m] : p.own) in.add_own(r, std::move(m));
    in.augmented.insert(in.augmented.end(), p.augmented.begin(), p.augmented.end());
    in.per_step.insert(in.per_step.end(), std::make_move_iterator(p.per_step.begin()),
                       std::make_move_iterator(p.per_step.end()));
  }
}

// The models of kStepModel ops (attention of a serving step): each op reads the lengths of the
// nearest serving-step annotation above it (serving_step; none, or one without the sq/sk
// aggregates: no model). Run once the rows' parents are known. What the ops below a row see is
// remembered for every row walked, so each row is walked once however many ops lie below it, and
// a loop of parent links (a hand-edited database) ends the walk where it meets itself.
void model_per_step(Input& in) {
  if (in.per_step.empty()) return;
  std::unordered_map<int32_t, std::optional<StepLengths>> seen;  // row -> the lengths the ops below it see
  std::vector<int32_t> path;
  OpModelMemo memo;
  for (auto& [r, args] : in.per_step) {
    std::optional<StepLengths> lengths;
    path.clear();
    for (int32_t p = in.parent(r); p >= 0; p = in.parent((size_t)p)) {
      if (auto it = seen.find(p); it != seen.end()) {
        lengths = it->second;
        break;
      }
      if (in.kind((size_t)p) == Kind::annotation)
        if (auto st = serving_step(Kind::annotation, in.names[in.name((size_t)p)])) {
          lengths = seen[p] = st->lengths;
          break;
        }
      seen.emplace(p, std::nullopt);  // (until the walk ends; met again, it is a loop)
      path.push_back(p);
    }
    for (int32_t p : path) seen[p] = lengths;
    if (auto m = memo.model(in.names[in.name(r)], args, lengths ? &*lengths : nullptr)) in.add_own(r, std::move(*m));
  }
  in.per_step = {};
}

// (GPU event uid, launcher uid) of each launch link: the one input of the pass read through SQL
// even for a loaded trace (launch_link is a table of the session's database).
using LaunchUids = std::vector<std::pair<int64_t, int64_t>>;
LaunchUids read_launches(sqlite3* db, const std::string& schema) {
  LaunchUids out;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, fmt::format("SELECT gpu, launcher FROM {}.launch_link", schema_sql(db, schema)).c_str(),
                         -1, &s, nullptr) == SQLITE_OK)
    while (sqlite3_step(s) == SQLITE_ROW) out.emplace_back(sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
  sqlite3_finalize(s);
  return out;
}
void add_launches(const LaunchUids& links, Input& in, const PerfTable& t) {
  for (auto [gpu, launcher] : links) {
    int64_t g = t.row(gpu), l = t.row(launcher);
    if (g >= 0 && l >= 0) in.launches.emplace_back((uint32_t)g, (uint32_t)l);
  }
}

// The store's positions [from, to) a trace's run at a time: f(trace, first position, end position,
// the first position's row in the trace).
template <typename F>
void for_trace_runs(const EventStore& s, int64_t from, int64_t to, F&& f) {
  for (int64_t pos = from; pos < to;) {
    int64_t local;
    const LoadedTrace& t = s.trace_at(pos, local);
    const int64_t end = std::min(to, pos + ((int64_t)t.rows.size() - local));
    if (end <= pos) break;  // (positions past the last trace's rows: none to read)
    f(t, pos, end, local);
    pos = end;
  }
}

// The in-memory store: rows by position (uid - first_uid), names from its pool; its trace and
// device columns after the pass (store_trace_device).
void read_store(const EventStore& s, Input& in) {
  const size_t n = (size_t)s.total_rows;
  in.first_uid = s.first_uid;
  in.rows = n;
  // A store of one trace, its rows the store's from the first uid on: the pass reads its rows in
  // place (Input::lent) and its tree's children (below).
  const LoadedTrace* only = s.traces.size() == 1 ? s.traces[0].get() : nullptr;
  if (only && (only->uid_base != s.first_uid || only->rows.size() != n)) only = nullptr;
  if (only)
    in.lent = only->rows.begin();
  else
    in.parents.assign(n, -1), in.kinds.resize(n), in.name_ids.resize(n);
  in.names.reserve(s.strings.size() + 1);
  for (size_t i = 0; i < s.strings.size(); ++i) in.names.push_back(s.strings.get((uint32_t)i));
  const uint32_t no_name = in.no_name = (uint32_t)in.names.size();
  in.names.push_back({});
  std::vector<uint8_t> modeled(n, kNoModel);  // of cpu_ops whose name has a model
  // The rows in ranges on the load's threads (none under 32K rows), what each collects joined in
  // range order: the GPU intervals in row order, the traces' stats (sums, bounds and sets: merged
  // as one walk adds them), the rows with a parent. (`modeled` is set after, below.)
  struct Head {
    size_t linked = 0;  // rows with a parent
    std::vector<Input::Interval> gpu;
    std::map<int64_t, TraceStats> traces;
  };
  const RowRanges ranges = split_rows(n, load_threads(), 32768);
  std::vector<Head> heads(ranges.parts);
  for_row_ranges(ranges, [&](size_t part, size_t from, size_t to) {
    Head& out = heads[part];
    for_trace_runs(s, (int64_t)from, (int64_t)to, [&](const LoadedTrace& t, int64_t pos, int64_t end, int64_t local) {
      const int64_t base = t.uid_base - s.first_uid;
      TraceStats& stats = out.traces[t.id];
      for (; pos < end; ++pos, ++local) {
        const EventRec& e = t.rows[(size_t)local];
        const auto r = (uint32_t)pos;
        out.linked += e.parent >= 0;
        if (!only) {
          if (e.parent >= 0) in.parents[r] = (int32_t)(base + e.parent);
          in.kinds[r] = e.kind;
          in.name_ids[r] = e.name == StringPool::kNone ? no_name : e.name;
        }
        const int64_t end_ns = e.end();
        if (is_gpu_work(e.kind) && e.ts != kNull && end_ns != kNull) out.gpu.push_back({r, e.ts, end_ns});
        stats.add(e.kind, e.ts == kNull ? std::nullopt : std::optional<int64_t>(e.ts),
                  end_ns == kNull ? std::nullopt : std::optional<int64_t>(end_ns),
                  e.step == EventRec::kNull32 ? std::nullopt : std::optional<int64_t>(e.step));
      }
    });
  });
  // Which ops have a model, by name: on one thread (a name's facts are a row of its own in a
  // table as long as the trace's names; one per thread was that many times the memory).
  NameFacts facts(in.names);
  for (size_t r = 0; r < n; ++r)
    if (in.kind(r) == Kind::cpu_op) modeled[r] = facts.modeled(in.name(r));
  size_t linked = 0;
  for (const auto& t : s.traces) in.traces[t->id];  // (a trace without rows has its stats too)
  size_t gpu_rows = 0;
  for (const Head& h : heads) gpu_rows += h.gpu.size();
  in.gpu.reserve(gpu_rows);
  for (Head& h : heads) {
    linked += h.linked;
    in.gpu.insert(in.gpu.end(), h.gpu.begin(), h.gpu.end());
    std::vector<Input::Interval>().swap(h.gpu);
    for (const auto& [id, stats] : h.traces) in.traces[id].merge(stats);
  }
  // One trace: its tree's children (the tree builder's last step, each row's in row order) are the
  // pass's, not made again (8 bytes a row of a save's peak).
  if (only && only->child_start.size() == n + 1 && only->child_start[n] == linked && only->children.size() == linked)
    in.child_start = only->child_start, in.children = only->children;
  // Parsing args is most of the pass: on the load's threads (none under 10K rows), each on a
  // range of rows, merged in row order.
  // Texts are decoded (args_text.h) only for ops with a model and for those that may hold
  // inductor's keys: as their tokens, or written out ("kernel_") in a text stored unkeyed or
  // where the dictionary refused them, which it does only once full (they are short).
  const RowRanges arg_ranges = split_rows(n, load_threads(), 10000);
  std::vector<Parsed> parsed(arg_ranges.parts);
  const std::string flop_token = args_text::key_token("kernel_flop", s.args.keys());
  const std::string gb_token = args_text::key_token("kernel_num_gb", s.args.keys());
  const bool refused = s.args.keys().size() >= args_text::kMaxKeys;
  auto holds = [](std::string_view text, const std::string& token) {
    return !token.empty() && text.find(token) != std::string_view::npos;
  };
  // An op's model reads three members: found in the encoded text (args_text::last_members) and
  // only their values decoded, unless a dictionary key is written with an escape (the whole
  // parse would read it as another key) or the walk cannot read the text as one object.
  const std::array<std::string, 3> member_keys{args_text::stored_key("Input Dims", s.args.keys()),
                                               args_text::stored_key("Input type", s.args.keys()),
                                               args_text::stored_key("Concrete Inputs", s.args.keys())};
  const std::array<std::string_view, 3> keys{member_keys[0], member_keys[1], member_keys[2]};
  bool escaped_key = false;
  for (size_t k = 0; k < s.args.keys().size(); ++k)
    escaped_key = escaped_key || s.args.keys().get((uint32_t)k).find('\\') != std::string_view::npos;
  auto parse = [&](int64_t from, int64_t to, Parsed& out) {
    std::string buf, values[3];
    std::array<std::string_view, 3> raw;
    for_trace_runs(s, from, to, [&](const LoadedTrace& t, int64_t pos, int64_t end, int64_t local) {
      for (; pos < end; ++pos, ++local) {
        const EventRec& e = t.rows[(size_t)local];
        if (!e.is(EventRec::has_args)) continue;
        const std::string_view stored = s.args.get(e.args, e.args_len);
        const uint8_t how = modeled[(size_t)pos];
        const bool inductor =
            holds(stored, flop_token) || holds(stored, gb_token) ||
            ((refused || !e.is(EventRec::keyed_args)) && stored.find("kernel_") != std::string_view::npos);
        if (how == kNoModel && !inductor) continue;
        const std::string_view name = in.names[in.name((size_t)pos)];
        if (how == kOwnModel && !inductor && !escaped_key && e.is(EventRec::keyed_args) &&
            args_text::last_members(stored, keys, raw)) {
          for (size_t k = 0; k < 3; ++k) raw[k] = args_text::member_value(raw[k], s.args.keys(), values[k]);
          if (auto m = out.memo.model_of_members(name, raw[0], raw[1], raw[2]))
            out.own.emplace_back((uint32_t)pos, std::move(*m));
          continue;
        }
        parse_args((uint32_t)pos, name, how, args_of(s.args, e, buf), out);
      }
    });
  };
  for_row_ranges(arg_ranges,
                 [&](size_t part, size_t from, size_t to) { parse((int64_t)from, (int64_t)to, parsed[part]); });
  add_parsed(in, parsed);
  model_per_step(in);
}

// Appends row `r`'s trace to `runs` (rows in order): a run starts where the trace changes.
void add_trace_run(PerfTable::TraceRuns& runs, uint64_t r, int32_t trace) {
  if (runs.empty() || runs.back().second != trace) runs.emplace_back(r, trace);
}

// The table's trace runs and device column of the store's rows: filled after the pass (which
// reads neither), not copied into the Input beside its scratch (a save's peak).
void store_trace_device(const EventStore& s, PerfTable& t) {
  t.trace_runs.clear();
  for_trace_runs(s, 0, (int64_t)t.rows, [&](const LoadedTrace& tr, int64_t pos, int64_t, int64_t) {
    add_trace_run(t.trace_runs, (uint64_t)pos, (int32_t)tr.id);
  });
  t.device.resize(t.rows);
  for_row_ranges(split_rows(t.rows, load_threads(), 32768), [&](size_t, size_t from, size_t to) {
    for_trace_runs(s, (int64_t)from, (int64_t)to, [&](const LoadedTrace& tr, int64_t pos, int64_t end, int64_t local) {
      for (; pos < end; ++pos, ++local) {
        const int32_t device = tr.rows[(size_t)local].device;
        t.device[(size_t)pos] = device == EventRec::kNull32 ? -1 : device;
      }
    });
  });
}

// A saved database is read in uid ranges, each by one thread on its own connection.
struct SavedPart {
  std::vector<int64_t> uids, parent_uid;  // parent INT64_MIN: none
  std::vector<Kind> kind;
  std::vector<uint32_t> name;  // in `names`
  std::vector<std::string_view> names;
  std::deque<std::string> name_text;  // what `names` views
  PerfTable::TraceRuns trace_runs;    // rows within the part
  std::vector<int32_t> device;
  std::vector<Input::Interval> gpu;  // rows within the part
  Parsed parsed;                     // rows within the part
  std::map<int64_t, TraceStats> traces;
  std::string error;
};

// Rows lo <= uid <= hi of `schema`.event on `db` (inclusive: hi may be the largest int64). Only the args that can
// matter are read (ops, and events that mention inductor's numbers).
void scan_saved(sqlite3* db, const std::string& schema, int64_t lo, int64_t hi, SavedPart& p) {
  sqlite3_stmt* s = nullptr;
  const std::string sql = fmt::format(
      "SELECT uid, parent, kind, name, ts, end, trace, device, "
      "CASE WHEN kind = 'cpu_op' OR instr(args, '\"kernel_') THEN args END, step FROM {}.event "
      "WHERE uid >= ?1 AND uid <= ?2 ORDER BY uid",
      schema_sql(db, schema));
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    p.error = fmt::format("no tlsql event table in schema '{}' ({})", schema, sqlite3_errmsg(db));
    return;
  }
  sqlite3_bind_int64(s, 1, lo);
  sqlite3_bind_int64(s, 2, hi);
  std::unordered_map<std::string_view, uint32_t> ids;
  NameFacts facts(p.names);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const auto r = (uint32_t)p.uids.size();
    p.uids.push_back(sqlite3_column_int64(s, 0));
    p.parent_uid.push_back(sqlite3_column_type(s, 1) == SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(s, 1));
    auto text = [&](int c) {
      const unsigned char* t = sqlite3_column_text(s, c);
      return t ? std::string_view((const char*)t, (size_t)sqlite3_column_bytes(s, c)) : std::string_view();
    };
    p.kind.push_back(kind_from_name(text(2)));
    std::string_view name = text(3);
    auto it = ids.find(name);
    if (it == ids.end()) {
      p.name_text.emplace_back(name);
      it = ids.emplace(p.name_text.back(), (uint32_t)p.names.size()).first;
      p.names.push_back(p.name_text.back());
    }
    p.name.push_back(it->second);
    add_trace_run(p.trace_runs, r, (int32_t)sqlite3_column_int64(s, 6));
    p.device.push_back(sqlite3_column_type(s, 7) == SQLITE_NULL ? -1 : (int32_t)sqlite3_column_int64(s, 7));
    auto opt = [&](int c) {
      return sqlite3_column_type(s, c) == SQLITE_NULL ? std::nullopt
                                                      : std::optional<int64_t>(sqlite3_column_int64(s, c));
    };
    const std::optional<int64_t> ts = opt(4), end = opt(5);
    if (is_gpu_work(p.kind.back()) && ts && end) p.gpu.push_back({r, *ts, *end});
    p.traces[sqlite3_column_int64(s, 6)].add(p.kind.back(), ts, end, opt(9));
    if (sqlite3_column_type(s, 8) != SQLITE_NULL)
      parse_args(r, p.names[it->second], p.kind.back() == Kind::cpu_op ? facts.modeled(it->second) : kNoModel, text(8),
                 p.parsed);
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) p.error = rc == SQLITE_INTERRUPT ? "interrupted" : sqlite3_errmsg(db);
}

// A saved database: its event table in two uid ranges, the second on a read-only connection of
// its own in a second thread (when the database is a file and no transaction is open, so both
// connections see the same rows), merged in uid order.
bool read_saved(sqlite3* db, const std::string& schema, Input& in, std::vector<std::unique_ptr<SavedPart>>& parts,
                std::string& error) {
  int64_t lo = 0, hi = -1;
  {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, fmt::format("SELECT min(uid), max(uid) FROM {}.event", schema_sql(db, schema)).c_str(),
                           -1, &s, nullptr) != SQLITE_OK) {
      error = fmt::format("no tlsql event table in schema '{}' ({})", schema, sqlite3_errmsg(db));
      return false;
    }
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
      lo = sqlite3_column_int64(s, 0), hi = sqlite3_column_int64(s, 1);
    sqlite3_finalize(s);
  }
  const uint64_t span = (uint64_t)hi - (uint64_t)lo;  // unsigned: uids may run from INT64_MIN to INT64_MAX
  // (The second connection waits for no lock: if it cannot read now, this one reads its range.)
  sqlite3* second = hi > lo && span > 10000 ? open_second_reader(db, schema) : nullptr;
  const int64_t mid = second ? (int64_t)((uint64_t)lo + span / 2) : hi;  // the first range ends at mid
  parts.push_back(std::make_unique<SavedPart>());
  parts.push_back(std::make_unique<SavedPart>());
  std::thread other;
  std::exception_ptr failed;  // (a bad_alloc in the thread: the caller's error, not std::terminate)
  if (second)
    other = std::thread([&] {
      try {
        scan_saved(second, "main", mid + 1, hi, *parts[1]);
      } catch (...) {
        failed = std::current_exception();
      }
    });
  try {
    scan_saved(db, schema, lo, mid, *parts[0]);
  } catch (...) {
    if (second) other.join();
    sqlite3_close(second);
    throw;
  }
  if (second) other.join();
  if (failed) {
    sqlite3_close(second);
    std::rethrow_exception(failed);
  }
  sqlite3_close(second);
  if (second && !parts[1]->error.empty()) {  // e.g. the file is locked (locking_mode=EXCLUSIVE): read it here
    parts[1] = std::make_unique<SavedPart>();
    scan_saved(db, schema, mid + 1, hi, *parts[1]);
  }
  for (auto& p : parts)
    if (!p->error.empty()) {
      error = p->error;
      return false;
    }

  size_t n = 0;
  for (auto& p : parts) n += p->uids.size();
  if (n > (size_t)INT32_MAX) {
    error = "too many events";
    return false;
  }
  std::unordered_map<std::string_view, uint32_t> ids;
  std::vector<int64_t> parent_uid;
  parent_uid.reserve(n), in.uids.reserve(n), in.kinds.reserve(n), in.name_ids.reserve(n);
  in.rows = n;
  Parsed merged;
  for (auto& p : parts) {
    const auto base = (uint32_t)in.uids.size();
    std::vector<uint32_t> id_of(p->names.size());
    for (size_t k = 0; k < p->names.size(); ++k) {
      auto [it, fresh] = ids.try_emplace(p->names[k], (uint32_t)in.names.size());
      if (fresh) in.names.push_back(p->names[k]);
      id_of[k] = it->second;
    }
    in.uids.insert(in.uids.end(), p->uids.begin(), p->uids.end());
    parent_uid.insert(parent_uid.end(), p->parent_uid.begin(), p->parent_uid.end());
    in.kinds.insert(in.kinds.end(), p->kind.begin(), p->kind.end());
    for (uint32_t k : p->name) in.name_ids.push_back(id_of[k]);
    for (auto [r, trace] : p->trace_runs) add_trace_run(in.trace_runs, r + base, trace);
    in.device.insert(in.device.end(), p->device.begin(), p->device.end());
    for (auto g : p->gpu) in.gpu.push_back({g.row + base, g.ts, g.end});
    for (auto& [r, m] : p->parsed.own) merged.own.emplace_back(r + base, std::move(m));
    for (auto& [r, f, b] : p->parsed.augmented) merged.augmented.emplace_back(r + base, f, b);
    for (auto& [r, a] : p->parsed.per_step) merged.per_step.emplace_back(r + base, std::move(a));
    for (auto& [id, st] : p->traces) in.traces[id].merge(st);
    p->uids = {}, p->parent_uid = {}, p->kind = {}, p->name = {}, p->gpu = {}, p->parsed = {};
    p->trace_runs = {}, p->device = {};
  }
  add_parsed(in, std::span<Parsed>(&merged, 1));
  bool dense = true;
  for (size_t i = 1; i < n && dense; ++i) dense = in.uids[i] == in.uids[0] + (int64_t)i;
  in.parents.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t p = parent_uid[i];
    if (p == INT64_MIN) continue;
    if (dense) {  // uids first .. first + n - 1: the row is the offset (saved by tlsql: always)
      if (p >= in.uids[0] && (uint64_t)p - (uint64_t)in.uids[0] < n) in.parents[i] = (int32_t)(p - in.uids[0]);
      continue;
    }
    auto it = std::lower_bound(in.uids.begin(), in.uids.end(), p);
    if (it != in.uids.end() && *it == p) in.parents[i] = (int32_t)(it - in.uids.begin());
  }
  if (dense) {
    in.first_uid = n ? in.uids[0] : 0;
    in.uids.clear();
  }
  model_per_step(in);
  return true;
}

// Rows the order from the roots never reached hang under a loop of parent links (a database
// edited by hand): each gets the uid of a row on its loop, for the error message.
void find_loops(const Input& in, PerfTable& t, const std::vector<uint32_t>& order) {
  const size_t n = in.size();
  enum : uint8_t { unseen, on_path, reached, looped };
  std::vector<uint8_t> color(n, unseen);
  for (uint32_t r : order) color[r] = reached;
  t.loop_uid.assign(n, 0);
  std::vector<uint32_t> path;
  for (size_t r = 0; r < n; ++r) {
    if (color[r] != unseen) continue;
    path.clear();
    size_t c = r;  // an unreached row is not a root: its parent is set, and unreached too
    while (color[c] == unseen) color[c] = on_path, path.push_back((uint32_t)c), c = (size_t)in.parent(c);
    const int64_t at = color[c] == on_path ? t.uid_of(c) : t.loop_uid[c];
    for (uint32_t p : path) color[p] = looped, t.loop_uid[p] = at, t.flags[p] |= PerfTable::looped;
  }
}

// pass(part, from, to) on each part of the tree, order[cuts[part], cuts[part + 1]) (compute cuts
// the preorder at roots: whole subtrees), a thread each.
template <typename Pass>
void for_tree_parts(const std::vector<size_t>& cuts, Pass&& pass) {
  const size_t parts = cuts.size() - 1;
  for_row_ranges(RowRanges{parts, parts}, [&](size_t part, size_t, size_t) { pass(part, cuts[part], cuts[part + 1]); });
}

// Bottom-up, after the counted flags (which read only the models ops carry themselves): an op,
// python frame or annotation with no numbers of its own gets the sum of those of its children,
// so flops(aten::linear) is its addmm's and flops of a ProfilerStep is the step's. A kernel's
// numbers reach its runtime call's op this way too. Each child's value is its own numbers or its
// own sum, never both, so every FLOP beneath is added once. For a row with GPU work beneath only
// the children that ran some count (the index arithmetic repeat() does on the CPU is not the GPU
// work its gpu_time measures), and all of them must have numbers: an op that also launched a
// kernel no model covers (mse_loss's own) gets none rather than a part of its work. A row without
// GPU work (a CPU-only trace) sums the children that have numbers. FLOPs (bytes) are summed
// only when every contributor has them; dtype and units are those of the contributor with the
// most FLOPs (then bytes), the peak the sum is read against.
void inclusive_models(const Input& in, PerfTable& t, const std::vector<uint32_t>& order,
                      const std::vector<size_t>& cuts, std::span<const uint32_t> start, std::span<const uint32_t> kids,
                      const std::vector<uint8_t>& gpu_below) {
  if (t.models.empty()) return;          // (no numbers to sum: an Nsight export's ops without shapes)
  std::vector<uint32_t> value(t.model);  // a runtime call passes its kernel's numbers up, keeping none
  // Each part of the tree (compute: whole subtrees) on a thread of its own, the sums it makes kept
  // apart and numbered from `base` until all are done.
  const auto base = (uint32_t)t.models.size();
  const size_t parts = cuts.size() - 1;
  std::vector<std::vector<PerfTable::Model>> made(parts);
  for_tree_parts(cuts, [&](size_t part, size_t from, size_t to) {
    std::vector<PerfTable::Model>& mine = made[part];
    for (size_t i = to; i-- > from;) {
      const uint32_t r = order[i];
      const Kind k = in.kind(r);
      if (value[r] != PerfTable::kNone || (t.flags[r] & PerfTable::looped) ||
          !(k == Kind::cpu_op || k == Kind::python || k == Kind::annotation || k == Kind::runtime || k == Kind::driver))
        continue;
      uint32_t first = PerfTable::kNone, terms = 0;
      PerfTable::Model sum;
      sum.has_flops = sum.has_bytes = true;
      const PerfTable::Model* top = nullptr;
      const bool on_gpu = gpu_below[r] > 0;
      bool whole = true;  // on the GPU: every child with GPU work has numbers
      for (uint32_t c = start[r]; c < start[r + 1] && whole; ++c) {
        const uint32_t k = kids[c], v = value[k];
        if (on_gpu && gpu_below[k] == 0 && !is_gpu_work(in.kind(k))) continue;
        if (v == PerfTable::kNone) {
          whole = !on_gpu;  // (on the CPU a view op cannot be told from unmodeled work)
          continue;
        }
        const PerfTable::Model& m = v < base ? t.models[v] : mine[v - base];
        if (terms++ == 0) first = v;
        sum.has_flops = sum.has_flops && m.has_flops, sum.has_bytes = sum.has_bytes && m.has_bytes;
        sum.flops += m.flops, sum.bytes += m.bytes;
        if (!top || std::make_pair(m.flops, m.bytes) > std::make_pair(top->flops, top->bytes)) top = &m;
      }
      if (terms == 0 || !whole) continue;
      if (terms == 1) {
        value[r] = first;  // one contributor: share its model
      } else {
        sum.matrix = top->matrix, sum.dtype = top->dtype;
        if (!sum.has_flops) sum.flops = 0;
        if (!sum.has_bytes) sum.bytes = 0;
        value[r] = base + (uint32_t)mine.size();
        mine.push_back(sum);
      }
      if (k != Kind::runtime && k != Kind::driver) t.model[r] = value[r], t.flags[r] |= PerfTable::inclusive;
    }
  });
  // The sums numbered as one walk from the last row of `order` to the first makes them: the last
  // part's first (the table is the same bytes whatever the number of parts).
  std::vector<uint32_t> offset(parts);
  size_t count = 0;
  for (size_t p = parts; p-- > 0;) offset[p] = (uint32_t)count, count += made[p].size();
  t.models.reserve(base + count);
  for (size_t p = parts; p-- > 0;) {
    t.models.insert(t.models.end(), made[p].begin(), made[p].end());
    std::vector<PerfTable::Model>().swap(made[p]);
    if (offset[p] == 0) continue;
    for (size_t i = cuts[p]; i < cuts[p + 1]; ++i)
      if (const uint32_t m = t.model[order[i]]; m != PerfTable::kNone && m >= base) t.model[order[i]] = m + offset[p];
  }
}

// The bulk pass over a source's rows (see perf_table.h for the rules).
void compute(Input& in, PerfTable& t) {
  const size_t n = in.size();
  // (Each array is made where the pass first needs it and its scratch freed where it last does:
  // a save runs this beside writing the event pages, and the pass's peak is the save's.)
  t.gpu_ns.assign(n, 0);
  t.flags.assign(n, 0);
  NameFacts facts(in.names, in.user);

  // Children (CSR) and an order from the roots: parents before children.
  std::vector<uint32_t> made_start, made_kids;
  std::span<const uint32_t> start = in.child_start, kids = in.children;
  if (start.empty()) {
    made_start.assign(n + 1, 0), made_kids.resize(n);
    for (size_t r = 0; r < n; ++r)
      if (in.parent(r) >= 0) ++made_start[(size_t)in.parent(r) + 1];
    for (size_t r = 0; r < n; ++r) made_start[r + 1] += made_start[r];
    std::vector<uint32_t> fill(made_start.begin(), made_start.end() - 1);
    for (size_t r = 0; r < n; ++r)
      if (in.parent(r) >= 0) made_kids[fill[(size_t)in.parent(r)]++] = (uint32_t)r;
    start = made_start, kids = made_kids;
  }
  // Depth-first (preorder, children in row order; an explicit stack: the depth is the trace's):
  // reversed it is bottom-up too, and a subtree's rows stay together, where breadth-first order
  // scattered every pass's reads over the whole arrays.
  std::vector<uint32_t> order, stack;
  order.reserve(n);
  for (size_t r = n; r-- > 0;)
    if (in.parent(r) < 0) stack.push_back((uint32_t)r);
  // The passes over the tree run on the load's threads, each on whole subtrees: `order` cut at
  // roots into parts of about n / threads rows (none under 32K: a thread costs more on a small
  // trace). A row's children, and its parent, are then in its own part.
  const size_t parts = split_rows(n, load_threads(), 32768).parts;
  std::vector<size_t> cuts{0};  // order[cuts[p], cuts[p + 1]): part p
  // (The roots lie at the bottom of the stack, below every child pushed: a row popped when the
  // stack holds only roots is one, found without reading the row.)
  for (size_t roots = stack.size(); !stack.empty();) {
    const uint32_t r = stack.back();
    const bool root = stack.size() == roots;
    stack.pop_back();
    roots -= root;
    if (root && order.size() >= n * cuts.size() / parts && cuts.size() < parts) cuts.push_back(order.size());
    order.push_back(r);
    for (uint32_t k = start[r + 1]; k-- > start[r];) stack.push_back(kids[k]);
  }
  cuts.push_back(order.size());
  std::vector<uint32_t>().swap(stack);
  if (order.size() < n) find_loops(in, t, order);
  // Each name a pass below reads made known first, in row order (NameFacts::warm): GPU events'
  // (their classes too), ops' with a model of their own and every parent's.
  t.gpu_classes.assign(n, 0);
  for (size_t r = 0; r < n; ++r) {
    if (is_gpu_work(in.kind(r)))
      t.gpu_classes[r] = facts.gpu_classes(in.name(r), in.kind(r));
    else if (in.own_of(r) != PerfTable::kNone || start[r + 1] > start[r])
      facts.warm(in.name(r));
  }

  // Bottom-up: GPU events below (0, 1, 2 = more), kernels below that are not copies or fills (the
  // same, counting only GpuClass compute and communication), the families of the ops modeled
  // below, and the union of the GPU intervals at or below (kept until the row's parent takes it).
  std::vector<uint8_t> gpu_below(n, 0), kernels_below(n, 0);
  auto kernel_work = [&](uint32_t r) {
    const GpuClass c = t.gpu_class(r, GpuRule::tlsql);
    return c == GpuClass::compute || c == GpuClass::communication;
  };
  // (None without models: every bit would be 0, and family_below_of is asked only of a modeled op.)
  std::vector<uint32_t> family_below(in.own_models.empty() ? 0 : n, 0);
  // A GPU row's own interval goes in when the pass reaches the row (a kept list per GPU row was a
  // million small allocations). Until then the row's gpu_ns holds 1 + its entry in in.gpu: the
  // row's union includes that interval, so the pass overwrites it (a looped row, never reached,
  // is cleared after).
  for (size_t g = 0; g < in.gpu.size(); ++g) t.gpu_ns[in.gpu[g].row] = (int64_t)g + 1;
  // The GPU work below a row: kLocal (kernels, memsets, copies within device memory), kLink
  // (copies over a link: host <-> device, peer). An op with only kLink below keeps no model.
  enum : uint8_t { kLocal = 1, kLink = 2 };
  std::vector<uint8_t> work_below(n, 0);
  auto own_of = [&](uint32_t r) { return work_below[r] == kLink ? PerfTable::kNone : in.own_of(r); };
  auto own_bit = [&](uint32_t r) { return own_of(r) != PerfTable::kNone ? facts.seen(in.name(r)).family_bit : 0u; };
  for_tree_parts(cuts, [&](size_t, size_t from, size_t to) {
    using Intervals = std::vector<std::pair<int64_t, int64_t>>;
    // The rows come in reverse preorder, a postorder (each subtree whole, then its root): the kept
    // lists not yet taken form a stack whose top holds exactly the lists of the current row's
    // children, first child on top (a row map of them was 4 bytes a row of a save's peak). The
    // lists are the part's own, and freed with it (the pass's live arrays on top of two stores
    // are a diff's peak memory).
    std::vector<std::pair<uint32_t, uint32_t>> kept;  // (row, its list in `lists`)
    std::vector<Intervals> lists;
    std::vector<uint32_t> free_lists;
    auto take_children = [&](uint32_t r, Intervals& into) {
      for (; !kept.empty() && in.parent(kept.back().first) == (int32_t)r; kept.pop_back()) {
        Intervals& l = lists[kept.back().second];
        if (into.empty())
          into.swap(l);
        else
          into.insert(into.end(), l.begin(), l.end());
        l.clear();
        free_lists.push_back(kept.back().second);
      }
    };
    auto keep = [&](uint32_t r, Intervals& iv) {
      if (free_lists.empty()) free_lists.push_back((uint32_t)lists.size()), lists.emplace_back();
      kept.emplace_back(r, free_lists.back());
      free_lists.pop_back();
      lists[kept.back().second].swap(iv);
    };
    Intervals iv;  // (kept across rows: keep() swaps a pooled list's buffer in)
    for (size_t i = to; i-- > from;) {
      const uint32_t r = order[i];
      iv.clear();
      if (const int64_t g = t.gpu_ns[r]) iv.emplace_back(in.gpu[(size_t)g - 1].ts, in.gpu[(size_t)g - 1].end);
      for (uint32_t k = start[r]; k < start[r + 1]; ++k) {
        const uint32_t c = kids[k];
        gpu_below[r] = (uint8_t)std::min(2, gpu_below[r] + gpu_below[c] + (is_gpu_work(in.kind(c)) ? 1 : 0));
        kernels_below[r] = (uint8_t)std::min(2, kernels_below[r] + kernels_below[c] + (kernel_work(c) ? 1 : 0));
        if (is_gpu_work(in.kind(c)))
          work_below[r] |= in.kind(c) == Kind::memcpy && facts.seen(in.name(c)).link_copy ? kLink : kLocal;
        work_below[r] |= work_below[c];
        if (!family_below.empty()) family_below[r] |= family_below[c] | own_bit(c);
      }
      take_children(r, iv);
      if (iv.empty()) continue;
      t.gpu_ns[r] = merge_union(iv);
      if (in.parent(r) >= 0) keep(r, iv);
    }
  });
  if (order.size() < n)
    for (size_t r = 0; r < n; ++r)
      if (t.flags[r] & PerfTable::looped) t.gpu_ns[r] = 0;
  std::vector<Input::Interval>().swap(in.gpu);

  // Each row's numbers. Models are shared: a kernel points at its op's.
  std::vector<uint32_t> own_to_model(in.own_models.size(), PerfTable::kNone);
  auto dtype_index = [&](const std::string& d) {
    auto it = std::find(t.dtypes.begin(), t.dtypes.end(), d);
    if (it == t.dtypes.end()) it = t.dtypes.insert(t.dtypes.end(), d);
    return (uint16_t)(it - t.dtypes.begin());
  };
  // The links by GPU row, walked beside the rows below (a GPU row linked twice takes its last).
  std::stable_sort(in.launches.begin(), in.launches.end(), [](auto a, auto b) { return a.first < b.first; });
  std::vector<bool> launches(n, false);
  for (auto [g, l] : in.launches) launches[l] = true;
  t.model.assign(n, PerfTable::kNone);
  // An op carries its own model when it launches GPU work itself, or when no op of its family
  // below is modeled: a wrapper (linear over addmm, layer_norm over native_layer_norm) launches
  // nothing and leaves the numbers to the op that does, while pow keeps its own beside the cast
  // of its exponent it calls.
  // family_below holds a bit per family (its number mod 32): exact while there are at most 32
  // families (the built-in categories are 12). Past that (a user's perf_model_user categories)
  // two families share a bit, and a hit is confirmed by walking the op's subtree for a modeled op
  // of its own family (an op was taken for a wrapper of another family's op).
  std::vector<uint32_t> walk;
  auto family_below_of = [&](uint32_t r) {
    const uint32_t bit = facts.family_bit(in.name(r));
    if (!(family_below[r] & bit)) return false;
    if (facts.families() <= 32) return true;
    const uint32_t family = facts.family(in.name(r));
    walk.assign(kids.begin() + start[r], kids.begin() + start[r + 1]);
    while (!walk.empty()) {
      const uint32_t d = walk.back();
      walk.pop_back();
      if (own_of(d) != PerfTable::kNone && facts.family_bit(in.name(d)) && facts.family(in.name(d)) == family)
        return true;
      walk.insert(walk.end(), kids.begin() + start[d], kids.begin() + start[d + 1]);
    }
    return false;
  };
  auto innermost = [&](uint32_t r) -> uint32_t {
    const uint32_t o = own_of(r);
    if (o == PerfTable::kNone || (family_below_of(r) && !launches[r])) return PerfTable::kNone;
    if (own_to_model[o] == PerfTable::kNone) {
      const OpPerf& m = in.own_models[o];
      PerfTable::Model x;
      x.has_flops = m.flops.has_value(), x.has_bytes = m.bytes.has_value(), x.matrix = m.matrix;
      x.flops = m.flops.value_or(0), x.bytes = m.bytes.value_or(0), x.dtype = dtype_index(m.dtype);
      own_to_model[o] = (uint32_t)t.models.size();
      t.models.push_back(x);
    }
    return own_to_model[o];
  };
  // A kernel takes the model of the nearest op at or above its launcher that has one, if that op
  // launched no other kernel. Copies and fills do not count: cuBLAS clears its workspace with a
  // Memset beside every GEMM (aten::mm on H100), a copy may stage an operand, and neither is the
  // op's arithmetic; a second kernel (compute or communication) would share the op's numbers.
  size_t link = 0;
  for (size_t r = 0; r < n; ++r) {
    if (t.flags[r] & PerfTable::looped) continue;
    if (in.kind(r) == Kind::kernel) {
      uint32_t l = PerfTable::kNone;
      for (; link < in.launches.size() && in.launches[link].first <= r; ++link)
        if (in.launches[link].first == r) l = in.launches[link].second;
      for (int64_t c = l == PerfTable::kNone ? int64_t{-1} : (int64_t)l; c >= 0; c = in.parent((size_t)c)) {
        if (t.flags[(size_t)c] & PerfTable::looped) {
          t.flags[r] |= PerfTable::looped, t.loop_uid[r] = t.loop_uid[(size_t)c];
          break;
        }
        if (in.kind((size_t)c) != Kind::cpu_op || kernels_below[(size_t)c] > 1) break;
        if (facts.has_model(in.name((size_t)c))) {
          t.model[r] = innermost((uint32_t)c);
          if (t.model[r] != PerfTable::kNone) t.flags[r] |= PerfTable::from_launcher;
          break;
        }
      }
    } else if (in.kind(r) == Kind::cpu_op) {
      t.model[r] = innermost((uint32_t)r);
    }
  }
  // An fp32 matrix op that launched a TF32 kernel (tf32_kernel) is read against the tf32 peak: the
  // nearest op with a model at or above the launcher (its kernels share that model).
  for (auto [g, l] : in.launches) {
    if (!facts.tf32(in.name(g))) continue;
    for (int64_t c = l; c >= 0 && !(t.flags[(size_t)c] & PerfTable::looped); c = in.parent((size_t)c)) {
      if (in.kind((size_t)c) != Kind::cpu_op) break;
      if (t.model[(size_t)c] == PerfTable::kNone) continue;
      PerfTable::Model& m = t.models[t.model[(size_t)c]];
      if (m.matrix && t.dtypes[m.dtype] == "float") m.dtype = dtype_index("tf32");
      break;
    }
  }
  // Inductor's own numbers come first, whatever the event. They carry no dtype or units: those of
  // the event's own model stay (an augmented bf16 GEMM kernel is still read against the bf16
  // matrix peak), else fp32 vector.
  for (auto& [r, f, b] : in.augmented) {
    PerfTable::Model x;
    if (const PerfTable::Model* own = t.model_of(r)) x.matrix = own->matrix, x.dtype = own->dtype;
    x.has_flops = f.has_value(), x.has_bytes = b.has_value(), x.flops = f.value_or(0), x.bytes = b.value_or(0);
    t.model[r] = (uint32_t)t.models.size();
    t.models.push_back(x);
    t.flags[r] = (uint8_t)((t.flags[r] & ~PerfTable::from_launcher) | PerfTable::augmented);
  }
  // (The bottom-up flags and the ops' own models are read no further.)
  for (auto* v : {&kernels_below, &work_below}) std::vector<uint8_t>().swap(*v);
  std::vector<uint32_t>().swap(family_below), std::vector<uint32_t>().swap(in.own);
  std::vector<OpPerf>().swap(in.own_models);
  const bool markers = std::any_of(in.names.begin(), in.names.end(), is_marker);
  if (markers) t.marker.assign(n, PerfTable::kNone);

  // Top-down: whether an op above is counted or modeled (for counted_op) and the nearest marker
  // above. An op under a counted one is not counted: a custom op that launches kernels itself and
  // calls others that do (vllm::moe_forward over SortTokens) would count their GPU time twice.
  // A runtime call with no op above it is its own launcher (find_launchers, TraceLens's rule: a
  // Triton kernel launched from Python, an optimizer's kernels under an annotation, a graph replay
  // no capture explains): it is counted as the op, so every launched GPU nanosecond is in
  // counted_op once.
  auto modeled_op = [&](size_t r) {
    const PerfTable::Model* m = t.model_of((int64_t)r);
    return in.kind(r) == Kind::cpu_op && m &&
           ((m->has_flops && std::isfinite(m->flops)) || (m->has_bytes && std::isfinite(m->bytes)));
  };
  std::vector<uint8_t> taken_above(n, 0);  // (bytes, not bits: the parts write rows side by side)
  for_tree_parts(cuts, [&](size_t, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const uint32_t r = order[i];
      if (const int32_t p = in.parent(r); p >= 0) {
        taken_above[r] = taken_above[(size_t)p] || modeled_op((size_t)p) || (t.flags[(size_t)p] & PerfTable::counted);
        if (markers) t.marker[r] = facts.seen(in.name((size_t)p)).marker ? (uint32_t)p : t.marker[(size_t)p];
      }
      const Kind k = in.kind(r);  // (modeled_op is an op's alone)
      const bool launcher = launches[r] && (k == Kind::cpu_op || k == Kind::runtime || k == Kind::driver);
      if ((modeled_op(r) || launcher) && !taken_above[r]) t.flags[r] |= PerfTable::counted;
    }
  });
  inclusive_models(in, t, order, cuts, start, kids, gpu_below);
}

struct Cached {
  std::shared_ptr<const PerfTable> table;
  SchemaIdentity id;  // what the schema held (a store's generation, a file's handle, path and stamp)
  uint64_t models;    // the user models' generation, 0 for none
};
// perf_row's last answer: the schema argument as written, the schema it named, and what the table
// was valid for then. A scalar perf function runs once a row, each row naming the same schema:
// resolving the argument and finding the table took ~3,000 instructions a call (0.8 us).
struct LastRow {
  std::string arg, schema;
  SchemaIdentity id;
  uint64_t models = 0;
  std::shared_ptr<const PerfTable> table;
};
// A connection's tables, per schema: a part of its state (connection_cache.h), closed with it.
struct Tables {
  std::mutex mu;
  std::map<std::string, Cached> by_schema;
  // One per schema argument, the last few (a query may name two schemas, row after row: the diffs);
  // each replaced whole, never changed, so read outside the lock.
  std::array<std::shared_ptr<const LastRow>, 4> last;
  size_t next_last = 0;
};
Tables* tables_of(sqlite3* db) { return connection_part<Tables>(db, "perf_tables"); }

}  // namespace

namespace {

// What a table is valid for, and the table cached for it, if any.
struct Key {
  const EventStore* store = nullptr;
  bool exists = false;  // whether a database is attached under the name
  SchemaIdentity id;    // (a saved database's table is valid until it changes: a commit by any connection)
  std::shared_ptr<const UserModels> user;
  uint64_t models = 0;
};
Key key_of(sqlite3* db, const std::string& schema, const SchemaIdentity* known = nullptr) {
  Key k;
  k.exists = sqlite3_db_filename(db, schema.c_str()) != nullptr;
  k.id = schema_identity(db, schema, known);
  k.store = k.id.store ? loaded_store(db, schema, false) : nullptr;  // (the store schema_identity found)
  k.user = user_models(db);
  k.models = k.user ? k.user->generation : 0;
  return k;
}
std::shared_ptr<const PerfTable> cached(sqlite3* db, const std::string& schema, const Key& k) {
  Tables* tables = tables_of(db);
  if (!tables) return nullptr;
  std::lock_guard<std::mutex> lock(tables->mu);
  auto it = tables->by_schema.find(schema);
  if (it == tables->by_schema.end()) return nullptr;
  const Cached& c = it->second;
  return c.id == k.id && c.models == k.models ? c.table : nullptr;
}
void remember(sqlite3* db, const std::string& schema, const Key& k, std::shared_ptr<const PerfTable> t) {
  Tables* tables = tables_of(db);
  if (!tables) return;  // (a connection without tlsql's functions registered: nothing kept)
  std::lock_guard<std::mutex> lock(tables->mu);
  tables->by_schema[schema] = Cached{std::move(t), k.id, k.models};
}

// Moves what the table keeps of the rows read into `in` (uids, traces, devices, trace stats) into
// `t`: its row() works from then on, which mapping the launch links needs.
void start_table(Input& in, PerfTable& t) {
  t.first_uid = in.first_uid;
  t.rows = in.size();
  t.uids = in.uids;
  t.trace_runs = std::move(in.trace_runs);
  t.device = std::move(in.device);
  t.traces = std::move(in.traces);
}

}  // namespace

std::shared_ptr<const PerfTable> perf_table(sqlite3* db, const std::string& schema, std::string& error,
                                            const SchemaIdentity* known) {
  const Key k = key_of(db, schema, known);
  if (auto t = cached(db, schema, k)) return t;
  if (!k.exists) {
    error = fmt::format("no tlsql event table in schema '{}' (no such database)", schema);
    return nullptr;
  }
  if (!k.store && !k.user)  // a saved database may carry its table (udf/perf/perf_cache.h)
    if (std::shared_ptr<const PerfTable> saved = load_perf_table(db, schema)) {
      remember(db, schema, k, saved);
      return saved;
    }
  auto t = std::make_shared<PerfTable>();
  Input in;
  std::vector<std::unique_ptr<SavedPart>> parts;  // a saved database's rows: `in.names` views their names
  if (k.store)
    read_store(*k.store, in);
  else if (!read_saved(db, schema, in, parts, error))
    return nullptr;
  start_table(in, *t);
  add_launches(read_launches(db, schema), in, *t);
  if (k.user) {  // the user's models replace the built-in ones of their names
    in.user = k.user.get();
    const bool ok = apply_user_models(
        db, schema, *k.user,
        [&](int64_t uid, OpPerf m) {
          if (const int64_t r = t->row(uid); r >= 0) in.add_own((size_t)r, std::move(m));
        },
        error);
    if (!ok) return nullptr;
  }
  compute(in, *t);
  if (k.store) store_trace_device(*k.store, *t);
  remember(db, schema, k, t);
  return t;
}

std::function<std::shared_ptr<const PerfTable>()> perf_table_job(sqlite3* db, const std::string& schema, bool keep) {
  const Key k = key_of(db, schema);
  if (auto t = cached(db, schema, k)) return [t] { return t; };
  if (!k.store || k.user) return nullptr;
  // (A save does not keep it: holding it to the end peaked at 1.52x the JSON on the 1 GB control
  // trace, 1.36x without; the next query that needs it computes its own.)
  return [db, schema, k, keep, links = read_launches(db, schema)] {
    auto t = std::make_shared<PerfTable>();
    Input in;
    read_store(*k.store, in);
    start_table(in, *t);
    add_launches(links, in, *t);
    compute(in, *t);
    store_trace_device(*k.store, *t);
    if (keep) remember(db, schema, k, t);  // (the cache is shared under its mutex)
    return std::shared_ptr<const PerfTable>(t);
  };
}

PerfTablesAtOnce::PerfTablesAtOnce(sqlite3* db, std::vector<std::string> schemas)
    : db_(db), schemas_(std::move(schemas)), jobs_(schemas_.size()) {
  for (size_t k = 0; k < schemas_.size(); ++k) try {
      if (auto job = perf_table_job(db_, schemas_[k], true)) jobs_[k] = std::async(std::launch::async, std::move(job));
    } catch (const std::system_error&) {  // (no thread to be had: get() makes that one)
    }
}

std::vector<std::shared_ptr<const PerfTable>> PerfTablesAtOnce::get(std::vector<std::string>& errors) {
  std::vector<std::shared_ptr<const PerfTable>> out(schemas_.size());
  errors.assign(schemas_.size(), "");
  for (size_t k = 0; k < schemas_.size(); ++k)  // (those with no job first: made while the jobs run)
    if (!jobs_[k].valid()) out[k] = perf_table(db_, schemas_[k], errors[k]);
  for (size_t k = 0; k < schemas_.size(); ++k)
    if (jobs_[k].valid()) out[k] = jobs_[k].get();
  return out;
}

namespace {

uint64_t models_generation(sqlite3* db) {
  const auto user = user_models(db);
  return user ? user->generation : 0;
}

// The LastRow answers a statement's run has checked against a file's stamp (schema_identity's
// `known`): its later calls compare the rest, not stat'ing the file once a row.
struct CheckedRows {
  std::vector<std::shared_ptr<const LastRow>> checked;
};

// The table perf_row found last for this argument, if it still holds: the same database under the
// schema's name (its identity) and the same user models. What schema_arg checked of that database
// (its event key) holds while its identity does.
std::shared_ptr<const PerfTable> last_row_table(sqlite3_context* ctx, std::string_view arg, std::string& schema,
                                                SchemaIdentity& id) {
  sqlite3* db = sqlite3_context_db_handle(ctx);
  Tables* tables = tables_of(db);
  if (!tables) return nullptr;
  std::shared_ptr<const LastRow> last;
  {
    std::lock_guard<std::mutex> lock(tables->mu);
    for (const auto& l : tables->last)
      if (l && l->arg == arg) last = l;
  }
  if (!last) return nullptr;
  CheckedRows* run = statement_memo<CheckedRows>(ctx, kPerfRowMemo);
  const bool checked = run && std::find(run->checked.begin(), run->checked.end(), last) != run->checked.end();
  id = schema_identity(db, last->schema, checked ? &last->id : nullptr);
  if (!(id == last->id) || last->models != models_generation(db)) return nullptr;
  if (run && !checked) {
    if (run->checked.size() >= 8) run->checked.clear();  // (a statement naming many schemas: checked again)
    run->checked.push_back(last);
  }
  schema = last->schema;
  return last->table;
}

void remember_row_table(sqlite3* db, std::string_view arg, const std::string& schema, const SchemaIdentity& id,
                        uint64_t models, std::shared_ptr<const PerfTable> table) {
  Tables* tables = tables_of(db);
  if (!tables || !sqlite3_db_filename(db, schema.c_str())) return;
  auto last = std::make_shared<const LastRow>(LastRow{std::string(arg), schema, id, models, std::move(table)});
  std::lock_guard<std::mutex> lock(tables->mu);
  for (auto& l : tables->last)
    if (l && l->arg == arg) {
      l = std::move(last);
      return;
    }
  tables->last[tables->next_last++ % tables->last.size()] = std::move(last);
}

}  // namespace

std::shared_ptr<const PerfTable> perf_row(sqlite3_context* ctx, int argc, sqlite3_value** argv, const char* fn,
                                          int64_t& uid, int64_t& row, std::string* schema, SchemaIdentity* identity) {
  if (!uid_arg(ctx, argv[0], fn, uid)) return nullptr;
  sqlite3* db = sqlite3_context_db_handle(ctx);
  const unsigned char* text = argc > 1 ? sqlite3_value_text(argv[1]) : nullptr;
  const std::string_view arg =
      text ? std::string_view((const char*)text, (size_t)sqlite3_value_bytes(argv[1])) : "main";
  std::string name;
  SchemaIdentity id;
  // (A "db:TOKEN" argument is resolved each time: whether one schema alone holds the token can
  // change between calls without the schema's identity changing.)
  std::shared_ptr<const PerfTable> t = arg.starts_with("db:") ? nullptr : last_row_table(ctx, arg, name, id);
  if (!t) {
    std::string error;
    // (identity and models before the table: a change while it is computed is then seen next call)
    name = schema_arg(db, argc > 1 ? argv[1] : nullptr, &id);
    const uint64_t models = models_generation(db);
    t = perf_table(db, name, error, &id);
    if (!t) {
      sqlite3_result_error(ctx, fmt::format("{}: {}", fn, error).c_str(), -1);
      return nullptr;
    }
    remember_row_table(db, arg, name, id, models, t);
  }
  if (schema) *schema = std::move(name);
  if (identity) *identity = id;
  row = t->row(uid);
  if (row < 0) {
    sqlite3_result_error(ctx, fmt::format("{}({}): no event has uid {}", fn, uid, uid).c_str(), -1);
    return nullptr;
  }
  if (t->flags[(size_t)row] & PerfTable::looped) {
    sqlite3_result_error(ctx, fmt::format("{}({}): {}", fn, uid, cycle_at(t->loop_uid[(size_t)row])).c_str(), -1);
    return nullptr;
  }
  return t;
}

void share_perf_tables(sqlite3* from, sqlite3* to) {
  Tables *theirs = tables_of(from), *mine = tables_of(to);
  if (!theirs || !mine || theirs == mine) return;
  std::map<std::string, Cached> copy;
  {
    std::lock_guard<std::mutex> lock(theirs->mu);
    copy = theirs->by_schema;
  }
  // A loaded trace's table only (a saved database's stays its own connection's), under what the
  // schema is on `to` (its own handle): the same store there, the same rows.
  std::vector<std::pair<std::string, Cached>> shared;
  for (auto& [schema, c] : copy)
    if (const SchemaIdentity there = schema_identity(to, schema); c.id.store && there.store == c.id.store)
      c.id = there, shared.emplace_back(schema, std::move(c));
  std::lock_guard<std::mutex> lock(mine->mu);
  for (auto& [schema, c] : shared) mine->by_schema[schema] = std::move(c);
}

}  // namespace tlsql
