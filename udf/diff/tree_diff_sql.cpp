// The structural diff of `main` and `other` (tree_diff.h) as SQL: tree_diff, one row per piece of
// GPU work of either side with its counterpart, launching op and lowest common ancestor (what the
// diff_tree reports read), and matched(uid [, schema]), any event's counterpart. The match is made
// once per pair of databases on a connection (their tlsql_self tokens name the pair).
#include "udf/diff/tree_diff_sql.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <future>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "src/event_store.h"
#include "src/event_table.h"
#include "src/kind.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"
#include "udf/connection_cache.h"
#include "udf/diff/tree_diff.h"
#include "udf/perf/perf_table.h"
#include "udf/registry.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

namespace {

struct Side {
  std::vector<DiffNode> nodes;
  std::vector<int32_t> raw;  // per node: its name as written (Names::raw)
  std::vector<int64_t> dur;  // per node: its duration, kNull when none
  std::vector<Ix> match, lca, op;
  // uid -> index: nodes are in uid order (rows come in uid order)
  int64_t find(int64_t uid) const {
    auto it = std::lower_bound(nodes.begin(), nodes.end(), uid, [](const DiffNode& n, int64_t u) { return n.uid < u; });
    return it != nodes.end() && it->uid == uid ? it - nodes.begin() : -1;
  }
};

// Names, numbered twice: as written (for the reports) and as compared (diff_name, each raw name
// normalized once). A missing name (the event table's NULL) compares as "" but keeps a raw id of
// its own, so that tree_diff's name columns are NULL where the event table's are.
struct Names {
  std::unordered_map<std::string, std::pair<int32_t, int32_t>> ids;  // raw -> (diff name, raw)
  std::unordered_map<std::string, int32_t> normal;
  std::vector<const std::string*> raw;  // raw id -> the name (keys of ids: stable); nullptr: none
  int32_t none = -1, none_text = -1;    // the raw id of a missing name, once one came; that of ""
  std::pair<int32_t, int32_t> operator()(const char* name) {
    auto [it, fresh] = ids.try_emplace(name ? name : "", 0, 0);
    if (fresh) {
      it->second = {normal.try_emplace(diff_name(it->first), (int32_t)normal.size()).first->second,
                    (int32_t)raw.size()};
      raw.push_back(&it->first);
    }
    if (name) return it->second;
    if (none < 0) none_text = it->second.second, none = (int32_t)raw.size(), raw.push_back(nullptr);
    return {it->second.first, none};
  }
  // The raw id of the name's text: a missing name's is ""'s (a label says "" for both).
  int32_t as_text(int32_t id) const { return id == none ? none_text : id; }
  // A raw name as text ("" for none: labels and JSON lists) and as a column (NULL for none).
  const std::string& text(int32_t id) const {
    static const std::string empty;
    return raw[(size_t)id] ? *raw[(size_t)id] : empty;
  }
  std::optional<std::string_view> column(int32_t id) const {
    return raw[(size_t)id] ? std::optional<std::string_view>(*raw[(size_t)id]) : std::nullopt;
  }
};

struct TreeDiff {
  Side side[2];  // main, other
  Names names;
  std::string error;
  // The GPU rows of both sides (side, index) in the order diff_tree reports them; made on first use.
  std::vector<std::pair<uint8_t, uint32_t>> gpu_order;
  bool gpu_ordered = false;
};

// By lowest common ancestor (its uid in main; rows without one last), main's rows before other's,
// then by start and uid: made here so that SQLite need not sort millions of rows with their names.
void order_gpu_rows(TreeDiff& d) {
  if (d.gpu_ordered) return;
  d.gpu_ordered = true;
  struct Key {
    int64_t lca, ts, uid;
    uint8_t s;
    uint32_t i;
  };
  std::vector<Key> keys;
  for (int s = 0; s < 2; ++s) {
    const Side &me = d.side[s], &them = d.side[1 - s];
    for (size_t i = 0; i < me.nodes.size(); ++i) {
      if (me.nodes[i].kind != DiffNode::gpu) continue;
      const int64_t l = me.lca[i];
      const int64_t lca = l < 0    ? INT64_MAX
                          : s == 0 ? me.nodes[(size_t)l].uid
                                   : them.nodes[(size_t)me.match[(size_t)l]].uid;
      keys.push_back({lca, me.nodes[i].ts, me.nodes[i].uid, (uint8_t)s, (uint32_t)i});
    }
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.lca, a.s, a.ts, a.uid) < std::tie(b.lca, b.s, b.ts, b.uid);
  });
  d.gpu_order.reserve(keys.size());
  for (const Key& k : keys) d.gpu_order.emplace_back(k.s, k.i);
}

// Rows come in uid order (the event table's, the store's); parents become indices.
void link_parents(Side& s, std::vector<int64_t>& parent_uid) {
  auto by_uid = [](const DiffNode& x, const DiffNode& y) { return x.uid < y.uid; };
  if (!std::is_sorted(s.nodes.begin(), s.nodes.end(), by_uid)) {  // the event table is read in uid order; be sure
    std::vector<size_t> order(s.nodes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return s.nodes[x].uid < s.nodes[y].uid; });
    std::vector<DiffNode> nodes;
    std::vector<int64_t> parents, dur;
    std::vector<int32_t> raw;
    for (size_t i : order)
      nodes.push_back(s.nodes[i]), parents.push_back(parent_uid[i]), raw.push_back(s.raw[i]), dur.push_back(s.dur[i]);
    s.nodes = std::move(nodes), parent_uid = std::move(parents), s.raw = std::move(raw), s.dur = std::move(dur);
  }
  for (size_t i = 0; i < s.nodes.size(); ++i)
    s.nodes[i].parent = parent_uid[i] < 0 ? -1 : (int32_t)s.find(parent_uid[i]);
}

// Keeps only the nodes on the way to GPU work, the only ones the match aligns and the reports
// read (an on-path node's ancestors are all on it): on the shared traces a quarter to a half of
// the nodes; the others were most of a GB diff's arrays. matched() finds where they belong through
// the tree (lca_off_path).
void keep_gpu_paths(Side& s) {
  const std::vector<uint8_t> on = gpu_path_marks(
      s.nodes.size(), [&](size_t i) { return s.nodes[i].kind == DiffNode::gpu; },
      [&](size_t i) { return s.nodes[i].parent; });
  std::vector<Ix> now(s.nodes.size(), -1);  // parents may come after their children: numbered first
  Ix n = 0;
  for (size_t i = 0; i < on.size(); ++i)
    if (on[i]) now[i] = n++;
  for (size_t i = 0; i < on.size(); ++i) {
    if (!on[i]) continue;
    const auto j = (size_t)now[i];
    s.nodes[j] = s.nodes[i], s.raw[j] = s.raw[i], s.dur[j] = s.dur[i];
    if (s.nodes[j].parent >= 0) s.nodes[j].parent = now[(size_t)s.nodes[j].parent];
  }
  s.nodes.resize((size_t)n), s.raw.resize((size_t)n), s.dur.resize((size_t)n);
  s.nodes.shrink_to_fit(), s.raw.shrink_to_fit(), s.dur.shrink_to_fit();
}

// The node kind of an event kind; false for kinds the diff leaves out.
bool diff_kind(Kind kind, DiffNode::Kind& k) {
  switch (kind) {
    case Kind::cpu_op: k = DiffNode::op; return true;
    case Kind::runtime:
    case Kind::driver: k = DiffNode::call; return true;
    case Kind::kernel:
    case Kind::memcpy:
    case Kind::memset: k = DiffNode::gpu; return true;
    case Kind::python:
    case Kind::annotation: k = DiffNode::host; return true;
    default: return false;
  }
}

// A saved database's rows, through its EventSource (one scan, in uid order). Throws SqlError.
void read_side(sqlite3* db, const std::string& schema, Names& names, Side& s) {
  std::unique_ptr<EventSource> own;
  EventSource* events = tree_for(db, schema, own);
  if (!events->ok()) throw SqlError(events->error());
  EventScan what;
  what.kinds = {Kind::cpu_op, Kind::python, Kind::annotation, Kind::runtime,
                Kind::driver, Kind::kernel, Kind::memcpy,     Kind::memset};
  std::vector<int64_t> parent_uid;
  events->scan(what, [&](const EventView& e) {
    DiffNode::Kind k;
    if (e.ts == EventView::none || !diff_kind(e.kind, k)) return;
    parent_uid.push_back(e.parent == EventView::none ? -1 : e.parent);
    auto [name, raw] = names(e.name.data() ? std::string(e.name).c_str() : nullptr);
    s.nodes.push_back({e.uid, e.ts, -1, name, (int32_t)e.trace, k});
    s.raw.push_back(raw);
    s.dur.push_back(e.dur);  // EventView::none is kNull
  });
  link_parents(s, parent_uid);
  if (auto at = parent_loop(s.nodes.size(), [&](size_t i) { return s.nodes[i].parent; }))
    throw SqlError(cycle_at(s.nodes[*at].uid));
  keep_gpu_paths(s);
}

// The same rows straight from a loaded trace's store (no SQL): on a GB trace this is most of what
// the diff costs, so the two sides are read at once, each on its own thread, with their names as
// the store's pool ids (kNone for none); name_side() numbers them afterwards. A store's traces take
// uids in order and rows are in uid order, so nodes come out sorted; a parent (a row index in the
// same trace, before or after its children) becomes a node index through the trace's row -> node
// map, not a search. Only the rows on the way to GPU work become nodes (keep_gpu_paths): the
// others are never read. False when over 2^31 would.
bool read_store(const EventStore& store, Side& s) {
  auto node = [](const EventRec& e, DiffNode::Kind& k) { return diff_kind(e.kind, k) && e.ts != kNull; };
  std::vector<std::vector<uint8_t>> on(store.traces.size());
  size_t n = 0;
  for (size_t ti = 0; ti < on.size(); ++ti) {
    const RowArray& rows = store.traces[ti]->rows;
    on[ti] = gpu_path_marks(
        rows.size(),
        [&](size_t r) {
          DiffNode::Kind k;
          return node(rows[r], k) && k == DiffNode::gpu;
        },
        [&](size_t r) {  // (a parent that is no node ends the chain, as in the nodes' tree)
          DiffNode::Kind k;
          const int32_t p = rows[r].parent;
          return p >= 0 && node(rows[(size_t)p], k) ? p : -1;
        });
    n += (size_t)std::count(on[ti].begin(), on[ti].end(), 1);
  }
  if (n > (size_t)INT32_MAX) return false;  // (DiffNode's indexes)
  s.nodes.reserve(n), s.raw.reserve(n), s.dur.reserve(n);
  std::vector<Ix> node_of;  // per row of the trace being read: its node, or -1
  for (size_t ti = 0; ti < on.size(); ++ti) {
    const LoadedTrace& t = *store.traces[ti];
    node_of.assign(t.rows.size(), -1);
    const size_t first = s.nodes.size();
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const EventRec& e = t.rows[r];
      DiffNode::Kind k;
      if (!on[ti][r] || !node(e, k)) continue;
      node_of[r] = (Ix)s.nodes.size();
      s.nodes.push_back({t.uid_base + (int64_t)r, e.ts, -1, (int32_t)e.name, (int32_t)t.id, k});
      s.dur.push_back(e.dur);
    }
    for (size_t i = first; i < s.nodes.size(); ++i) {
      const int32_t parent = t.rows[(size_t)(s.nodes[i].uid - t.uid_base)].parent;
      s.nodes[i].parent = parent >= 0 ? node_of[(size_t)parent] : -1;
    }
    on[ti] = {};
  }
  return true;
}

// Replaces the pool ids read_store left in a side's names by the diff's numbering (each distinct
// name looked up once).
void name_side(const EventStore& store, Names& names, Side& s) {
  std::vector<std::pair<int32_t, int32_t>> name_of(store.strings.size() + 1, {-1, -1});  // pool id -> ids
  for (DiffNode& n : s.nodes) {
    const auto id = (uint32_t)n.name;
    const size_t slot = id == StringPool::kNone ? store.strings.size() : id;
    if (name_of[slot].first < 0)
      name_of[slot] = names(id == StringPool::kNone ? nullptr : std::string(store.strings.get(id)).c_str());
    n.name = name_of[slot].first;
    s.raw.push_back(name_of[slot].second);
  }
}

// The database's tlsql_self token; empty when `schema` is not attached or not tlsql's.
std::string token(sqlite3* db, const char* schema) {
  try {
    Statement q(db, fmt::format("SELECT token FROM {}.tlsql_self", schema_sql(db, schema)));
    return q.step() ? (const char*)sqlite3_column_text(q.get(), 0) : "";
  } catch (const SqlError&) {
    return "";
  }
}

std::unique_ptr<TreeDiff> make_diff(sqlite3* db) {
  auto d = std::make_unique<TreeDiff>();
  const EventStore* stores[2] = {loaded_store(db, "main"), loaded_store(db, "other")};
  // Both stores are read at once (each side's arrays are its own). Names are numbered in the
  // order the sides' nodes come, main's first, whichever way each side is read.
  std::future<bool> other;
  if (stores[0] && stores[1])
    other = std::async(std::launch::async, [&] { return read_store(*stores[1], d->side[1]); });
  for (int k = 0; k < 2; ++k) {
    const char* schema = k == 0 ? "main" : "other";
    if (!stores[k]) {
      try {
        read_side(db, schema, d->names, d->side[k]);
      } catch (const SqlError& e) {
        d->error = fmt::format("{}: {}", schema, e.what());
        return d;
      }
      continue;
    }
    if (!(k == 1 && other.valid() ? other.get() : read_store(*stores[k], d->side[k]))) {
      d->error = fmt::format("{}: over 2^31 events to compare", schema);
      return d;
    }
    name_side(*stores[k], d->names, d->side[k]);
  }
  for (int k = 0; k < 2; ++k)
    if (d->side[k].nodes.size() > (size_t)INT32_MAX) {  // (DiffNode's parent indexes)
      d->error = fmt::format("{}: over 2^31 events to compare", k == 0 ? "main" : "other");
      return d;
    }
  DiffMatch m = match_trees(d->side[0].nodes, d->side[1].nodes);
  d->side[0].match = std::move(m.a), d->side[1].match = std::move(m.b);
  for (Side& s : d->side) s.lca = lowest_matched_ancestors(s.nodes, s.match), s.op = nearest_ops(s.nodes);
  return d;
}

// The diff of main and other on this connection: cached for what both schemas hold
// (schema_identity: a copy of main attached as other is another database), else made into `own`
// (a connection without a cache). nullptr and `error` set when other is not attached.
// Whether main and other both hold a tlsql database (what diff_for needs first).
bool both_sides(sqlite3* db) { return !token(db, "main").empty() && !token(db, "other").empty(); }

// `run`: a table function's slot for its statement's run (TableCall::run), where the two schemas'
// identities are kept from one call to the next (matched() is called once a row).
TreeDiff* diff_for(sqlite3* db, std::unique_ptr<TreeDiff>& own, std::string& error,
                   std::shared_ptr<void>* run = nullptr) {
  if (!both_sides(db)) {
    error = "needs two traces: the second attached as other (--diff OTHER, or .attach FILE AS other)";
    return nullptr;
  }
  using Pair = std::array<SchemaIdentity, 2>;
  const Pair* known = run && *run ? static_cast<const Pair*>(run->get()) : nullptr;
  const Pair now{schema_identity(db, "main", known ? &(*known)[0] : nullptr),
                 schema_identity(db, "other", known ? &(*known)[1] : nullptr)};
  if (run) *run = std::make_shared<Pair>(now);
  const SchemaIdentity& a = now[0];
  const std::string key = fmt::format("tree_diff:{}:{}:{}:{}:{}", a.store, a.file, a.path, a.stamp, a.version);
  TreeDiff* d = connection_cached<TreeDiff>(db, key, now[1], [&] { return make_diff(db); });
  if (!d) d = (own = make_diff(db)).get();
  if (!d->error.empty()) return error = d->error, nullptr;
  return d;
}

// ---- tree_diff: one row per piece of GPU work of either side ------------------------------------

// The uid of node `index` of a side; NULL for -1.
std::optional<int64_t> uid_of(const Side& s, int64_t index) {
  return index >= 0 ? std::optional(s.nodes[(size_t)index].uid) : std::nullopt;
}

struct TreeDiffRows {
  using Row = size_t;  // position in d->gpu_order
  static constexpr std::array<TableArgument, 0> arguments{};
  static constexpr double cost = 1e6;
  static constexpr const char* ordered_by = "pos";  // (rows come in pos order)
  std::unique_ptr<TreeDiff> own;
  TreeDiff* d = nullptr;

  Positions rows(const TableCall& call) {
    std::string why;
    d = diff_for(call.db, own, why);
    if (!d) throw FunctionError("tree_diff: " + why);
    order_gpu_rows(*d);
    return {d->gpu_order.size()};
  }
  // The row's side, its node, and the other side. The LCA's id is its uid on the first side,
  // whichever side the row is from (TraceLens's lowest_common_ancestor_id: one id for the pair).
  struct At {
    int s;
    size_t i;
    const Side &me, &them;
    int64_t lca, lca_other;
  };
  At at(Row r) const {
    const auto [s, i] = d->gpu_order[r];
    const Side& me = d->side[s];
    const int64_t lca = me.lca[i];
    return {s, i, me, d->side[1 - s], lca, lca >= 0 ? me.match[(size_t)lca] : -1};
  }
  // The raw name of node `index` of a side as a column; NULL for -1.
  std::optional<std::string_view> name_of(const Side& s, int64_t index) const {
    return index >= 0 ? d->names.column(s.raw[(size_t)index]) : std::nullopt;
  }
  static auto columns() {
    using P = TreeDiffRows;
    using Ctx = sqlite3_context*;
    return std::to_array<TableColumn<P, Row>>({
        {"source", "TEXT",
         [](Ctx c, P& p, const Row& r) {  // (a literal: read by each of diff_tree's joins, not copied each time)
           sqlite3_result_text(c, p.at(r).s == 0 ? "trace1" : "trace2", 6, SQLITE_STATIC);
         }},
        {"uid", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, p.at(r).me.nodes[p.at(r).i].uid); }},
        // The event's name and duration (ns), its op's name and the ancestor's, as the event table
        // has them: what diff_tree would otherwise join the event table three more times for.
        {"name", "TEXT",
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           result(c, p.name_of(a.me, (int64_t)a.i));
         }},
        {"dur", "INTEGER",
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           const int64_t dur = a.me.dur[a.i];
           result(c, dur != kNull ? std::optional(dur) : std::nullopt);
         }},
        {"other_uid", "INTEGER",
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           result(c, uid_of(a.them, a.me.match[a.i]));
         }},
        {"cpu_op_uid", "INTEGER",
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           result(c, uid_of(a.me, a.me.op[a.i]));
         }},
        {"cpu_op_name", "TEXT",
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           result(c, p.name_of(a.me, a.me.op[a.i]));
         }},
        {"lca_uid", "INTEGER",
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           result(c, a.s == 0 ? uid_of(a.me, a.lca) : uid_of(a.them, a.lca_other));
         }},
        {"lca_name", "TEXT",  // (main's: the ancestor's uid is main's whichever side the row is from)
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           result(c, a.s == 0 ? p.name_of(a.me, a.lca) : p.name_of(a.them, a.lca_other));
         }},
        {"lca_other_uid", "INTEGER",
         [](Ctx c, P& p, const Row& r) {
           const At a = p.at(r);
           result(c, a.s == 0 ? uid_of(a.them, a.lca_other) : uid_of(a.me, a.lca));
         }},
        {"pos", "INTEGER", [](Ctx c, P&, const Row& r) { result(c, (int64_t)r); }},
    });
  }
};

// ---- tree_diff_groups: per lowest common ancestor, what diff_tree_ops reports ---------------------

// Both sides' GPU work per ancestor pair: counts, summed durations, the kernels' launchers and
// the kernels' names in start order; rows slowest in trace1 first (then by uid). In C++ rather than
// SQL: grouping two GB traces' kernels by ancestor with their names took SQLite most of a minute.
// The name lists are written when SQLite reads them, one row at a time: all of them at once took
// more memory than either trace's store.
struct Group {
  int64_t lca = -1, lca_other = -1;
  int64_t n[2] = {0, 0}, t[2] = {0, 0};
  std::string ops[2];          // the launchers, ' | ' between them, most kernel time first; empty: none
  uint32_t first[2] = {0, 0};  // its kernels on side s: Groups::kernels[first[s], first[s] + n[s])
};
struct Groups {
  struct Kernel {
    uint32_t group;
    uint8_t side;
    int64_t ts, uid, dur;
    int32_t raw, launcher;  // the kernel's name (Names::raw); its launcher (Groups::launchers), -1: none
  };
  std::vector<Group> rows;
  std::vector<Kernel> kernels;         // by group, side, start and uid: each group's lists in start order
  std::vector<std::string> launchers;  // launcher_names
};

// What names a kernel in a group (diff_tree_ops' `name`): the op that launched it (the nearest op
// above it), else its launch call (TraceLens's launcher of a call no op encloses). A graph
// replay's kernel is named by its graph launch, and the op it was captured under when the replay
// is attributed (docs/inference.md: the copied op sits below the launch): "cudaGraphLaunch >
// aten::mm". Its nearest op may be an eager one above the graph launch (a warm-up op calling
// graph.replay()): that is not what ran it.
std::vector<int32_t> launcher_names(const TreeDiff& d, const Side& me, std::vector<std::string>& labels,
                                    std::map<std::pair<int32_t, int32_t>, int32_t>& label_of) {
  std::vector<int8_t> graph(d.names.raw.size(), -1);  // per raw name: is_graph_launch, -1 not yet asked
  auto is_graph = [&](size_t i) {
    if (me.nodes[i].kind != DiffNode::call) return false;
    int8_t& g = graph[(size_t)me.raw[i]];
    if (g < 0) g = is_graph_launch(d.names.text(me.raw[i])) ? 1 : 0;
    return g == 1;
  };
  const std::vector<int32_t> launch = nearest_above(
      me.nodes.size(), [&](size_t k) { return me.nodes[k].parent; }, is_graph);
  auto label = [&](int32_t a, int32_t b) {  // raw names: a, or "a > b" (b >= 0); one label per text
    a = d.names.as_text(a), b = b < 0 ? b : d.names.as_text(b);
    auto [it, fresh] = label_of.try_emplace({a, b}, (int32_t)labels.size());
    if (fresh) labels.push_back(b < 0 ? d.names.text(a) : d.names.text(a) + " > " + d.names.text(b));
    return it->second;
  };
  std::vector<int32_t> out(me.nodes.size(), -1);
  for (size_t i = 0; i < me.nodes.size(); ++i) {
    if (me.nodes[i].kind != DiffNode::gpu) continue;
    const Ix op = me.op[i], g = launch[i];
    if (g >= 0)  // a replay: its launch, and the captured op below it, if any
      out[i] = label(me.raw[(size_t)g], op >= 0 && launch[(size_t)op] == g ? me.raw[(size_t)op] : -1);
    else if (op >= 0)
      out[i] = label(me.raw[(size_t)op], -1);
    else if (const int32_t p = me.nodes[i].parent; p >= 0 && me.nodes[(size_t)p].kind == DiffNode::call)
      out[i] = label(me.raw[(size_t)p], -1);
  }
  return out;
}

// (Flat: a GB diff has hundreds of thousands of groups of a kernel or two, and vectors and a hash
// map per group were most of the report's time before its first row.)
Groups groups_of(const TreeDiff& d) {
  Groups out;
  std::map<std::pair<int32_t, int32_t>, int32_t> label_of;
  std::vector<int32_t> group_of(d.side[0].nodes.size(), -1);  // by the ancestor's node in main
  for (int s = 0; s < 2; ++s) {
    const Side& me = d.side[s];
    const std::vector<int32_t> launcher = launcher_names(d, me, out.launchers, label_of);
    for (size_t i = 0; i < me.nodes.size(); ++i) {
      const Ix l = me.lca[i];
      if (me.nodes[i].kind != DiffNode::gpu || l < 0) continue;
      const Ix in_main = s == 0 ? l : me.match[(size_t)l];  // (a lowest common ancestor is matched)
      int32_t& g = group_of[(size_t)in_main];
      if (g < 0) {
        g = (int32_t)out.rows.size();
        Group& fresh = out.rows.emplace_back();
        fresh.lca = d.side[0].nodes[(size_t)in_main].uid;
        fresh.lca_other = d.side[1].nodes[(size_t)d.side[0].match[(size_t)in_main]].uid;
      }
      Group& group = out.rows[(size_t)g];
      ++group.n[s];
      const int64_t dur = me.dur[i] != kNull ? me.dur[i] : 0;
      group.t[s] = sat_add(group.t[s], dur);  // (hostile durations may add up past int64)
      out.kernels.push_back({(uint32_t)g, (uint8_t)s, me.nodes[i].ts, me.nodes[i].uid, dur, me.raw[i], launcher[i]});
    }
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const Groups::Kernel& a, const Groups::Kernel& b) {
    return std::tie(a.group, a.side, a.ts, a.uid) < std::tie(b.group, b.side, b.ts, b.uid);
  });
  // Each group's launchers on each side, by their kernels' time in it, most first (then by name):
  // the name says first what did most of the group's work.
  std::vector<std::pair<int32_t, int64_t>> time;  // (launcher, ns)
  for (size_t k = 0; k < out.kernels.size();) {
    const Groups::Kernel& head = out.kernels[k];
    Group& g = out.rows[head.group];
    g.first[head.side] = (uint32_t)k;
    time.clear();
    for (; k < out.kernels.size() && out.kernels[k].group == head.group && out.kernels[k].side == head.side; ++k)
      if (out.kernels[k].launcher >= 0) time.emplace_back(out.kernels[k].launcher, out.kernels[k].dur);
    std::sort(time.begin(), time.end());
    size_t distinct = 0;
    for (size_t j = 0; j < time.size(); ++j)
      if (distinct > 0 && time[distinct - 1].first == time[j].first)
        time[distinct - 1].second = sat_add(time[distinct - 1].second, time[j].second);
      else
        time[distinct++] = time[j];
    time.resize(distinct);
    std::sort(time.begin(), time.end(), [&](const auto& a, const auto& b) {
      if (a.second != b.second) return a.second > b.second;
      return out.launchers[(size_t)a.first] < out.launchers[(size_t)b.first];
    });
    for (const auto& [launcher, ns] : time)
      (g.ops[head.side] += g.ops[head.side].empty() ? "" : " | ") += out.launchers[(size_t)launcher];
  }
  std::sort(out.rows.begin(), out.rows.end(),
            [](const Group& a, const Group& b) { return a.t[0] != b.t[0] ? a.t[0] > b.t[0] : a.lca < b.lca; });
  return out;
}

// Per group (Groups::rows) and side: the FLOPs of the counted events whose work the group holds
// (flops_homes: each one's FLOPs beside its longest kernel, so a helper kernel matched elsewhere
// neither takes them nor leaves the work's group without them), and the event giving the most of
// them (diff_tree_ops reads achieved_pct from it: its dtype, units and peak). No perf table for a
// side (not a tlsql database): that side has none.
struct GroupFlops {
  double flops[2] = {0, 0};
  bool has[2] = {false, false};
  int64_t top[2] = {-1, -1};  // uid of the largest contributor
  double top_flops[2] = {0, 0};
};

// `tables`: main's and other's (PerfTablesAtOnce), nullptr for a side without one.
std::vector<GroupFlops> group_flops(const TreeDiff& d, const Groups& groups,
                                    const std::vector<std::shared_ptr<const PerfTable>>& tables) {
  std::vector<GroupFlops> out(groups.rows.size());
  std::vector<std::pair<int64_t, uint32_t>> by_lca;  // (the ancestor's uid in main, group)
  by_lca.reserve(groups.rows.size());
  for (size_t g = 0; g < groups.rows.size(); ++g) by_lca.emplace_back(groups.rows[g].lca, (uint32_t)g);
  std::sort(by_lca.begin(), by_lca.end());
  for (int s = 0; s < 2; ++s) {
    const std::shared_ptr<const PerfTable>& t = tables[(size_t)s];
    if (!t) continue;
    const Side& me = d.side[s];
    std::vector<int64_t> row(me.nodes.size());
    std::vector<uint8_t> counted(me.nodes.size());
    for (size_t i = 0; i < me.nodes.size(); ++i) {
      row[i] = t->row(me.nodes[i].uid);
      counted[i] = row[i] >= 0 && (t->flags[(size_t)row[i]] & PerfTable::counted);
    }
    const std::vector<Ix> home = flops_homes(me.nodes, me.dur, me.lca, counted);
    for (size_t c = 0; c < home.size(); ++c) {
      if (home[c] < 0) continue;
      const PerfTable::Model* m = t->model_of(row[c]);
      if (!m || !m->has_flops) continue;
      const Ix l = me.lca[(size_t)home[c]];
      const int64_t lca = d.side[0].nodes[(size_t)(s == 0 ? l : me.match[(size_t)l])].uid;
      const auto it = std::lower_bound(by_lca.begin(), by_lca.end(), std::pair<int64_t, uint32_t>{lca, 0});
      if (it == by_lca.end() || it->first != lca) continue;
      GroupFlops& f = out[it->second];
      f.flops[s] += m->flops, f.has[s] = true;
      if (f.top[s] < 0 || m->flops > f.top_flops[s]) f.top[s] = me.nodes[c].uid, f.top_flops[s] = m->flops;
    }
  }
  return out;
}

// Each name (Names::raw) as a JSON string, for kernel_names.
std::vector<std::string> json_names(const TreeDiff& d) {
  std::vector<std::string> out;
  out.reserve(d.names.raw.size());
  for (size_t id = 0; id < d.names.raw.size(); ++id)
    out.push_back(
        nlohmann::json(d.names.text((int32_t)id)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return out;
}

// A group's kernel names on one side as a JSON array (compact, as nlohmann writes one), from each
// name's JSON text written once: a GB diff lists hundreds of MB of names, a few hundred distinct.
std::string kernel_names(const std::vector<std::string>& json, const Groups& all, const Group& g, int s) {
  const std::span<const Groups::Kernel> kernels(all.kernels.data() + g.first[s], (size_t)g.n[s]);
  size_t size = 2;
  for (const Groups::Kernel& k : kernels) size += json[(size_t)k.raw].size() + 1;
  std::string list;
  list.reserve(size);
  list += '[';
  for (const Groups::Kernel& k : kernels) (list += json[(size_t)k.raw]) += ',';
  if (list.size() > 1) list.pop_back();
  return list += ']';
}

struct DiffGroups {
  using Row = size_t;  // position in groups.rows
  static constexpr std::array<TableArgument, 0> arguments{};
  static constexpr double cost = 1e6;
  std::unique_ptr<TreeDiff> own;
  const TreeDiff* d = nullptr;
  Groups groups;
  std::vector<GroupFlops> flops;   // by group
  std::vector<std::string> names;  // json_names

  Positions rows(const TableCall& call) {
    std::string why;
    // Both sides' perf tables (their FLOPs) made while the diff is; not when diff_for refuses at
    // once (no other attached), whose error would wait for main's.
    std::optional<PerfTablesAtOnce> tables;
    if (both_sides(call.db)) tables.emplace(call.db, std::vector<std::string>{"main", "other"});
    d = diff_for(call.db, own, why);  // (refused without both_sides: `tables` is there below)
    if (!d) throw FunctionError("tree_diff_groups: " + why);
    groups = groups_of(*d);
    std::vector<std::string> errors;  // (a side without a table has no FLOPs)
    flops = group_flops(*d, groups, tables->get(errors));
    names = json_names(*d);
    return {groups.rows.size()};
  }
  static std::optional<std::string_view> or_null(const std::string& v) {
    return v.empty() ? std::nullopt : std::optional<std::string_view>(v);
  }
  static auto columns() {
    using P = DiffGroups;
    using Ctx = sqlite3_context*;
    return std::to_array<TableColumn<P, Row>>({
        {"lca_uid", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, p.groups.rows[r].lca); }},
        {"lca_other_uid", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, p.groups.rows[r].lca_other); }},
        {"num_kernels_trace1", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, p.groups.rows[r].n[0]); }},
        {"num_kernels_trace2", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, p.groups.rows[r].n[1]); }},
        {"kernel_time_trace1", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, p.groups.rows[r].t[0]); }},
        {"kernel_time_trace2", "INTEGER", [](Ctx c, P& p, const Row& r) { result(c, p.groups.rows[r].t[1]); }},
        {"ops_trace1", "TEXT", [](Ctx c, P& p, const Row& r) { result(c, or_null(p.groups.rows[r].ops[0])); }},
        {"ops_trace2", "TEXT", [](Ctx c, P& p, const Row& r) { result(c, or_null(p.groups.rows[r].ops[1])); }},
        // (written when read, one row at a time: all of them at once took more memory than a store)
        {"kernel_names_trace1", "TEXT",
         [](Ctx c, P& p, const Row& r) { result(c, kernel_names(p.names, p.groups, p.groups.rows[r], 0)); }},
        {"kernel_names_trace2", "TEXT",
         [](Ctx c, P& p, const Row& r) { result(c, kernel_names(p.names, p.groups, p.groups.rows[r], 1)); }},
        {"flops_trace1", "REAL",
         [](Ctx c, P& p, const Row& r) {
           result(c, p.flops[r].has[0] ? std::optional(p.flops[r].flops[0]) : std::nullopt);
         }},
        {"flops_trace2", "REAL",
         [](Ctx c, P& p, const Row& r) {
           result(c, p.flops[r].has[1] ? std::optional(p.flops[r].flops[1]) : std::nullopt);
         }},
        {"flops_uid_trace1", "INTEGER",
         [](Ctx c, P& p, const Row& r) {
           result(c, p.flops[r].top[0] >= 0 ? std::optional(p.flops[r].top[0]) : std::nullopt);
         }},
        {"flops_uid_trace2", "INTEGER",
         [](Ctx c, P& p, const Row& r) {
           result(c, p.flops[r].top[1] >= 0 ? std::optional(p.flops[r].top[1]) : std::nullopt);
         }},
    });
  }
};

// ---- matched(uid [, schema]) -----------------------------------------------------------------

// The lowest common ancestor (a node index, or -1) of an event the diff holds no node for: one
// leading to no GPU work (keep_gpu_paths), or no node at all (-1). Its first ancestor that is a
// node decides, walking up as lowest_matched_ancestors does: itself when matched and not a launch
// call, else its own. An ancestor that is not a node ends the walk (-1), as it ends a node's chain.
// A uid no event has is an error, as in every other walk ("no event has uid N").
int64_t lca_off_path(sqlite3* db, const std::string& schema, const Side& me, int64_t uid, std::string& error) {
  std::unique_ptr<TreeAccess> own;
  TreeAccess* tree = tree_for(db, schema, own);
  if (!tree->ok()) return error = tree->error(), -1;
  auto node = [&](int64_t u) {
    const std::optional<TreeRow> r = tree->row(u);
    DiffNode::Kind k;
    return r && r->has_time && diff_kind(kind_from_name(r->kind), k);
  };
  if (!tree->row(uid)) return error = fmt::format("no event has uid {}", uid), -1;
  if (!node(uid)) return -1;
  const auto up = tree->ancestors(uid);
  if (std::string e = tree->take_walk_error(); !e.empty()) return error = e, -1;
  for (const auto& [a, distance] : up) {
    const int64_t k = me.find(a);
    if (k >= 0) {
      const DiffNode& n = me.nodes[(size_t)k];
      return me.match[(size_t)k] >= 0 && n.kind != DiffNode::call && n.kind != DiffNode::gpu ? k : me.lca[(size_t)k];
    }
    if (!node(a)) return -1;
  }
  return -1;
}

struct Matched {
  struct Row {
    std::optional<int64_t> other, lca, lca_other;  // uids, NULL for none
  };
  static constexpr TableArgument arguments[] = {{"uid", "uid", true}, {"schema", "schema"}};
  static constexpr double estimated_rows = 1000;

  std::vector<Row> rows(const TableCall& call) {
    sqlite3* db = call.db;
    if (sqlite3_value_numeric_type(call.arg(0)) != SQLITE_INTEGER) throw FunctionError("uid must be an event uid");
    const int64_t uid = sqlite3_value_int64(call.arg(0));
    // (resolved once a statement's run, checked on each call: matched is called once a row)
    struct Run {
      std::shared_ptr<void> schema, diff;  // kept_for_run's and diff_for's slots
    };
    std::shared_ptr<void> once;  // (a call without a cursor's slot)
    std::shared_ptr<void>& slot = call.run ? *call.run : once;
    if (!slot) slot = std::make_shared<Run>();
    Run& run = *static_cast<Run*>(slot.get());
    struct KeptArg {
      KeptSchema at;
    } fresh;
    const std::string schema = kept_for_run(&run.schema, db, call.arg(1), fresh, [](KeptArg&) {}).at.schema;
    if (schema != "main" && schema != "other")
      throw FunctionError(fmt::format("matched: schema must be main or other, not '{}'", schema));
    std::unique_ptr<TreeDiff> own;
    std::string why;
    TreeDiff* d = diff_for(db, own, why, &run.diff);
    if (!d) throw FunctionError("matched: " + why);
    const int s = schema == "main" ? 0 : 1;
    const Side &me = d->side[s], &them = d->side[1 - s];
    const int64_t i = me.find(uid);
    Row r;
    std::string walk_error;
    const int64_t l_off = i < 0 ? lca_off_path(db, schema, me, uid, walk_error) : -1;
    if (!walk_error.empty()) throw FunctionError(fmt::format("matched({}): {}", uid, walk_error));
    if (l_off >= 0) {
      r.lca = me.nodes[(size_t)l_off].uid;
      r.lca_other = them.nodes[(size_t)me.match[(size_t)l_off]].uid;
    } else if (i >= 0) {
      const int64_t o = me.match[(size_t)i], l = me.lca[(size_t)i];
      if (o >= 0) r.other = them.nodes[(size_t)o].uid;
      if (l >= 0) r.lca = me.nodes[(size_t)l].uid;
      if (l >= 0 && me.match[(size_t)l] >= 0) r.lca_other = them.nodes[(size_t)me.match[(size_t)l]].uid;
    }
    return {r};
  }
  static auto columns() {
    return std::to_array<TableColumn<Matched, Row>>({{"other_uid", "INTEGER", field<&Row::other>},
                                                     {"lca_uid", "INTEGER", field<&Row::lca>},
                                                     {"lca_other_uid", "INTEGER", field<&Row::lca_other>}});
  }
};

}  // namespace

std::optional<std::vector<MergedRow>> merged_tree(sqlite3* db, int64_t uid, int max_depth) {
  if (token(db, "other").empty()) return std::nullopt;
  std::unique_ptr<TreeDiff> own;
  std::string error;
  TreeDiff* d = diff_for(db, own, error);
  if (!d) throw std::runtime_error(error);
  const Side &a = d->side[0], &b = d->side[1];
  const auto i = (Ix)a.find(uid);
  if (i < 0 || a.match[(size_t)i] < 0) return std::nullopt;
  std::vector<MergedRow> out;
  for (const MergedNode& n : merged_subtree(a.nodes, b.nodes, a.match, b.match, i, a.match[(size_t)i], max_depth)) {
    MergedRow r{n.depth, n.last, std::nullopt, std::nullopt};
    if (n.a >= 0) r.main = a.nodes[(size_t)n.a].uid;
    if (n.b >= 0) r.other = b.nodes[(size_t)n.b].uid;
    out.push_back(r);
  }
  return out;
}

std::vector<SqlFunction> tree_diff_functions() {
  return {table_function<TreeDiffRows>(
              "tree_diff",
              "table: the structural diff of main and other (TraceLens's TraceDiff), one row per GPU kernel / "
              "copy / fill of either side: source ('trace1' main, 'trace2' other), uid, name, dur (ns), other_uid "
              "(its counterpart), cpu_op_uid, cpu_op_name, lca_uid / lca_name / lca_other_uid (the lowest common "
              "ancestor on each side: uid and name in main, uid in other), pos (rows come by lca_uid, NULL last, "
              "main's first, then by start: ORDER BY pos sorts nothing)"),
          table_function<DiffGroups>(
              "tree_diff_groups",
              "table: the structural diff of main and other per lowest common ancestor (what diff_tree_ops "
              "reports): lca_uid, lca_other_uid, num_kernels_trace1/2, kernel_time_trace1/2 (ns), ops_trace1/2, "
              "kernel_names_trace1/2 (JSON arrays), flops_trace1/2 (the FLOPs of the counted ops whose longest "
              "kernel is in the group), flops_uid_trace1/2 (the one giving the most); slowest in main first"),
          table_function<Matched>(
              "matched",
              "table: the counterpart in the other database (main <-> other) of event uid of schema (default "
              "main), by the structural diff: other_uid, lca_uid, lca_other_uid (NULL: none)")};
}
TLSQL_FUNCTIONS(tree_diff_functions);

}  // namespace tlsql
