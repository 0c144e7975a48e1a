// The SQL surface over the call tree: table-valued functions ancestors / descendants / children
// / launched / stack and scalar functions self_time / source.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "src/trace_model.h"
#include "udf/registry.h"
#include "udf/source_frames.h"
#include "udf/sql_function.h"
#include "udf/tree_access.h"

namespace tlsql {

namespace {

enum class Walk { ancestors, descendants, children, launched, stack };
const char* walk_name(Walk w) {
  switch (w) {
    case Walk::ancestors: return "ancestors";
    case Walk::descendants: return "descendants";
    case Walk::children: return "children";
    case Walk::launched: return "launched";
    case Walk::stack: return "stack";
  }
  return "?";
}

// Columns of every tree function; the last two are the (hidden) arguments.
enum Col { kUid, kKind, kName, kTs, kDur, kParent, kDepth, kRelDepth, kArgUid, kArgSchema };

struct WalkTable : ConnectionTable {
  WalkTable(sqlite3* db, void* aux, int argc, const char* const* argv)
      : ConnectionTable(db, aux, argc, argv), walk(static_cast<Walk>(reinterpret_cast<intptr_t>(aux))) {}
  Walk walk;
};

struct Cursor : VtabCursor<WalkTable> {
  std::vector<std::pair<int64_t, int>> rows;  // (uid, rel_depth)
  size_t at = 0;
  std::unique_ptr<TreeAccess> own;  // when the connection has no cache
  TreeAccess* tree = nullptr;
  std::optional<TreeRow> current;
  bool fetched = false;

  static std::string declaration() {
    return "CREATE TABLE x(uid INTEGER, kind TEXT, name TEXT, ts INTEGER, dur INTEGER, parent INTEGER, depth INTEGER, "
           "rel_depth INTEGER, arg_uid HIDDEN, arg_schema HIDDEN)";
  }
  static int best_index(WalkTable&, sqlite3_index_info* info) {
    int uid = -1, schema = -1;
    bool uid_unusable = false;
    for (int i = 0; i < info->nConstraint; ++i) {
      const auto& c = info->aConstraint[i];
      if (c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
      if (c.iColumn == kArgUid) (c.usable ? uid = i : uid_unusable = true);
      if (c.iColumn == kArgSchema && c.usable) schema = i;
    }
    // An argument that exists but is not usable yet (a join from the right): wait for a better plan.
    if (uid < 0 && uid_unusable) return SQLITE_CONSTRAINT;
    int plan = 0, arg = 0;
    if (uid >= 0) {
      plan |= 1;
      info->aConstraintUsage[uid].argvIndex = ++arg;
      info->aConstraintUsage[uid].omit = 1;
    }
    if (schema >= 0) {
      plan |= 2;
      info->aConstraintUsage[schema].argvIndex = ++arg;
      info->aConstraintUsage[schema].omit = 1;
    }
    info->idxNum = plan;
    info->estimatedCost = uid >= 0 ? 10 : 1e12;  // without a uid xFilter reports the mistake
    info->estimatedRows = 10;
    return SQLITE_OK;
  }

  int filter(int plan, int, sqlite3_value** argv) {
    const WalkTable& t = table();
    const char* fn = walk_name(t.walk);
    rows.clear();
    at = 0;
    fetched = false;
    if (!(plan & 1)) return error(fmt::format("{}(uid [, schema]): the uid argument is missing", fn));
    sqlite3_value* u = argv[0];
    if (sqlite3_value_numeric_type(u) != SQLITE_INTEGER)
      return error(fmt::format("{}(uid): uid must be an integer event uid, got '{}'", fn,
                               sqlite3_value_text(u) ? (const char*)sqlite3_value_text(u) : "NULL"));
    int64_t uid = sqlite3_value_int64(u);
    std::string schema = schema_arg(t.db, (plan & 2) ? argv[1] : nullptr);
    tree = tree_for(t.db, schema, own);
    if (!tree->ok()) return error(fmt::format("{}: {}", fn, tree->error()));
    tree->take_walk_error();
    auto root = tree->row(uid);
    if (!root) return error(fmt::format("{}({}): no event has uid {}", fn, uid, uid));
    switch (t.walk) {
      case Walk::ancestors: rows = tree->ancestors(uid); break;
      case Walk::descendants: rows = tree->descendants(uid); break;
      case Walk::children:
        for (int64_t k : tree->children(uid)) rows.emplace_back(k, 1);
        break;
      case Walk::launched:
        for (auto [k, d] : tree->descendants(uid))
          if (auto r = tree->row(k); r && is_gpu_work(r->kind)) rows.emplace_back(k, d);
        break;
      case Walk::stack:
        for (auto [k, d] : tree->ancestors(uid))
          if (auto r = tree->row(k); r && r->kind == "python") rows.emplace_back(k, d);
        break;
    }
    if (std::string e = tree->take_walk_error(); !e.empty()) return error(fmt::format("{}({}): {}", fn, uid, e));
    return SQLITE_OK;
  }
  bool eof() const { return at >= rows.size(); }
  void next() {
    ++at;
    fetched = false;
  }
  void column(sqlite3_context* ctx, int col) {
    auto [uid, rel] = rows[at];
    if (col == kUid) return sqlite3_result_int64(ctx, uid);
    if (col == kRelDepth) return sqlite3_result_int(ctx, rel);
    if (col >= kArgUid) return sqlite3_result_null(ctx);
    if (!fetched) {
      current = tree->row(uid);
      fetched = true;
    }
    if (!current) return sqlite3_result_null(ctx);
    const TreeRow& r = *current;
    switch (col) {
      case kKind: sqlite3_result_text(ctx, r.kind.c_str(), -1, SQLITE_TRANSIENT); break;
      case kName: sqlite3_result_text(ctx, r.name.c_str(), -1, SQLITE_TRANSIENT); break;
      case kTs:
        if (r.has_time)
          sqlite3_result_int64(ctx, r.ts);
        else
          sqlite3_result_null(ctx);
        break;
      case kDur:
        if (r.has_time)
          sqlite3_result_int64(ctx, sat_sub(r.end, r.ts));
        else
          sqlite3_result_null(ctx);
        break;
      case kParent:
        if (r.has_parent)
          sqlite3_result_int64(ctx, r.parent);
        else
          sqlite3_result_null(ctx);
        break;
      case kDepth: sqlite3_result_int64(ctx, r.depth); break;
      default: sqlite3_result_null(ctx);
    }
  }
  sqlite3_int64 rowid() const { return (sqlite3_int64)at; }
};

// Scalar functions share the argument handling: (uid [, schema]).
TreeAccess* open_tree(sqlite3_context* ctx, int argc, sqlite3_value** argv, const char* fn, int64_t& uid,
                      std::optional<TreeRow>& row, std::unique_ptr<TreeAccess>& own) {
  if (!uid_arg(ctx, argv[0], fn, uid)) return nullptr;
  std::string schema = schema_arg(sqlite3_context_db_handle(ctx), argc > 1 ? argv[1] : nullptr);
  TreeAccess* tree = tree_for(sqlite3_context_db_handle(ctx), schema, own);
  if (!tree->ok()) {
    sqlite3_result_error(ctx, fmt::format("{}: {}", fn, tree->error()).c_str(), -1);
    return nullptr;
  }
  tree->take_walk_error();  // a stale one from a walk nobody reported
  row = tree->row(uid);
  if (!row) {
    sqlite3_result_error(ctx, fmt::format("{}({}): no event has uid {}", fn, uid, uid).c_str(), -1);
    return nullptr;
  }
  return tree;
}

void self_time(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  int64_t uid;
  std::optional<TreeRow> row;
  std::unique_ptr<TreeAccess> own;
  TreeAccess* tree = open_tree(ctx, argc, argv, "self_time", uid, row, own);
  if (!tree) return;
  if (!row->has_time) return sqlite3_result_null(ctx);
  // As torch.profiler: the event's duration less its children's, host children only (a launch
  // call's kernels run on the GPU, not inside the call).
  int64_t self = sat_sub(row->end, row->ts);
  for (int64_t k : tree->children(uid))
    if (auto r = tree->row(k);
        r && r->has_time && !is_gpu_work(r->kind) && r->kind != "sync" && r->kind != "gpu_annotation")
      self = sat_sub(self, sat_sub(r->end, r->ts));
  sqlite3_result_int64(ctx, std::max<int64_t>(0, self));
}

// source(uid) / nearest_source(uid): the python frame at or above uid that the user's code is in
// (the nearest one outside torch and the standard library: source_frames.h), else the nearest one
// (torch.profiler's source_code_location, which nearest_source always gives). Traces from before
// python frames were recorded carry "Call stack" text instead (innermost first): the same choice
// among its entries.
void source_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const bool nearest = function_data(ctx) != nullptr;
  const char* fn = nearest ? "nearest_source" : "source";
  int64_t uid;
  std::optional<TreeRow> row;
  std::unique_ptr<TreeAccess> own;
  TreeAccess* tree = open_tree(ctx, argc, argv, fn, uid, row, own);
  if (!tree) return;
  std::vector<int64_t> chain{uid};
  for (auto [k, d] : tree->ancestors(uid)) chain.push_back(k);
  if (tree->report_walk_error(ctx, fn, uid)) return;
  auto pick = [&](const std::vector<std::string>& frames) -> const std::string* {
    for (const std::string& f : frames)
      if (nearest || !library_frame(f)) return &f;
    return frames.empty() ? nullptr : &frames.front();
  };
  std::vector<std::string> frames;
  for (int64_t k : chain)
    if (auto r = tree->row(k); r && python_location(r->name)) frames.push_back(r->name);
  if (frames.empty())
    for (int64_t k : chain) {
      std::string stack = tree->arg(k, "Call stack");
      if (stack.empty()) continue;
      for (size_t at = 0; at <= stack.size();) {
        size_t end = std::min(stack.find(';', at), stack.size());
        if (end > at) frames.push_back(stack.substr(at, end - at));
        at = end + 1;
      }
      break;
    }
  if (const std::string* f = pick(frames)) return sqlite3_result_text(ctx, f->c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_result_null(ctx);
}

}  // namespace

std::vector<SqlFunction> tree_functions() {
  auto walk = [](Walk w, const char* help) {
    SqlFunction f{walk_name(w), "(uid [, schema])", help, SqlFunction::table};
    f.module = vtab_module<Cursor>();
    f.user_data = reinterpret_cast<void*>(static_cast<intptr_t>(w));
    return f;
  };
  auto scalar = [](const char* name, const char* help, void (*fn)(sqlite3_context*, int, sqlite3_value**)) {
    SqlFunction f{name, "(uid [, schema])", help};
    f.max_args = 2, f.fn = fn;
    return f;
  };
  SqlFunction nearest_source =
      scalar("nearest_source",
             "the nearest python frame naming a .py( location at or above uid (torch.profiler's rule)", source_fn);
  nearest_source.user_data = reinterpret_cast<void*>(1);
  return {walk(Walk::ancestors, "table: the events above uid, parent first (rel_depth 1, 2, ...)"),
          walk(Walk::descendants, "table: the whole subtree below uid, depth-first (rel_depth from 1)"),
          walk(Walk::children, "table: the direct children of uid, by start time"),
          walk(Walk::launched, "table: the kernels / memcpys / memsets launched anywhere under uid"),
          walk(Walk::stack, "table: the python frames above uid, innermost first"),
          scalar("self_time", "ns of uid's duration not covered by its host-side children", self_time),
          scalar("source",
                 "the user's code at or above uid: the nearest python frame outside torch and the standard library "
                 "(else the nearest frame)",
                 source_fn),
          nearest_source};
}

}  // namespace tlsql
