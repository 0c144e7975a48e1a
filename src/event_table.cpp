#include "src/event_table.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "src/args_text.h"
#include "src/btree_writer.h"
#include "src/json_scan.h"
#include "src/kind.h"
#include "src/output_file.h"
#include "src/radix_sort.h"
#include "src/sql_assets.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"
#include "src/sqlite_vtab.h"

namespace tlsql {

enum Col {
  kUid,
  kTrace,
  kKind,
  kCat,
  kName,
  kPh,
  kPid,
  kTid,
  kTs,
  kDur,
  kEnd,
  kParent,
  kDepth,
  kStep,
  kStream,
  kDevice,
  kCorrelation,
  kExternalId,
  kSeq,
  kFwd,
  kFlowId,
  kArgs,
  kInputDims,
  kInputTypes,
  kInputStrides,
  kConcreteInputs
};

const EventColumn kEventColumns[] = {{"uid", "INTEGER"},
                                     {"trace", "INTEGER"},
                                     {"kind", "TEXT"},
                                     {"cat", "TEXT"},
                                     {"name", "TEXT"},
                                     {"ph", "TEXT"},
                                     {"pid", ""},
                                     {"tid", ""},
                                     {"ts", "INTEGER"},
                                     {"dur", "INTEGER"},
                                     {"end", "INTEGER"},
                                     {"parent", "INTEGER"},
                                     {"depth", "INTEGER"},
                                     {"step", "INTEGER"},
                                     {"stream", "INTEGER"},
                                     {"device", "INTEGER"},
                                     {"correlation", "INTEGER"},
                                     {"external_id", "INTEGER"},
                                     {"seq", "INTEGER"},
                                     {"fwd", "INTEGER"},
                                     {"flow_id", ""},
                                     {"args", "TEXT"},
                                     {"input_dims", "TEXT"},
                                     {"input_types", "TEXT"},
                                     {"input_strides", "TEXT"},
                                     {"concrete_inputs", "TEXT"}};
const int kEventColumnCount = sizeof(kEventColumns) / sizeof(kEventColumns[0]);

namespace {

// args members exposed as columns, with the key they come from.
const char* const kArgsMember[] = {"Input Dims", "Input type", "Input Strides", "Concrete Inputs"};

// The module's client data: the connection's stores, and what to do with them when it closes.
struct ModuleAux {
  sqlite3* db;
  StoreRegistry* stores;
  void (*destroy)(void*);
};

// Which stores have a live `event` table on which connection: a store answers for a schema only
// while the schema's table is connected to it (loaded_store). DETACH disconnects the table, so a
// schema detached and attached again under the same name (a saved database, another trace) never
// reads the store of what was there before.
std::mutex g_connections_mu;
std::map<sqlite3*, StoreRegistry*> g_connections;  // for loaded_store()
// The tables connected to a store on a connection, each with the database handle (SQLite's file
// object of its schema) it was connected in. A table outlives DETACH while a statement not yet
// reset still holds it, so its store answers only where that handle is still the schema's.
std::multimap<std::pair<sqlite3*, const EventStore*>, const void*> g_live_tables;

// The database handle SQLite has open under `schema` (nullptr: no such schema).
const void* schema_handle(sqlite3* db, const char* schema) {
  sqlite3_file* file = nullptr;
  return sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK ? file : nullptr;
}

// One per schema: argv[1] is the schema the table lives in, its store holds the rows, and argv[3]
// the generation of the store it was created for (finish_schema): a store loaded later under the
// same name is another trace, and an event table written by hand (or into a file) is refused.
struct Table : sqlite3_vtab {
  Table(sqlite3* connection, void* aux, int argc, const char* const* argv) : sqlite3_vtab{}, db(connection) {
    auto* stores = static_cast<ModuleAux*>(aux)->stores;
    auto it = argc > 1 ? stores->find(argv[1]) : stores->end();
    if (it == stores->end() || !it->second)
      throw std::runtime_error(
          fmt::format("no trace is loaded in schema {} of this session", argc > 1 ? argv[1] : "?"));
    if (argc < 4 || std::to_string(it->second->generation) != argv[3])
      throw std::runtime_error(
          fmt::format("the event table of schema {} is not the one tlsql created for its trace", argv[1]));
    store = it->second.get();
    handle = schema_handle(db, argv[1]);
    std::lock_guard<std::mutex> l(g_connections_mu);
    g_live_tables.emplace(std::pair(db, store), handle);
  }
  ~Table() {
    std::lock_guard<std::mutex> l(g_connections_mu);
    auto [from, to] = g_live_tables.equal_range({db, store});
    for (auto it = from; it != to; ++it)
      if (it->second == handle) {
        g_live_tables.erase(it);
        break;
      }
  }
  sqlite3* db;
  EventStore* store;
  const void* handle;
};

// A cursor walks either a contiguous range of positions or a list of them (kind or children
// index), optionally bounded by uid; positions are uid - store.first_uid, ascending.
struct Cursor : VtabCursor<Table> {
  const EventStore* store = nullptr;
  const uint32_t* list = nullptr;
  std::vector<uint32_t> owned;  // children converted to positions
  size_t list_size = 0, at = 0;
  int64_t pos = 0, hi = 0;                     // range mode: [pos, hi)
  int64_t lo_bound = 0, hi_bound = INT64_MAX;  // list mode bounds on position
  bool use_list = false, done = true;
  // current row
  const LoadedTrace* trace = nullptr;
  const EventRec* rec = nullptr;
  std::string buf;                         // the row's args text, decoded (args_of)
  std::array<std::string, 4> member_keys;  // kArgsMember as the store writes them (args_text.h)
  // The row's kArgsMember values as they lie, found in one walk of its args when the first is
  // read: SQLite asks for input_dims, input_types, ... a column at a time, and each walked the
  // members before its own again (a tree diff reads all four of every op it lists).
  int64_t members_of = -1;  // the position whose values member_raw holds
  std::array<std::string_view, 4> member_raw;

  // `name` / `cat` LIKE or GLOB a pattern (kTextMatch): each distinct string is matched once
  // (SQLite would read and match the text of every row: a search of a trace's kernel names by
  // pattern, or critical_path's annotation). A prefilter: SQLite checks the rows that pass again
  // (omit = false), with PRAGMA case_sensitive_like and an ESCAPE clause, which this does not know.
  struct TextMatch {
    uint32_t EventRec::*field = nullptr;  // nullptr: off
    bool glob = false;
    std::string pattern;
    std::vector<int8_t> memo;  // string id -> -1 unknown, 0 no, 1 yes (kept while the pattern is)
  };
  std::array<TextMatch, 2> text_match;  // name, cat
  bool matches(TextMatch& m, const EventRec& e) {
    const uint32_t id = e.*m.field;
    if (id == StringPool::kNone) return false;  // (NULL LIKE x is NULL)
    if (id >= m.memo.size()) m.memo.resize(std::max<size_t>(store->strings.size(), id + 1), -1);
    int8_t& known = m.memo[id];
    if (known < 0) {
      const std::string text(store->strings.get(id));  // (NUL-terminated for SQLite's matchers)
      // sqlite3_strlike ignores ASCII case as LIKE does by default: a superset of a
      // case-sensitive LIKE's rows, which SQLite then narrows.
      known = (m.glob ? sqlite3_strglob(m.pattern.c_str(), text.c_str())
                      : sqlite3_strlike(m.pattern.c_str(), text.c_str(), 0)) == 0;
    }
    return known;
  }
  bool text_matched = false;  // any TextMatch on
  // Bounds on ts, dur and end (index: column - kTs) from `>`, `>=`, `<`, `<=` and BETWEEN
  // (kTimeBound): rows outside them are passed over without a column read by SQLite for each
  // (critical_path reads one step's host events out of a trace's every one). A prefilter too:
  // a bound is widened to whole numbers and SQLite checks the exact comparison again. A row whose
  // value is NULL meets no bound (NULL < x is NULL).
  struct TimeBound {
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    bool on = false;
  };
  std::array<TimeBound, 3> time_bounds;
  bool timed = false;  // any TimeBound on
  bool in_time_bounds(const EventRec& e) const {
    const int64_t v[3] = {e.ts, e.dur, e.end()};
    for (size_t i = 0; i < 3; ++i)
      if (time_bounds[i].on && (v[i] == kNull || v[i] < time_bounds[i].lo || v[i] > time_bounds[i].hi)) return false;
    return true;
  }
  bool wanted(const EventRec& e) {
    return (!timed || in_time_bounds(e)) && (!text_matched || ((!text_match[0].field || matches(text_match[0], e)) &&
                                                               (!text_match[1].field || matches(text_match[1], e))));
  }

  void settle() {
    for (;;) {
      if (use_list) {
        if (at < list_size && (int64_t)list[at] < lo_bound)
          at = std::lower_bound(list + at, list + list_size, (uint32_t)std::min<int64_t>(lo_bound, UINT32_MAX)) - list;
        done = at >= list_size || (int64_t)list[at] >= hi_bound;
        if (!done) pos = list[at];
      } else {
        done = pos >= hi;
      }
      if (done) return;
      int64_t local;
      trace = &store->trace_at(pos, local);
      rec = &trace->rows[local];
      if (wanted(*rec)) return;
      if (use_list)
        ++at;
      else
        ++pos;
    }
  }

  static std::string declaration();
  static int best_index(Table&, sqlite3_index_info*);
  int filter(int plan, int argc, sqlite3_value** argv);
  bool eof() const { return done; }
  void next() {
    if (use_list)
      ++at;
    else
      ++pos;
    settle();
  }
  void column(sqlite3_context* ctx, int col);
  sqlite3_int64 rowid() const { return store->first_uid + pos; }
};

// idxNum bits: which constraints xFilter receives, in this order.
// kKindOrder: every row, by kind name then uid (GROUP BY kind without a sort); kKindCatOrder: by
// kind, then cat, then uid (GROUP BY kind, cat: the events report, and the first query one types).
// kNameOrder / kCatOrder: the plan's rows by name / cat (NULL first, as SQLite orders), then uid:
// GROUP BY name of a trace's kernels would otherwise sort long kernel names that share most of
// their text, which costs more than the rest of the query.
enum Plan {
  kByUid = 1,
  kByParent = 2,
  kByKind = 4,
  kUidLow = 8,
  kUidHigh = 16,
  kByTrace = 32,
  kKindOrder = 64,
  kNameOrder = 128,
  kKindCatOrder = 256,
  kCatOrder = 512,
  // A pattern for name (kTextMatch) and for cat (kTextMatch << 1), received after the others;
  // kGlob / kGlob << 1: the pattern is GLOB's, not LIKE's.
  kTextMatch = 1024,
  kGlob = 4096,
  // A bound on ts, dur or end (Cursor::TimeBound), received after the patterns: kTimeBound <<
  // (2 * (column - kTs) + upper), upper 0 for > and >=, 1 for < and <=.
  kTimeBound = 16384
};

void destroy_aux(void* p) {
  auto* aux = static_cast<ModuleAux*>(p);
  {
    std::lock_guard<std::mutex> l(g_connections_mu);
    // Only its own entry: registering the module again (the extension loaded twice) replaces this
    // aux after g_connections holds the new one's stores, which must stay found.
    if (auto it = g_connections.find(aux->db); it != g_connections.end() && it->second == aux->stores)
      g_connections.erase(it);
  }
  if (aux->destroy) aux->destroy(aux->stores);
  delete aux;
}

std::string Cursor::declaration() {
  std::string decl = "CREATE TABLE x(";
  for (int i = 0; i < kEventColumnCount; ++i)
    decl += fmt::format("{}{} {}", i ? ", " : "", quote_identifier(kEventColumns[i].name), kEventColumns[i].type);
  return decl + ")";
}

int Cursor::best_index(Table& table, sqlite3_index_info* info) {
  const EventStore* store = table.store;
  double n = std::max<double>(1, (double)store->total_rows);
  int eq_uid = -1, eq_parent = -1, eq_kind = -1, eq_trace = -1, low = -1, high = -1;
  int pattern[2] = {-1, -1};                     // a LIKE or GLOB constraint on name, on cat
  int time_bound[6] = {-1, -1, -1, -1, -1, -1};  // (column - kTs) * 2 + upper: kTimeBound
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (!c.usable) continue;
    int col = c.iColumn == -1 ? kUid : c.iColumn;
    if (col == kTs || col == kDur || col == kEnd) {
      const bool lower = c.op == SQLITE_INDEX_CONSTRAINT_GT || c.op == SQLITE_INDEX_CONSTRAINT_GE,
                 upper = c.op == SQLITE_INDEX_CONSTRAINT_LT || c.op == SQLITE_INDEX_CONSTRAINT_LE;
      if ((lower || upper) && time_bound[(col - kTs) * 2 + upper] < 0) time_bound[(col - kTs) * 2 + upper] = i;
      continue;
    }
    if ((col == kName || col == kCat) &&
        (c.op == SQLITE_INDEX_CONSTRAINT_LIKE || c.op == SQLITE_INDEX_CONSTRAINT_GLOB)) {
      if (pattern[col == kCat] < 0) pattern[col == kCat] = i;
      continue;
    }
    if (c.op == SQLITE_INDEX_CONSTRAINT_EQ) {
      if (col == kUid)
        eq_uid = i;
      else if (col == kParent)
        eq_parent = i;
      else if (col == kKind)
        eq_kind = i;
      else if (col == kTrace)
        eq_trace = i;
    } else if (col == kUid && (c.op == SQLITE_INDEX_CONSTRAINT_GT || c.op == SQLITE_INDEX_CONSTRAINT_GE)) {
      low = i;
    } else if (col == kUid && (c.op == SQLITE_INDEX_CONSTRAINT_LT || c.op == SQLITE_INDEX_CONSTRAINT_LE)) {
      high = i;
    }
  }
  int plan = 0, arg = 0;
  double cost = n, rows = n;
  auto use = [&](int i, int bit, bool omit) {
    plan |= bit;
    info->aConstraintUsage[i].argvIndex = ++arg;
    info->aConstraintUsage[i].omit = omit;
  };
  if (eq_uid >= 0) {
    use(eq_uid, kByUid, true);
    cost = rows = 1;
    info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  } else if (eq_parent >= 0) {
    use(eq_parent, kByParent, true);
    cost = rows = 10;
  } else if (eq_kind >= 0) {
    use(eq_kind, kByKind, true);
    cost = rows = n / 8;
  }
  if (eq_uid < 0) {
    // uid bounds narrow any plan (lists are in uid order). The boundary value itself is
    // re-checked by SQLite (omit = false), so GT vs GE need not be told apart here.
    if (low >= 0) use(low, kUidLow, false), cost /= 4, rows /= 4;
    if (high >= 0) use(high, kUidHigh, false), cost /= 4, rows /= 4;
    if (eq_trace >= 0 && !(plan & (kByParent | kByKind))) use(eq_trace, kByTrace, true), cost /= 2, rows /= 2;
  }
  // (Not an index: the cost is left as it was, so that no plan changes for them.)
  for (int k = 0; k < 2; ++k)
    if (pattern[k] >= 0)
      use(pattern[k],
          (kTextMatch << k) | (info->aConstraint[pattern[k]].op == SQLITE_INDEX_CONSTRAINT_GLOB ? kGlob << k : 0),
          false);
  for (int b = 0; b < 6; ++b)
    if (time_bound[b] >= 0) use(time_bound[b], kTimeBound << b, false);
  info->idxNum = plan;
  info->estimatedCost = cost;
  info->estimatedRows = (sqlite3_int64)std::max(1.0, rows);
  // Every plan yields rows in uid order, which is trace order too (a store's traces take uids in
  // the order they load). ORDER BY / GROUP BY kind (of a whole scan) walks the kind lists by name.
  auto is = [&](int i, int col) {
    const int c = info->aOrderBy[i].iColumn;
    return !info->aOrderBy[i].desc && (c == col || (col == kUid && c == -1));
  };
  const bool by_uid = info->nOrderBy == 1 && (is(0, kUid) || is(0, kTrace));
  const bool by_kind = info->nOrderBy >= 1 && info->nOrderBy <= 2 && is(0, kKind) &&
                       (info->nOrderBy == 1 || is(1, kTrace) || is(1, kUid));
  // (Not for SELECT DISTINCT name, which lists names as they first occur, in uid order, without it.)
  const bool by_name = info->nOrderBy >= 1 && info->nOrderBy <= 2 && is(0, kName) &&
                       (info->nOrderBy == 1 || is(1, kUid)) && sqlite3_vtab_distinct(info) <= 1;
  const bool by_cat = info->nOrderBy >= 1 && info->nOrderBy <= 2 && is(0, kCat) &&
                      (info->nOrderBy == 1 || is(1, kUid)) && sqlite3_vtab_distinct(info) <= 1;
  const bool by_kind_cat = info->nOrderBy >= 2 && info->nOrderBy <= 3 && is(0, kKind) && is(1, kCat) &&
                           (info->nOrderBy == 2 || is(2, kUid)) && sqlite3_vtab_distinct(info) <= 1;
  if (by_uid || (by_kind && (plan & kByKind))) {
    info->orderByConsumed = 1;
  } else if (by_kind && plan == 0) {  // the lists are not ascending as a whole: no bounds on top
    info->idxNum = plan | kKindOrder;
    info->orderByConsumed = 1;
  } else if (by_kind_cat && plan == 0) {
    info->idxNum = plan | kKindCatOrder;
    info->orderByConsumed = 1;
  } else if ((by_name || by_cat) && !(plan & (kByUid | kUidLow | kUidHigh))) {  // (the same)
    info->idxNum = plan | (by_name ? kNameOrder : kCatOrder);
    info->orderByConsumed = 1;
  }
  return SQLITE_OK;
}

bool int_arg(sqlite3_value* v, int64_t& out) {
  int t = sqlite3_value_numeric_type(v);
  if (t == SQLITE_INTEGER) {
    out = sqlite3_value_int64(v);
    return true;
  }
  if (t == SQLITE_FLOAT) {
    double d = sqlite3_value_double(v);
    out = (int64_t)d;
    return (double)out == d;
  }
  return false;
}

// Orders `rows` (positions) by the text of `field` (NULL first, then byte order, as SQLite's
// BINARY collation), keeping their order within one text.
void sort_by_text(const EventStore& s, std::vector<uint32_t>& rows, uint32_t EventRec::*field) {
  auto id_of = [&](uint32_t pos) {
    int64_t local;
    return s.trace_at(pos, local).rows[(size_t)local].*field;
  };
  // A few rows (a node's children, per call of a correlated subquery): a stable sort by text, not
  // a rank table the size of the string pool.
  if (rows.size() * 16 < s.strings.size()) {
    auto text = [&](uint32_t pos) {
      const uint32_t n = id_of(pos);
      return n == StringPool::kNone ? std::optional<std::string_view>() : s.strings.get(n);
    };
    std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return text(a) < text(b); });
    return;
  }
  // A counting sort: rank[id] is 0 for no text, then 1.. in the texts' byte order.
  std::vector<uint32_t> ids(rows.size());
  std::vector<uint32_t> rank(s.strings.size() + 1, 0);
  const uint32_t none = (uint32_t)s.strings.size();  // StringPool::kNone's slot
  std::vector<uint32_t> used;
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t n = id_of(rows[i]);
    ids[i] = n == StringPool::kNone ? none : n;
    if (ids[i] != none && !rank[ids[i]]) rank[ids[i]] = 1, used.push_back(ids[i]);
  }
  std::sort(used.begin(), used.end(), [&](uint32_t a, uint32_t b) { return s.strings.get(a) < s.strings.get(b); });
  for (size_t i = 0; i < used.size(); ++i) rank[used[i]] = (uint32_t)i + 1;
  std::vector<uint32_t> start(used.size() + 2, 0);
  for (uint32_t n : ids) ++start[rank[n] + 1];
  for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<uint32_t> sorted(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) sorted[start[rank[ids[i]]]++] = rows[i];
  rows = std::move(sorted);
}

// Replaces the cursor's rows (its list, or its range within the trace bounds) by the same rows
// ordered by the text of `field`, then position.
void order_by_text(Cursor& c, uint32_t EventRec::*field) {
  std::vector<uint32_t> rows;
  if (c.use_list) {
    for (size_t i = 0; i < c.list_size; ++i)
      if ((int64_t)c.list[i] >= c.lo_bound && (int64_t)c.list[i] < c.hi_bound) rows.push_back(c.list[i]);
  } else {
    for (int64_t p = std::max(c.pos, c.lo_bound); p < std::min(c.hi, c.hi_bound); ++p) rows.push_back((uint32_t)p);
  }
  sort_by_text(*c.store, rows, field);
  c.use_list = true;
  c.at = 0;
  c.lo_bound = 0, c.hi_bound = INT64_MAX;
  c.owned = std::move(rows);
  c.list = c.owned.data();
  c.list_size = c.owned.size();
}

int Cursor::filter(int plan, int, sqlite3_value** argv) {
  store = table().store;
  const EventStore& s = *store;
  use_list = false;
  owned.clear();
  at = 0;
  pos = 0;
  hi = s.total_rows;
  lo_bound = 0;
  hi_bound = INT64_MAX;
  int a = 0;
  int64_t v;
  bool none = false;
  if (plan & kByUid) {
    if (int_arg(argv[a++], v) && v >= s.first_uid && v < s.first_uid + s.total_rows)
      pos = v - s.first_uid, hi = pos + 1;
    else
      none = true;
  }
  if (plan & kByParent) {
    use_list = true;
    if (int_arg(argv[a++], v) && v >= s.first_uid && v < s.first_uid + s.total_rows) {
      int64_t local;
      const LoadedTrace& t = s.trace_at(v - s.first_uid, local);
      int64_t base = t.uid_base - s.first_uid;
      for (uint32_t k = t.child_start[local]; k < t.child_start[local + 1]; ++k)
        owned.push_back((uint32_t)(base + t.children[k]));
    }
    list = owned.data();
    list_size = owned.size();
  }
  if (plan & kByKind) {
    use_list = true;
    const char* k = (const char*)sqlite3_value_text(argv[a++]);
    list_size = 0;
    // kind_from_name says Kind::other for any unknown text too: only the kind's own name matches.
    const Kind kind = k ? kind_from_name(k) : Kind::other;
    if (k && kind_name(kind) == k && (size_t)kind < s.rows_of_kind.size()) {
      list = s.rows_of_kind[(size_t)kind].data();
      list_size = s.rows_of_kind[(size_t)kind].size();
    }
  }
  if (plan & (kKindOrder | kKindCatOrder)) {
    use_list = true;
    std::vector<int> kinds;
    for (int i = 0; i < (int)s.rows_of_kind.size(); ++i) kinds.push_back(i);
    std::sort(kinds.begin(), kinds.end(), [](int a, int b) { return kind_name((Kind)a) < kind_name((Kind)b); });
    for (int k : kinds) {
      std::vector<uint32_t> rows(s.rows_of_kind[k].begin(), s.rows_of_kind[k].end());
      if (plan & kKindCatOrder) sort_by_text(s, rows, &EventRec::cat);
      owned.insert(owned.end(), rows.begin(), rows.end());
    }
    list = owned.data();
    list_size = owned.size();
  }
  // Bounds are positions in [0, total_rows], clamped before any arithmetic: uid <= 2^63-1 must
  // not overflow into "no rows". (SQLite re-checks the boundary value itself.)
  auto position = [&](int64_t uid) {
    return uid <= s.first_uid ? 0 : uid - s.first_uid >= s.total_rows ? s.total_rows : uid - s.first_uid;
  };
  if (plan & kUidLow) {
    if (int_arg(argv[a], v))
      lo_bound = position(v);
    else if (sqlite3_value_type(argv[a]) == SQLITE_NULL)
      none = true;
    ++a;
  }
  if (plan & kUidHigh) {
    if (int_arg(argv[a], v))
      hi_bound = v < s.first_uid ? 0 : position(v) + (v - s.first_uid < s.total_rows ? 1 : 0);
    else if (sqlite3_value_type(argv[a]) == SQLITE_NULL)
      none = true;
    ++a;
  }
  if (plan & kByTrace) {
    none = true;
    if (int_arg(argv[a++], v))
      for (const auto& t : s.traces)
        if (t->id == v) {
          lo_bound = std::max(lo_bound, t->uid_base - s.first_uid);
          hi_bound = std::min<int64_t>(hi_bound, t->uid_base - s.first_uid + (int64_t)t->rows.size());
          none = false;
        }
  }
  text_matched = false;
  for (int k = 0; k < 2; ++k) {
    TextMatch& m = text_match[(size_t)k];
    m.field = nullptr;
    if (!(plan & (kTextMatch << k))) continue;
    const char* p = (const char*)sqlite3_value_text(argv[a++]);
    if (!p) {  // x LIKE NULL: no row
      none = true;
      continue;
    }
    const bool glob = plan & (kGlob << k);
    if (m.pattern != p || m.glob != glob) m.pattern = p, m.glob = glob, m.memo.clear();
    m.field = k == 0 ? &EventRec::name : &EventRec::cat;
    text_matched = true;
  }
  timed = false;
  for (int b = 0; b < 6; ++b) {
    TimeBound& t = time_bounds[(size_t)b / 2];
    if (b % 2 == 0) t = TimeBound();
    if (!(plan & (kTimeBound << b))) continue;
    // Only a number bounds a row (an integer against text or a blob compares by type, not
    // value); a fraction is widened to the whole number past it.
    sqlite3_value* x = argv[a++];
    const int type = sqlite3_value_type(x);
    int64_t bound;
    if (type == SQLITE_INTEGER) {
      bound = sqlite3_value_int64(x);
    } else if (type == SQLITE_FLOAT) {
      const double d = b % 2 ? std::ceil(sqlite3_value_double(x)) : std::floor(sqlite3_value_double(x));
      if (!(d > -9.2e18 && d < 9.2e18)) continue;  // (NaN, or past int64: no bound worth having)
      bound = (int64_t)d;
    } else {  // (text takes the column's INTEGER affinity in SQLite's comparison: left to SQLite)
      if (type == SQLITE_NULL) none = true;  // x < NULL: no row
      continue;
    }
    (b % 2 ? t.hi : t.lo) = bound;
    t.on = timed = true;
  }
  if (!use_list) {
    pos = std::max(pos, lo_bound);
    hi = std::min(hi, hi_bound);
  }
  if (none || s.total_rows == 0) {
    done = true;
    return SQLITE_OK;
  }
  if (plan & (kNameOrder | kCatOrder)) order_by_text(*this, (plan & kNameOrder) ? &EventRec::name : &EventRec::cat);
  settle();
  return SQLITE_OK;
}

// A stored column (uid .. args) of one row, as the virtual table serves it and a save writes it.
// Text points into the store (or static data) and stays valid while it lives, except a decoded
// args text (args_of), which lies in `buf` until the next call.
// (Inlined where `col` is constant, the save's rows: each call is then its case alone. Where it
// is not, event_column calls it.)
[[gnu::always_inline]] inline RecordValue column_of(const EventStore& s, const LoadedTrace& t, const EventRec& e,
                                                    int64_t uid, int col, std::string& buf) {
  auto integer = [](int64_t v) { return v == kNull ? RecordValue{} : RecordValue::of_int(v); };
  auto string = [&](uint32_t id) {
    return id == StringPool::kNone ? RecordValue{} : RecordValue::of_text(s.strings.get(id));
  };
  auto id = [&](Id32 v) { return integer(s.ids.value(v)); };
  auto scalar = [&](Id32 v, bool text) { return text ? string((uint32_t)s.ids.value(v)) : id(v); };
  switch (col) {
    case kUid: return RecordValue::of_int(uid);
    case kTrace: return RecordValue::of_int(t.id);
    case kKind: return RecordValue::of_text(kind_name(e.kind));
    case kCat: return string(e.cat);
    case kName: return string(e.name);
    case kPh: return e.ph ? RecordValue::of_text({&e.ph, 1}) : RecordValue{};
    case kPid: return scalar(e.pid, e.is(EventRec::pid_text));
    case kTid: return scalar(e.tid, e.is(EventRec::tid_text));
    case kTs: return integer(e.ts);
    case kDur: return integer(e.dur);
    case kEnd: return integer(e.end());
    case kParent: return integer(e.parent < 0 ? kNull : t.uid_base + e.parent);
    case kDepth: return RecordValue::of_int(e.depth);
    case kStep: return integer(e.step == EventRec::kNull32 ? kNull : e.step);
    case kStream: return id(e.stream);
    case kDevice: return integer(e.device == EventRec::kNull32 ? kNull : e.device);
    case kCorrelation: return id(e.correlation);
    case kExternalId: return id(e.external_id);
    case kSeq: return id(e.seq);
    case kFwd: return integer(e.fwd < 0 ? kNull : t.uid_base + e.fwd);
    case kFlowId: return scalar(e.flow_id, e.is(EventRec::flow_text));
    case kArgs: return e.is(EventRec::has_args) ? RecordValue::of_text(args_of(s.args, e, buf)) : RecordValue{};
  }
  return {};
}
RecordValue event_column(const EventStore& s, const LoadedTrace& t, const EventRec& e, int64_t uid, int col,
                         std::string& buf) {
  return column_of(s, t, e, uid, col, buf);
}

void Cursor::column(sqlite3_context* ctx, int col) {
  const EventRec& e = *rec;
  if (col < kArgs) {
    RecordValue v = event_column(*store, *trace, e, store->first_uid + pos, col, buf);
    switch (v.type) {
      case RecordValue::null: sqlite3_result_null(ctx); break;
      case RecordValue::integer: sqlite3_result_int64(ctx, v.i); break;
      case RecordValue::text: sqlite3_result_text(ctx, v.s, (int)v.len, SQLITE_STATIC); break;
    }
    return;
  }
  if (!e.is(EventRec::has_args)) return sqlite3_result_null(ctx);
  const bool keyed = e.is(EventRec::keyed_args);
  if (col == kArgs) {
    // A decoded text lies in the cursor's buffer, which the next row overwrites: SQLite gets a copy.
    const std::string_view text = args_of(store->args, e, buf);
    return sqlite3_result_text(ctx, text.data(), (int)text.size(), keyed ? SQLITE_TRANSIENT : SQLITE_STATIC);
  }
  // args members, minified as SQLite's -> operator returns them (the loader stores args
  // minified); read from the stored text without decoding the rest of it (args_text.h)
  if (members_of != pos) {
    const std::string_view stored = store->args.get(e.args, e.args_len);
    if (keyed) {
      if (member_keys[0].empty())
        for (size_t i = 0; i < member_keys.size(); ++i)
          member_keys[i] = args_text::stored_key(kArgsMember[i], store->args.keys());
      const std::array<std::string_view, 4> keys{member_keys[0], member_keys[1], member_keys[2], member_keys[3]};
      args_text::find_members(stored, keys, member_raw);
    } else {  // (a text stored as it was: it held a control byte)
      member_raw.fill({});
      json_scan::for_each_member(stored, [&](std::string_view k, std::string_view v) {
        for (size_t i = 0; i < member_raw.size(); ++i)
          if (member_raw[i].empty() && k == kArgsMember[i]) member_raw[i] = v;
      });
    }
    members_of = pos;
  }
  const std::string_view raw = member_raw[(size_t)(col - kInputDims)];
  const std::string_view v = keyed ? args_text::member_value(raw, store->args.keys(), buf) : raw;
  if (v.empty()) return sqlite3_result_null(ctx);
  // (a member of a keyed text lies in the arena unless it was decoded into the buffer)
  sqlite3_result_text(ctx, v.data(), (int)v.size(), v.data() == buf.data() ? SQLITE_TRANSIENT : SQLITE_STATIC);
}

}  // namespace

namespace {

// tlsql_schema: one row, the name of the schema the table is in (SQLite gives it to the table as
// argv[1] each time the schema is attached, under whatever name). A view in a saved database
// passes it to the functions so that they read the view's own database: other.op_summary over
// other's events. A token stored in the file cannot say that: a copy of the file holds the same
// one, and a copy attached beside its original would answer with the original's numbers.
struct SchemaNameTable : sqlite3_vtab {
  SchemaNameTable(sqlite3*, void*, int argc, const char* const* argv)
      : sqlite3_vtab{}, schema(argc > 1 ? argv[1] : "main") {}
  std::string schema;
};
struct SchemaNameCursor : VtabCursor<SchemaNameTable> {
  bool done = false;
  static std::string declaration() { return "CREATE TABLE x(name TEXT)"; }
  static int best_index(SchemaNameTable&, sqlite3_index_info* info) {
    info->estimatedCost = 1;
    info->estimatedRows = 1;
    return SQLITE_OK;
  }
  int filter(int, int, sqlite3_value**) { return done = false, SQLITE_OK; }
  bool eof() const { return done; }
  void next() { done = true; }
  void column(sqlite3_context* ctx, int) const {
    sqlite3_result_text(ctx, table().schema.c_str(), -1, SQLITE_TRANSIENT);
  }
  sqlite3_int64 rowid() const { return 0; }
};

}  // namespace

void register_event_module(sqlite3* db, StoreRegistry* stores, void (*destroy)(void*)) {
  sqlite3_create_module_v2(db, "tlsql_schema", vtab_module<SchemaNameCursor, true>(), nullptr, nullptr);
  {
    std::lock_guard<std::mutex> l(g_connections_mu);
    g_connections[db] = stores;
  }
  sqlite3_create_module_v2(db, "tlsql_event", vtab_module<Cursor, true>(), new ModuleAux{db, stores, destroy},
                           destroy_aux);
}

namespace {
// The store registered under `schema` for `db`, and whether a table is connected to it.
const EventStore* registered_store(sqlite3* db, const std::string& schema, bool& live, bool check_table = true) {
  std::lock_guard<std::mutex> l(g_connections_mu);
  live = false;
  auto c = g_connections.find(db);
  if (c == g_connections.end()) return nullptr;
  auto it = c->second->find(schema);
  if (it == c->second->end() || !it->second || it->second->traces.empty()) return nullptr;
  const void* now = schema_handle(db, schema.c_str());
  auto [from, to] = g_live_tables.equal_range({db, it->second.get()});
  live = now && std::any_of(from, to, [&](const auto& t) { return t.second == now; });
  // A table a statement not yet finalized holds outlives DETACH, and an empty database attached
  // in its place may get its handle's address: the schema must still have an event table (a
  // lookup in SQLite's schema, ~50 ns; not `check_table` for a call that knows the schema's identity
  // from earlier in its statement's run, which compares the handle).
  live = live && (!check_table || sqlite3_table_column_metadata(db, schema.c_str(), "event", nullptr, nullptr, nullptr,
                                                                nullptr, nullptr, nullptr) == SQLITE_OK);
  return it->second.get();
}
}  // namespace

const EventStore* loaded_store(sqlite3* db, const std::string& schema, bool check_table) {
  bool live = false;
  const EventStore* store = registered_store(db, schema, live, check_table);
  if (!store || live) return store;
  // No table connected to it: SQLite connects a schema's virtual tables lazily (after a schema
  // reset, on a second connection). Preparing a statement over the table connects it, if the
  // schema still holds it; a schema detached and attached again holds something else.
  const std::optional<std::string> attached = attached_schema(db, schema);
  if (!attached) return nullptr;
  sqlite3_stmt* probe = nullptr;
  sqlite3_prepare_v2(db, fmt::format("SELECT 1 FROM {}.event", quote_identifier(*attached)).c_str(), -1, &probe,
                     nullptr);
  sqlite3_finalize(probe);
  store = registered_store(db, schema, live);
  return live ? store : nullptr;
}

SchemaIdentity schema_identity(sqlite3* db, const std::string& schema, const SchemaIdentity* known) {
  SchemaIdentity id;
  // (the table check skipped only for a trace this run saw there: `known` a saved file's, or none,
  // a detached trace's table a statement still holds would pass as the schema's by its handle)
  if (const EventStore* s = loaded_store(db, schema, !known || !known->store)) id.store = s->generation;
  id.file = schema_handle(db, schema.c_str());
  const char* path = sqlite3_db_filename(db, schema.c_str());
  if (path && *path) id.path = std::hash<std::string_view>{}(path);
  if (!id.store && id.file) id.version = data_version(db, schema.c_str());
  if (!id.store && id.path) {
    id.stamp = known ? known->stamp : 0;
    if (!known || !(id == *known)) id.stamp = file_stamp(path);
  }
  return id;
}

uint64_t file_stamp(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return 0;
  const uint64_t parts[] = {(uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
                            (uint64_t)st.st_mtim.tv_nsec};
  return std::hash<std::string_view>{}(std::string_view((const char*)parts, sizeof parts)) | 1;
}

unsigned int data_version(sqlite3* db, const char* schema) {
  // (Only a file can change under another process: an in-memory schema's count is always current.)
  const char* file = sqlite3_db_filename(db, schema);
  if (file && *file && sqlite3_txn_state(db, schema) == SQLITE_TXN_NONE)
    schema_pragma(db, schema, "data_version");  // (its value is another count: the read is what it is for)
  unsigned int v = 0;
  sqlite3_file_control(db, schema, SQLITE_FCNTL_DATA_VERSION, &v);
  return v;
}

std::string event_key_problem(sqlite3* db, const std::string& schema) {
  // The schema is bound, not spliced: pragma_table_info takes it as an argument.
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name, upper(type), pk FROM pragma_table_info('event', ?1) WHERE pk > 0", -1, &q,
                         nullptr) != SQLITE_OK) {
    sqlite3_finalize(q);
    return "";
  }
  sqlite3_bind_text(q, 1, schema.c_str(), (int)schema.size(), SQLITE_TRANSIENT);
  int keys = 0;
  bool uid_key = false;
  while (sqlite3_step(q) == SQLITE_ROW) {
    ++keys;
    const char* name = (const char*)sqlite3_column_text(q, 0);
    const char* type = (const char*)sqlite3_column_text(q, 1);
    uid_key = uid_key || (name && type && std::string_view(name) == "uid" && std::string_view(type) == "INTEGER");
  }
  sqlite3_finalize(q);
  // A table with no declared key lists no row here either: it has a uid column but no key.
  bool has_table = false;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('event', ?1)", -1, &q, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(q, 1, schema.c_str(), (int)schema.size(), SQLITE_TRANSIENT);
    has_table = sqlite3_step(q) == SQLITE_ROW;
  }
  sqlite3_finalize(q);
  if (!has_table || (keys == 1 && uid_key)) return "";
  return "its event table does not declare uid INTEGER PRIMARY KEY, as tlsql writes it, so uids may repeat "
         "(a database tlsql did not write?)";
}

namespace {

// Where a save puts the event rows: the roots SQLite allocated for the (empty) event table and
// its indexes, and which indexes are filled here. An index this writer cannot fill (an
// expression, a collation, a WHERE other than "first column IS NOT NULL") is dropped here and
// built by SQLite after the rows are in: sql/indexes.sql stays the one list of indexes.
constexpr int kMaxIndexColumns = 2;  // key columns of an index written here
struct EventPages {
  struct Index {
    uint32_t root;
    std::vector<int> columns;  // event columns of the key; the rowid follows
    bool skip_null_first;      // partial: WHERE <first column> IS NOT NULL
    std::string name;
  };
  uint32_t table_root = 0;
  std::vector<Index> indexes;
  std::vector<std::string> indexes_by_sqlite;  // CREATE INDEX statements, run once the rows are in
  std::vector<std::string> reindex;            // indexes left empty by write_event_pages: REINDEX them
};

EventPages plan_event_pages(sqlite3* db) {
  EventPages plan;
  Statement root(db, "SELECT rootpage FROM save.sqlite_schema WHERE type = 'table' AND name = 'event'");
  if (!root.step()) throw SqlError("no event table in the saved schema");
  plan.table_root = (uint32_t)sqlite3_column_int64(root.get(), 0);
  Statement list(db,
                 "SELECT s.name, s.rootpage, s.sql, l.partial FROM save.sqlite_schema s "
                 "JOIN pragma_index_list('event', 'save') l ON l.name = s.name WHERE s.type = 'index'");
  std::vector<std::string> drop;
  while (list.step()) {
    std::string name = (const char*)sqlite3_column_text(list.get(), 0);
    std::string sql = sqlite3_column_text(list.get(), 2) ? (const char*)sqlite3_column_text(list.get(), 2) : "";
    EventPages::Index ix{
        (uint32_t)sqlite3_column_int64(list.get(), 1), {}, sqlite3_column_int(list.get(), 3) != 0, name};
    bool ok = !sql.empty();
    Statement cols(db, "SELECT cid, \"desc\", coll FROM pragma_index_xinfo(?, 'save') WHERE key ORDER BY seqno");
    sqlite3_bind_text(cols.get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
    while (cols.step()) {
      int cid = sqlite3_column_int(cols.get(), 0);
      const char* coll = (const char*)sqlite3_column_text(cols.get(), 2);
      // (not args: its texts are decoded per row, and entries tell texts apart by their address)
      ok = ok && cid >= 0 && cid < kArgs && sqlite3_column_int(cols.get(), 1) == 0 && coll &&
           std::string_view(coll) == "BINARY";
      ix.columns.push_back(cid);
    }
    if (ok && ix.skip_null_first) {
      std::string want = fmt::format("WHERE {} IS NOT NULL", kEventColumns[ix.columns[0]].name);
      ok = sql.size() >= want.size() && sql.compare(sql.size() - want.size(), want.size(), want) == 0;
    }
    if (ok && !ix.columns.empty() && ix.columns.size() <= kMaxIndexColumns) {
      plan.indexes.push_back(std::move(ix));
    } else {
      drop.push_back(name);
      // sqlite_schema keeps "CREATE [UNIQUE] INDEX name ..." without the schema: put it back.
      if (size_t at = sql.find(" INDEX "); at != std::string::npos) sql.insert(at + 7, "save.");
      plan.indexes_by_sqlite.push_back(sql);
    }
  }
  for (const std::string& name : drop) exec_sql(db, "DROP INDEX save." + quote_identifier(name));
  return plan;
}

// One index's entries in key order, each packed into one integer: per key column its type rank
// and its value (an integer, or a text's place among the column's distinct texts in content
// order), each offset by its smallest and given the bits its range needs, most significant
// first; then the row's position. Packed keys compare as the records do (compare_records: type,
// then value, column by column, then the rowid, which is in position order), so sorting them
// sorts the entries; the few bits they need on real traces (event_kind: ~5 bits of key, event_parent
// ~20) make a radix sort of one to three passes, where sorting 40-byte entries on four words took
// most of the save's CPU beyond the page writes.
template <typename Key>
struct SortedIndex {
  struct Column {
    int type_bits = 0, value_bits = 0;
    uint64_t type_min = 0, value_min = 0;
    std::vector<RecordValue> texts;  // the column's distinct texts in content order
  };
  std::vector<Column> cols;
  int pos_bits = 0;
  std::vector<Key> keys;  // ascending
};

// The entries of index `ix` sorted, or nullopt when its packed keys would need more than Key's
// bits (integer keys spanning most of the 64-bit range in two columns: SQLite builds it then).
template <typename Key>
std::optional<SortedIndex<Key>> sort_index(const EventStore& s, const EventPages::Index& ix) {
  const size_t k = ix.columns.size();
  std::string buf;
  // Visits (position, column, value) of every entry, in position order; rows the partial index
  // leaves out are skipped.
  auto each = [&](auto&& f) {
    uint32_t pos = 0;
    RecordValue v[kMaxIndexColumns];
    for (const auto& t : s.traces)
      for (size_t i = 0; i < t->rows.size(); ++i, ++pos) {
        const int64_t uid = t->uid_base + (int64_t)i;
        for (size_t c = 0; c < k; ++c) v[c] = event_column(s, *t, t->rows[i], uid, ix.columns[c], buf);
        if (ix.skip_null_first && v[0].type == RecordValue::null) continue;
        f(pos, v);
      }
  };
  // Pass 1: each column's types, integer range and distinct texts (by address: the store interns
  // them; first by appearance, then by content).
  struct Seen {
    uint64_t type_lo = UINT64_MAX, type_hi = 0, int_lo = UINT64_MAX, int_hi = 0;
    std::map<std::pair<uintptr_t, uint32_t>, uint64_t> text_id;
    std::vector<RecordValue> texts;
    std::pair<uintptr_t, uint32_t> last{0, UINT32_MAX};  // rows repeat a kind or name in runs
    uint64_t last_id = 0;
    uint64_t id(const RecordValue& v) {
      const std::pair<uintptr_t, uint32_t> key{(uintptr_t)v.s, v.len};
      if (key != last) {
        auto [it, added] = text_id.emplace(key, texts.size());
        if (added) texts.push_back(v);
        last = key, last_id = it->second;
      }
      return last_id;
    }
  };
  std::vector<Seen> seen(k);
  size_t entries = 0;
  each([&](uint32_t, const RecordValue* v) {
    ++entries;
    for (size_t c = 0; c < k; ++c) {
      Seen& x = seen[c];
      x.type_lo = std::min<uint64_t>(x.type_lo, v[c].type), x.type_hi = std::max<uint64_t>(x.type_hi, v[c].type);
      if (v[c].type == RecordValue::integer) {
        const uint64_t u = (uint64_t)v[c].i ^ (1ull << 63);  // signed order
        x.int_lo = std::min(x.int_lo, u), x.int_hi = std::max(x.int_hi, u);
      } else if (v[c].type == RecordValue::text) {
        x.id(v[c]);
      }
    }
  });
  SortedIndex<Key> out;
  out.cols.resize(k);
  std::vector<std::vector<uint64_t>> place(k);  // per column: a text id's place in content order
  int bits = 0;
  for (size_t c = 0; c < k; ++c) {
    Seen& x = seen[c];
    auto& col = out.cols[c];
    std::vector<uint64_t> by_content(x.texts.size());
    for (size_t i = 0; i < by_content.size(); ++i) by_content[i] = i;
    auto text = [&](uint64_t i) { return std::string_view(x.texts[i].s, x.texts[i].len); };
    // (Ties, the same text at two addresses, by first appearance, as their entries' rows go.)
    std::sort(by_content.begin(), by_content.end(), [&](uint64_t a, uint64_t b) {
      const int cmp = text(a).compare(text(b));
      return cmp ? cmp < 0 : a < b;
    });
    place[c].resize(by_content.size());
    for (size_t i = 0; i < by_content.size(); ++i)
      place[c][by_content[i]] = i, col.texts.push_back(x.texts[by_content[i]]);
    uint64_t lo = x.int_lo, hi = x.int_hi;
    if (!x.texts.empty()) lo = std::min<uint64_t>(lo, 0), hi = std::max<uint64_t>(hi, x.texts.size() - 1);
    if (lo > hi) lo = hi = 0;  // (no integer or text: every value is 0)
    if (x.type_lo > x.type_hi) x.type_lo = x.type_hi = 0;
    col.type_min = x.type_lo, col.type_bits = bits_for(x.type_hi - x.type_lo);
    col.value_min = lo, col.value_bits = bits_for(hi - lo);
    bits += col.type_bits + col.value_bits;
  }
  out.pos_bits = bits_for(s.total_rows > 0 ? (uint64_t)s.total_rows - 1 : 0);
  if (bits + out.pos_bits > (int)sizeof(Key) * 8) return std::nullopt;
  // Pass 2: the packed keys, in position order; then sorted on the key bits (stable: equal keys
  // stay in position order).
  out.keys.reserve(entries);
  each([&](uint32_t pos, const RecordValue* v) {
    Key key = 0;
    for (size_t c = 0; c < k; ++c) {
      const auto& col = out.cols[c];
      Seen& x = seen[c];
      const uint64_t value = v[c].type == RecordValue::integer ? ((uint64_t)v[c].i ^ (1ull << 63))
                             : v[c].type == RecordValue::text  ? place[c][x.id(v[c])]
                                                               : col.value_min;
      if (col.type_bits) key = key << col.type_bits | (Key)(v[c].type - col.type_min);
      if (col.value_bits) key = key << col.value_bits | (Key)(value - col.value_min);
    }
    out.keys.push_back(key << out.pos_bits | pos);
  });
  radix_sort(out.keys, out.pos_bits, out.pos_bits + bits);
  return out;
}

// Writes the sorted entries of one index as its b-tree.
template <typename Key>
void write_index(BtreeFile& file, uint32_t root, const SortedIndex<Key>& sorted, int64_t first_uid) {
  const size_t k = sorted.cols.size();
  BtreeFile::Index index(file, root);
  std::vector<RecordValue> values(k + 1);
  const Key pos_mask = (Key(1) << sorted.pos_bits) - 1;
  for (const Key& key : sorted.keys) {
    values[k] = RecordValue::of_int(first_uid + (int64_t)(uint64_t)(key & pos_mask));
    int at = sorted.pos_bits;  // fields from the least significant: the last column's value first
    for (size_t c = k; c-- > 0;) {
      const auto& col = sorted.cols[c];
      const uint64_t value = col.value_min + (uint64_t)((key >> at) & ((Key(1) << col.value_bits) - 1));
      at += col.value_bits;
      const uint64_t type = col.type_min + (uint64_t)((key >> at) & ((Key(1) << col.type_bits) - 1));
      at += col.type_bits;
      values[c] = type == RecordValue::integer ? RecordValue::of_int((int64_t)(value ^ (1ull << 63)))
                  : type == RecordValue::text  ? col.texts[value]
                                               : RecordValue{};
    }
    index.add(values);
  }
  index.finish();
}

// One index sorted in whichever key fits (64 bits on real traces), for write_index.
struct PreparedIndex {
  std::optional<SortedIndex<uint64_t>> narrow;
  std::optional<SortedIndex<unsigned __int128>> wide;
};
PreparedIndex prepare_index(const EventStore& s, const EventPages::Index& ix) {
  PreparedIndex p;
  p.narrow = sort_index<uint64_t>(s, ix);
  if (!p.narrow) p.wide = sort_index<unsigned __int128>(s, ix);
  return p;
}

// The event rows in uid order, then each index's entries sorted, as pages of the file SQLite
// created (src/btree_writer.h). The indexes are sorted in turn on a second thread while this one
// writes the rows (once `before_sorts` returns; both only read the store), at most two sorted
// and not yet written at once: the first two while the rows are written, the next as each is
// written. (One at a time, the second thread sat idle for the last third of the rows' write and
// the writes after the rows waited on two sorts; all at once, a save whose perf table was made
// before it, so that nothing precedes the sorts, held three indexes' keys beside the rows' pages:
// 1 GB control trace, the peak 1.13 GB against 1.02 GB.) An index whose keys fit no packed key is
// left empty and named in plan.reindex.
void write_event_pages(const EventStore& s, EventPages& plan, const std::string& path,
                       const std::function<void()>& before_sorts) {
  BtreeFile file(path);
  // How many more sorted indexes may wait; cancelled when this thread leaves (an error: the
  // sorter stops after the sort it is in, rather than sorting the rest first).
  struct Slots {
    std::mutex mu;
    std::condition_variable cv;
    int free = 2;
    bool cancelled = false;
    bool take() {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return free > 0 || cancelled; });
      return !cancelled && free-- > 0;
    }
    void give(bool cancel = false) {
      {
        std::lock_guard lock(mu);
        ++free, cancelled = cancelled || cancel;
      }
      cv.notify_one();
    }
  } slots;
  std::vector<std::promise<PreparedIndex>> sorted(plan.indexes.size());
  std::vector<std::future<PreparedIndex>> next;
  for (auto& p : sorted) next.push_back(p.get_future());
  std::future<void> sorter;
  if (!plan.indexes.empty())
    sorter = std::async(std::launch::async, [&s, &plan, &before_sorts, &sorted, &slots] {
      size_t x = 0;
      try {
        if (before_sorts) before_sorts();
        for (; x < sorted.size() && slots.take(); ++x) sorted[x].set_value(prepare_index(s, plan.indexes[x]));
      } catch (...) {
        for (; x < sorted.size(); ++x) sorted[x].set_exception(std::current_exception());
      }
    });
  // (Declared after the sorter: on the way out it cancels the sorts before the sorter is waited for.)
  struct Cancel {
    Slots& slots;
    ~Cancel() { slots.give(true); }
  } cancel{slots};
  RecordValue row[kArgs + 1];  // row[kUid] stays NULL: an INTEGER PRIMARY KEY is the rowid
  std::string buf;
  BtreeFile::Table table(file, plan.table_root);
  for (const auto& t : s.traces)
    for (size_t i = 0; i < t->rows.size(); ++i) {
      const int64_t uid = t->uid_base + (int64_t)i;
      const EventRec& e = t->rows[i];
      [&]<int... C>(std::integer_sequence<int, C...>) {
        ((row[kUid + 1 + C] = column_of(s, *t, e, uid, kUid + 1 + C, buf)), ...);
      }
      (std::make_integer_sequence<int, kArgs - kUid>{});
      table.add(uid, row);
    }
  table.finish();
  for (size_t x = 0; x < plan.indexes.size(); ++x) {
    {
      PreparedIndex p = next[x].get();
      if (p.narrow)
        write_index(file, plan.indexes[x].root, *p.narrow, s.first_uid);
      else if (p.wide)
        write_index(file, plan.indexes[x].root, *p.wide, s.first_uid);
      else
        plan.reindex.push_back(plan.indexes[x].name);  // (its root stays the empty leaf SQLite wrote)
    }
    slots.give();  // (its keys freed)
  }
  file.finish();
}

// A saved database (main is a file) is copied page by page with SQLite's backup API.
void copy_database(sqlite3* db, const std::string& path, const TempFile& tmp) {
  sqlite3* out = nullptr;
  int rc = sqlite3_open_v2(tmp.path().c_str(), &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_backup* b = sqlite3_backup_init(out, "main", db, "main");
    if (b) {
      while ((rc = sqlite3_backup_step(b, 4096)) == SQLITE_OK) {
      }
      sqlite3_backup_finish(b);
    }
    rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    if (!b) rc = sqlite3_errcode(out);
  }
  std::string msg = rc == SQLITE_OK ? "" : sqlite3_errstr(rc);
  sqlite3_close(out);
  if (rc != SQLITE_OK) throw SqlError(fmt::format("{}: cannot write the database: {}", path, msg));
}

}  // namespace

void save_database(sqlite3* db, const std::string& path, const std::function<void(sqlite3*, const std::string&)>& add,
                   const std::function<void()>& before_sorts) {
  refuse_input(path, db);  // (TempFile checks the watched connections; this one may not be)
  TempFile tmp(path);
  // Attached as `save`, with no journal and no syncs (a half-written file is removed, never used).
  auto attach_save = [&] {
    Statement attach(db, "ATTACH ? AS save");
    sqlite3_bind_text(attach.get(), 1, file_uri(tmp.path()).c_str(), -1, SQLITE_TRANSIENT);  // (a path, not a URI)
    attach.step();
    // (DEFENSIVE refuses journal_mode=OFF, with which SQL could corrupt a file; this file is the
    // save's own, removed unless complete: lifted for the one statement.)
    int defensive = 0;
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &defensive);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 0, nullptr);
    int rc = sqlite3_exec(db, "PRAGMA save.journal_mode=OFF; PRAGMA save.synchronous=OFF;", nullptr, nullptr, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, defensive, nullptr);
    if (rc != SQLITE_OK) throw SqlError(sqlite3_errmsg(db));
  };
  auto run_add = [&] {
    if (!add) return;
    try {
      add(db, "save");
    } catch (const std::runtime_error& e) {
      throw SqlError(e.what());
    }
  };
  if (const char* f = sqlite3_db_filename(db, "main"); f && *f) {
    copy_database(db, path, tmp);
    // (Added again: the copy has a new schema version, which what was added may depend on.)
    if (add) {
      try {
        attach_save();
        run_add();
        exec_sql(db, "DETACH save");
      } catch (const SqlError& e) {
        sqlite3_exec(db, "DETACH save", nullptr, nullptr, nullptr);
        throw SqlError(fmt::format("{}: cannot write the database: {}", path, e.what()));
      }
    }
    tmp.commit();
    return;
  }
  try {
    attach_save();
    exec_sql(db, "PRAGMA save.page_size=65536;");
    for (const char* part :
         {"schema", "event_table", "event_generated", "indexes", "views", "gpu_spec", "kernel_rules"})
      exec_sql(db, sql_for(part, "save"));
    exec_sql(db, "BEGIN");
    // gpu_spec and the kernel rules as the session has them (the user may have edited them), not
    // the shipped defaults.
    exec_sql(db, "DELETE FROM save.gpu_spec; DELETE FROM save.gpu_alias; DELETE FROM save.kernel_rule;");
    for (const char* t :
         {"trace", "device", "health", "launch_link", "captured_graph", "replay_graph", "gpu_spec", "gpu_alias"})
      exec_sql(db, fmt::format("INSERT INTO save.{0} SELECT * FROM main.{0}", t));
    exec_sql(db,
             "INSERT INTO save.kernel_rule(pattern, class, subclass, source, priority) "
             "SELECT pattern, class, subclass, source, priority FROM main.kernel_rule ORDER BY rowid");
    const EventStore* store = loaded_store(db, "main");
    if (!store) {  // main's event is a real table (no trace loaded): SQL copies it
      std::string cols;
      for (int i = 0; i <= kArgs; ++i)
        cols += fmt::format("{}{}", i ? ", " : "", quote_identifier(kEventColumns[i].name));
      exec_sql(db, fmt::format("INSERT INTO save.event({0}) SELECT {0} FROM main.event ORDER BY uid", cols));
    }
    exec_sql(db, "COMMIT");
    if (store) {
      EventPages pages = plan_event_pages(db);
      exec_sql(db, "DETACH save");
      try {
        write_event_pages(*store, pages, tmp.path(), before_sorts);
      } catch (const std::exception& e) {
        throw SqlError(e.what());
      }
      attach_save();
      for (const std::string& sql : pages.indexes_by_sqlite) exec_sql(db, sql);
      for (const std::string& name : pages.reindex) exec_sql(db, "REINDEX save." + quote_identifier(name));
    }
    exec_sql(db, "PRAGMA save.analysis_limit=1000; ANALYZE save");
    run_add();
    exec_sql(db, "DETACH save");
  } catch (const SqlError& e) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_exec(db, "DETACH save", nullptr, nullptr, nullptr);
    throw SqlError(fmt::format("{}: cannot write the database: {}", path, e.what()));
  }
  tmp.commit();
}

}  // namespace tlsql
