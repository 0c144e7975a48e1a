#include "udf/tree/tree_access.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "src/event_store.h"
#include "src/event_table.h"
#include "src/kind.h"
#include "src/sql_names.h"
#include "udf/connection_cache.h"
#include "udf/sql_function.h"
#include "udf/statement_memo.h"

namespace tlsql {

bool is_gpu_work(const std::string& kind) { return is_gpu_work(kind_from_name(kind)); }

bool uid_arg(sqlite3_context* ctx, sqlite3_value* v, const char* fn, int64_t& uid) {
  if (sqlite3_value_type(v) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return false;
  }
  if (sqlite3_value_numeric_type(v) != SQLITE_INTEGER) {
    sqlite3_result_error(ctx, fmt::format("{}(uid): uid must be an integer event uid", fn).c_str(), -1);
    return false;
  }
  uid = sqlite3_value_int64(v);
  return true;
}

namespace {

// A prepared statement owned by the connection cache.
struct CachedStatement {
  sqlite3_stmt* stmt = nullptr;
  ~CachedStatement() { sqlite3_finalize(stmt); }
};

std::string arg_sql(sqlite3* db, const std::string& schema) {
  return fmt::format("SELECT json_extract(args, '$.\"' || ? || '\"') FROM {}.event WHERE uid = ?",
                     schema_sql(db, schema));
}

// Whether schema `name` holds the database whose tlsql_self token is `token`.
bool holds_token(sqlite3* db, const std::string& name, const std::string& token) {
  const std::string sql = fmt::format("SELECT 1 FROM {}.tlsql_self WHERE token = ?", schema_sql(db, name));
  sqlite3_stmt* own = nullptr;
  auto* cached = connection_statements<CachedStatement>(db, "self:" + name, [&]() -> std::unique_ptr<CachedStatement> {
    auto c = std::make_unique<CachedStatement>();
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &c->stmt, nullptr) != SQLITE_OK) return nullptr;
    return c;
  });
  sqlite3_stmt* q = cached ? cached->stmt : nullptr;
  if (!q && sqlite3_prepare_v2(db, sql.c_str(), -1, &own, nullptr) == SQLITE_OK) q = own;
  bool found = false;
  if (q) {
    sqlite3_bind_text(q, 1, token.c_str(), -1, SQLITE_TRANSIENT);
    found = sqlite3_step(q) == SQLITE_ROW;
    sqlite3_reset(q);
  }
  sqlite3_finalize(own);
  return found;
}

// What every attached schema holds (its name, identity and data version): while that is unchanged,
// a token resolves to the schema it resolved to last time.
struct DatabaseList {
  std::vector<std::pair<std::string, SchemaIdentity>> schemas;
  std::vector<unsigned int> versions;
  bool operator==(const DatabaseList&) const = default;
};
DatabaseList database_list(sqlite3* db) {
  DatabaseList l;
  for (int i = 0; const char* name = sqlite3_db_name(db, i); ++i) {
    const SchemaIdentity id = schema_identity(db, name);
    // (A file's version is the identity's own; a loaded store's in-memory tables, tlsql_self
    // among them, have theirs read here.)
    l.versions.push_back(id.store ? data_version(db, name) : 0);
    l.schemas.emplace_back(name, id);
  }
  return l;
}
// The schema a 'db:' || token argument names (what views of databases saved before tlsql_schema
// pass), or why none: a file and its copy hold the same token, so a token held by two attached
// schemas names neither, rather than the wrong one.
struct TokenAnswer {
  std::string schema, why;
};
struct TokenNames {
  std::map<std::string, std::pair<DatabaseList, TokenAnswer>> resolved;  // token -> (list then, answer)
};

}  // namespace

namespace {

TokenAnswer resolve_token(sqlite3* db, const std::string& arg) {
  const std::string token = arg.substr(3);
  auto* known = connection_cached<TokenNames>(db, "tokens", [] { return std::make_unique<TokenNames>(); });
  DatabaseList now = database_list(db);
  if (known)
    if (auto it = known->resolved.find(token); it != known->resolved.end() && it->second.first == now)
      return it->second.second;
  std::vector<std::string> holders;
  for (const auto& schema : now.schemas)
    if (holds_token(db, schema.first, token)) holders.push_back(schema.first);
  TokenAnswer answer;
  if (holders.size() == 1)
    answer.schema = holders[0];
  else if (holders.empty())
    answer.why = "no attached database holds that token";
  else
    answer.why =
        fmt::format("a token held by {} and {}: a copied database saved by an older tlsql; pass the schema name",
                    holders[0], holders[1]);
  if (known) known->resolved[token] = {std::move(now), answer};
  return answer;
}

// Whether a saved schema's event table keeps one row per uid, checked once for what the schema
// holds (schema_identity).
struct EventKey {
  std::string problem;
};

}  // namespace

std::string schema_arg(sqlite3* db, sqlite3_value* v, SchemaIdentity* identity) {
  const unsigned char* t = v ? sqlite3_value_text(v) : nullptr;
  const std::string arg = t ? std::string((const char*)t, (size_t)sqlite3_value_bytes(v)) : "main";
  std::string shown;  // (a NUL would end the message SQLite keeps)
  for (char c : arg) shown += c ? std::string(1, c) : std::string("\\0");
  std::string schema;
  if (arg.rfind("db:", 0) == 0) {
    TokenAnswer a = resolve_token(db, arg);
    if (a.schema.empty()) throw SchemaError(fmt::format("no tlsql event table in schema '{}' ({})", shown, a.why));
    schema = std::move(a.schema);
  } else if (auto attached = attached_schema(db, arg)) {
    schema = std::move(*attached);
  } else {
    throw SchemaError(
        fmt::format("no tlsql event table in schema '{}' (no database is attached as '{}')", shown, shown));
  }
  // A saved database's walks rely on one row per uid: a file whose event table repeats uids would
  // make them revisit subtrees (exponential). Refused in every host, as the session refuses it on open.
  const SchemaIdentity id = schema_identity(db, schema);
  if (!id.store) {
    auto make = [&] { return std::make_unique<EventKey>(EventKey{event_key_problem(db, schema)}); };
    auto* key = connection_cached<EventKey>(db, "event_key:" + schema, id, make);
    const std::string problem = key ? key->problem : event_key_problem(db, schema);
    if (!problem.empty()) throw SchemaError(fmt::format("schema '{}': {}", schema, problem));
  }
  if (identity) *identity = id;
  return schema;
}

namespace {
std::unique_ptr<TreeAccess> made_tree(sqlite3* db, const std::string& schema) {
  auto made = std::make_unique<TreeAccess>(db, schema);
  if (!made->ok()) return nullptr;  // (not kept: the caller makes its own, which says why)
  return made;
}
}  // namespace

std::shared_ptr<TreeAccess> store_tree(sqlite3* db, const std::string& schema, const SchemaIdentity& id) {
  if (!id.store) return nullptr;
  return connection_cached_shared<TreeAccess>(db, "tree:" + schema, id, [&] { return made_tree(db, schema); });
}

TreeAccess* tree_for(sqlite3* db, const std::string& schema, std::unique_ptr<TreeAccess>& own,
                     const SchemaIdentity* known) {
  // A loaded trace's tree holds no statement: computed data, kept on every connection; a saved
  // database's holds three, kept where the connection's owner keeps statements.
  const SchemaIdentity id = schema_identity(db, schema, known);
  if (id.store) {
    if (std::shared_ptr<TreeAccess> t = store_tree(db, schema, id)) return t.get();  // (the cache holds it)
  } else if (auto* t =
                 connection_statements<TreeAccess>(db, "tree:" + schema, id, [&] { return made_tree(db, schema); })) {
    return t;
  }
  own = std::make_unique<TreeAccess>(db, schema);
  return own.get();
}

KeptSchema keep_schema(sqlite3* db, sqlite3_value* arg) {
  KeptSchema k;
  k.schema = schema_arg(db, arg, &k.id);
  k.tree = store_tree(db, k.schema, k.id);
  return k;
}

bool still_holds(sqlite3* db, const KeptSchema& kept) {
  return schema_identity(db, kept.schema, &kept.id) == kept.id;  // (kept.id: this run's)
}

bool memo_may_keep(sqlite3_value* arg) {
  const unsigned char* t = arg ? sqlite3_value_text(arg) : nullptr;
  return !t || std::string_view((const char*)t, (size_t)sqlite3_value_bytes(arg)).rfind("db:", 0) != 0;
}

TreeAccess* tree_arg(sqlite3_context* ctx, sqlite3_value* schema, std::unique_ptr<TreeAccess>& own) {
  struct KeptTree {
    KeptSchema at;
  } fresh;
  const KeptTree& kept = kept_for_call(ctx, kSchemaTreeMemo, schema, fresh, [](KeptTree&) {});
  // (a tree shared here is the connection's too, alive past this call)
  return kept.at.tree ? kept.at.tree.get() : tree_for(sqlite3_context_db_handle(ctx), kept.at.schema, own, &kept.at.id);
}

EventSource::EventSource(sqlite3* db, const std::string& schema)
    : store_(loaded_store(db, schema)), db_(db), schema_(schema) {
  // A loaded trace's rows are read from its store: no statement is kept (the object is then
  // computed data, cached on every connection: connection_cache.h).
  if (store_) return;
  auto prep = [&](const std::string& sql, sqlite3_stmt** s) {
    if (error_.empty() && sqlite3_prepare_v2(db, sql.c_str(), -1, s, nullptr) != SQLITE_OK)
      error_ = fmt::format("no tlsql event table in schema '{}' ({})", schema, sqlite3_errmsg(db));
  };
  const std::optional<std::string> attached = attached_schema(db, schema);
  if (!attached) {
    error_ = fmt::format("no tlsql event table in schema '{}' (no database is attached as '{}')", schema, schema);
    return;
  }
  const std::string q = quote_identifier(*attached);
  prep(fmt::format("SELECT uid, parent, depth, ts, end, kind, name, cat FROM {}.event WHERE uid = ?", q), &row_);
  prep(fmt::format("SELECT uid FROM {}.event WHERE parent = ? ORDER BY ts, uid", q), &children_);
  prep(arg_sql(db, schema), &arg_);
}

EventSource::~EventSource() {
  sqlite3_finalize(row_);
  sqlite3_finalize(children_);
  sqlite3_finalize(arg_);
}

std::optional<TreeRow> EventSource::store_row(int64_t uid) const {
  const EventStore& s = *store_;
  if (uid < s.first_uid || uid - s.first_uid >= s.total_rows) return std::nullopt;
  int64_t local;
  const LoadedTrace& t = s.trace_at(uid - s.first_uid, local);
  const EventRec& e = t.rows[(size_t)local];
  TreeRow r;
  r.uid = uid;
  r.has_parent = e.parent >= 0;
  r.parent = r.has_parent ? t.uid_base + e.parent : -1;
  r.depth = e.depth;
  const int64_t end = e.end();
  r.has_time = e.ts != kNull && end != kNull;
  r.ts = e.ts == kNull ? 0 : e.ts;  // as SQLite reads a NULL column as an integer
  r.end = end == kNull ? 0 : end;
  r.kind = kind_name(e.kind);
  if (e.name != StringPool::kNone) r.name = s.strings.get(e.name);
  if (e.cat != StringPool::kNone) r.cat = s.strings.get(e.cat);
  return r;
}

// The children index in row order, sorted as the SQL path's ORDER BY ts, uid (NULL ts first).
std::vector<int64_t> EventSource::store_children(int64_t uid) const {
  const EventStore& s = *store_;
  std::vector<int64_t> out;
  if (uid < s.first_uid || uid - s.first_uid >= s.total_rows) return out;
  int64_t local;
  const LoadedTrace& t = s.trace_at(uid - s.first_uid, local);
  std::vector<std::pair<int64_t, uint32_t>> kids;  // (ts, index): kNull is INT64_MIN, so it sorts first
  for (uint32_t k = t.child_start[(size_t)local]; k < t.child_start[(size_t)local + 1]; ++k)
    kids.emplace_back(t.rows[t.children[k]].ts, t.children[k]);
  std::sort(kids.begin(), kids.end());
  out.reserve(kids.size());
  for (auto [ts, i] : kids) out.push_back(t.uid_base + i);
  return out;
}

std::optional<TreeRow> EventSource::row(int64_t uid) {
  if (store_) return store_row(uid);
  sqlite3_reset(row_);
  sqlite3_bind_int64(row_, 1, uid);
  if (int rc = sqlite3_step(row_); rc != SQLITE_ROW) {
    step_failed(rc);
    sqlite3_reset(row_);
    return std::nullopt;
  }
  TreeRow r;
  r.uid = sqlite3_column_int64(row_, 0);
  r.has_parent = sqlite3_column_type(row_, 1) != SQLITE_NULL;
  r.parent = r.has_parent ? sqlite3_column_int64(row_, 1) : -1;
  r.depth = sqlite3_column_int64(row_, 2);
  r.has_time = sqlite3_column_type(row_, 3) != SQLITE_NULL && sqlite3_column_type(row_, 4) != SQLITE_NULL;
  r.ts = sqlite3_column_int64(row_, 3);
  r.end = sqlite3_column_int64(row_, 4);
  if (auto k = sqlite3_column_text(row_, 5)) r.kind = (const char*)k;
  if (auto n = sqlite3_column_text(row_, 6)) r.name = (const char*)n;
  if (auto c = sqlite3_column_text(row_, 7)) r.cat = (const char*)c;
  sqlite3_reset(row_);  // no statement stays active between calls (it would block DETACH)
  return r;
}

std::vector<int64_t> EventSource::children(int64_t uid) {
  if (store_) return store_children(uid);
  std::vector<int64_t> out;
  sqlite3_reset(children_);
  sqlite3_bind_int64(children_, 1, uid);
  int rc;
  while ((rc = sqlite3_step(children_)) == SQLITE_ROW) out.push_back(sqlite3_column_int64(children_, 0));
  step_failed(rc);
  sqlite3_reset(children_);
  return out;
}

void EventSource::step_failed(int rc) {
  if (rc == SQLITE_ROW || rc == SQLITE_DONE || !walk_error_.empty()) return;
  walk_error_ = rc == SQLITE_INTERRUPT ? "interrupted" : sqlite3_errstr(rc);
}

bool EventSource::report_walk_error(sqlite3_context* ctx, const char* fn, int64_t uid) {
  std::string e = take_walk_error();
  if (e.empty()) return false;
  sqlite3_result_error(ctx, fmt::format("{}({}): {}", fn, uid, e).c_str(), -1);
  return true;
}

std::string cycle_at(int64_t uid) {
  return fmt::format("the parent links loop through uid {} (a database tlsql did not write?)", uid);
}

std::vector<std::pair<int64_t, int>> EventSource::descendants(int64_t uid, int max_distance) {
  std::vector<std::pair<int64_t, int>> out, stack;
  // A saved table is read by SQL: a uid met twice (a file whose rows repeat a uid, whatever its
  // declared key) stops the walk, so no subtree is walked twice. The loader's store is a forest.
  std::unordered_set<int64_t> seen;
  for (auto c = children(uid); !c.empty(); c.pop_back()) stack.emplace_back(c.back(), 1);
  while (!stack.empty()) {
    auto [u, d] = stack.back();
    stack.pop_back();
    // Every node has one parent, so a loop below uid must pass through uid itself.
    if (u == uid) {
      walk_error_ = cycle_at(uid);
      break;
    }
    if (!store_ && !seen.insert(u).second) {
      walk_error_ =
          fmt::format("uid {} is reached twice: the event table repeats uids (a database tlsql did not write?)", u);
      break;
    }
    out.emplace_back(u, d);
    if (d >= max_distance) continue;
    auto c = children(u);
    for (auto it = c.rbegin(); it != c.rend(); ++it) stack.emplace_back(*it, d + 1);
  }
  return out;
}

std::vector<std::pair<int64_t, int>> EventSource::ancestors(int64_t uid) {
  std::vector<std::pair<int64_t, int>> out;
  auto r = row(uid);
  // Brent's cycle detection: compare with a mark moved at powers of two (O(1) memory).
  int64_t mark = uid;
  for (int d = 1, power = 1, since = 0; r && r->has_parent; ++d) {
    if (r->parent == mark) {
      walk_error_ = cycle_at(mark);
      break;
    }
    out.emplace_back(r->parent, d);
    if (++since == power) mark = r->parent, power *= 2, since = 0;
    r = row(r->parent);
  }
  return out;
}

std::string EventSource::arg(int64_t uid, const char* key) {
  sqlite3_stmt* q = arg_;
  std::unique_ptr<CachedStatement> own;
  if (store_) {  // (the statement is the connection's, where its owner keeps statements, else this call's)
    auto make = [&]() -> std::unique_ptr<CachedStatement> {
      auto c = std::make_unique<CachedStatement>();
      if (sqlite3_prepare_v2(db_, arg_sql(db_, schema_).c_str(), -1, &c->stmt, nullptr) != SQLITE_OK) return nullptr;
      return c;
    };
    auto* cached = connection_statements<CachedStatement>(db_, "arg:" + schema_, schema_identity(db_, schema_), make);
    q = cached ? cached->stmt : (own = make()) ? own->stmt : nullptr;
    if (!q) return "";
  }
  sqlite3_reset(q);
  sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_int64(q, 2, uid);
  std::string v;
  if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
    v = (const char*)sqlite3_column_text(q, 0);
  sqlite3_reset(q);
  return v;
}

}  // namespace tlsql

namespace tlsql {

namespace {

// The columns an EventView holds, in sql_event's order.
constexpr std::string_view kEventViewColumns =
    "SELECT uid, trace, kind, ts, dur, end, parent, depth, stream, device, name, cat";

EventView store_event(const EventStore& s, const LoadedTrace& t, size_t i) {
  const EventRec& e = t.rows[i];
  EventView ev;
  ev.uid = t.uid_base + (int64_t)i;
  ev.trace = t.id;
  ev.kind = e.kind;
  ev.ts = e.ts, ev.dur = e.dur, ev.end = e.end();  // kNull is EventView::none
  ev.parent = e.parent < 0 ? EventView::none : t.uid_base + e.parent;
  ev.depth = e.depth;
  ev.stream = s.ids.value(e.stream);
  ev.device = e.device == EventRec::kNull32 ? EventView::none : e.device;
  if (e.name != StringPool::kNone) ev.name = s.strings.get(e.name);
  if (e.cat != StringPool::kNone) ev.cat = s.strings.get(e.cat);
  return ev;
}

EventView sql_event(sqlite3_stmt* q) {
  auto integer = [&](int c) {
    return sqlite3_column_type(q, c) == SQLITE_NULL ? EventView::none : sqlite3_column_int64(q, c);
  };
  auto text = [&](int c) {
    const char* t = (const char*)sqlite3_column_text(q, c);
    return t ? std::string_view(t, (size_t)sqlite3_column_bytes(q, c)) : std::string_view();
  };
  EventView ev;
  ev.uid = sqlite3_column_int64(q, 0);
  ev.trace = sqlite3_column_int64(q, 1);
  ev.kind = kind_from_name(text(2));
  ev.ts = integer(3), ev.dur = integer(4), ev.end = integer(5), ev.parent = integer(6);
  ev.depth = sqlite3_column_int64(q, 7);
  ev.stream = integer(8), ev.device = integer(9);
  ev.name = text(10), ev.cat = text(11);
  return ev;
}

}  // namespace

EventSource& event_source(sqlite3* db, sqlite3_value* schema, std::unique_ptr<EventSource>& own) {
  EventSource* s = tree_for(db, schema_arg(db, schema), own);
  if (!s->ok()) throw FunctionError(s->error());
  return *s;
}

EventSource& event_source(sqlite3_context* ctx, sqlite3_value* schema, std::unique_ptr<EventSource>& own) {
  EventSource* s = tree_arg(ctx, schema, own);
  if (!s->ok()) throw FunctionError(s->error());
  return *s;
}

std::unique_ptr<Statement> EventSource::statement(std::string_view sql) {
  const std::string q = schema_sql(db_, schema_);
  return std::make_unique<Statement>(db_, fmt::format(fmt::runtime(sql), fmt::arg("s", q)));
}

std::vector<std::pair<int64_t, int64_t>> EventSource::launch_links() {
  std::vector<std::pair<int64_t, int64_t>> links;
  auto st = statement("SELECT runtime, gpu FROM {s}.launch_link");
  while (st->step()) links.emplace_back(sqlite3_column_int64(st->get(), 0), sqlite3_column_int64(st->get(), 1));
  std::sort(links.begin(), links.end());
  return links;
}

void EventSource::scan(const EventScan& what, const std::function<void(const EventView&)>& fn) {
  if (store_)
    store_scan(what, fn);
  else
    sql_scan(what, fn);
}

std::optional<EventView> EventSource::event(int64_t uid) {
  std::optional<EventView> found;
  if (store_) {
    const EventStore& s = *store_;
    if (uid < s.first_uid || uid - s.first_uid >= s.total_rows) return found;
    int64_t local;
    const LoadedTrace& t = s.trace_at(uid - s.first_uid, local);
    found = store_event(s, t, (size_t)local);
    return found;
  }
  // One statement, prepared on the first call (one a call made fx on a saved database 4x slower:
  // the marker functions ask a few events a row), reset on the way out: no statement stays active
  // between calls (it would block DETACH).
  if (!event_) event_ = statement(std::string(kEventViewColumns) + " FROM {s}.event WHERE uid = ?");
  struct Reset {
    Statement& st;
    ~Reset() { st.reset(); }
  } reset{*event_};
  sqlite3_bind_int64(event_->get(), 1, uid);
  if (event_->step()) {
    found = sql_event(event_->get());
    // The row's texts die with the reset: copied, valid until the next call (as a store's are
    // while it lives). A NULL stays a view with no data.
    auto keep = [](std::string_view& v, std::string& into) {
      if (v.data()) into.assign(v), v = into;
    };
    keep(found->name, event_name_), keep(found->cat, event_cat_);
  }
  return found;
}

// The store's rows of `what`: each trace's rows in uid order, filtered; sorted by (ts, uid) when
// asked (kNull is INT64_MIN, so a missing ts sorts first, as SQLite's NULL).
void EventSource::store_scan(const EventScan& what, const std::function<void(const EventView&)>& fn) const {
  const EventStore& s = *store_;
  bool kinds[256] = {};
  for (Kind k : what.kinds) kinds[(uint8_t)k] = true;
  for (const auto& t : s.traces) {
    if (what.trace && t->id != *what.trace) continue;
    std::vector<std::pair<int64_t, uint32_t>> order;  // (ts, row) when by_ts
    for (size_t i = 0; i < t->rows.size(); ++i) {
      const EventRec& e = t->rows[i];
      if (!what.kinds.empty() && !kinds[(uint8_t)e.kind]) continue;
      if (what.stream && s.ids.value(e.stream) != *what.stream) continue;
      if (what.by_ts)
        order.emplace_back(e.ts, (uint32_t)i);
      else
        fn(store_event(s, *t, i));
    }
    std::sort(order.begin(), order.end());
    for (auto [ts, i] : order) fn(store_event(s, *t, i));
  }
}

// The same rows through SQL: one statement, its kinds and ids bound. Several kinds are read in one
// scan of the table in uid order (`+kind`: not the (kind, trace) index, whose order would need a
// sort); one kind through that index, and several when any order will do (no ORDER BY: no sort).
void EventSource::sql_scan(const EventScan& what, const std::function<void(const EventView&)>& fn) {
  std::string sql = std::string(kEventViewColumns) + " FROM {s}.event WHERE 1";
  if (what.trace) sql += " AND trace = ?";
  if (what.stream) sql += " AND stream = ?";
  if (!what.kinds.empty()) {
    sql += what.kinds.size() == 1 || (what.any_order && !what.by_ts) ? " AND kind IN (" : " AND +kind IN (";
    for (size_t k = 0; k < what.kinds.size(); ++k) sql += k ? ", ?" : "?";
    sql += ")";
  }
  if (what.by_ts)
    sql += " ORDER BY ts, uid";
  else if (!what.any_order)
    sql += " ORDER BY uid";
  auto st = statement(sql);
  int n = 0;
  if (what.trace) sqlite3_bind_int64(st->get(), ++n, *what.trace);
  if (what.stream) sqlite3_bind_int64(st->get(), ++n, *what.stream);
  for (Kind k : what.kinds) {
    const std::string_view name = kind_name(k);
    sqlite3_bind_text(st->get(), ++n, name.data(), (int)name.size(), SQLITE_STATIC);
  }
  while (st->step()) fn(sql_event(st->get()));
}

}  // namespace tlsql
