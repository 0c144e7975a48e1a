// The SQL surface over the call tree: table-valued functions ancestors / descendants / children
// / launched / stack and scalar functions self_time / source.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "src/trace_model.h"
#include "udf/names/event_names.h"
#include "udf/registry.h"
#include "udf/sql_function.h"
#include "udf/table_function.h"
#include "udf/tree/source_frames.h"
#include "udf/tree/tree_access.h"

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

// ancestors / descendants / children / launched / stack (uid [, schema]): one table function, the
// walk its registry row's data.
struct TreeWalk {
  struct Row {
    int64_t uid;
    int rel_depth;
  };
  static constexpr TableArgument arguments[] = {{"arg_uid", "uid", true}, {"arg_schema", "schema"}};
  static constexpr double cost = 10, estimated_rows = 10;

  std::unique_ptr<TreeAccess> own;   // when the connection keeps no tree
  std::shared_ptr<TreeAccess> kept;  // a loaded trace's, shared (alive while the rows are read)
  TreeAccess* tree = nullptr;
  std::optional<TreeRow> current;  // the row last read, for its columns

  std::vector<Row> rows(const TableCall& call) {
    const char* fn = call.name;
    sqlite3_value* u = call.arg(0);
    if (sqlite3_value_numeric_type(u) != SQLITE_INTEGER)
      throw FunctionError(fmt::format("{}(uid): uid must be an integer event uid, got '{}'", fn,
                                      sqlite3_value_text(u) ? (const char*)sqlite3_value_text(u) : "NULL"));
    const int64_t uid = sqlite3_value_int64(u);
    // (resolved once a statement's run: called once per row of a lateral join)
    struct KeptTree {
      KeptSchema at;
    } fresh;
    const KeptTree& k = kept_for_run(call.run, call.db, call.arg(1), fresh, [](KeptTree&) {});
    kept = k.at.tree;
    tree = kept ? kept.get() : tree_for(call.db, k.at.schema, own, &k.at.id);
    if (!tree->ok()) throw FunctionError(fmt::format("{}: {}", fn, tree->error()));
    tree->take_walk_error();
    if (!tree->row(uid)) throw FunctionError(fmt::format("{}({}): no event has uid {}", fn, uid, uid));
    std::vector<Row> out;
    auto keep = [&](int64_t k, int d) { out.push_back({k, d}); };
    switch (static_cast<Walk>(reinterpret_cast<intptr_t>(call.data))) {
      case Walk::ancestors:
        for (auto [k, d] : tree->ancestors(uid)) keep(k, d);
        break;
      case Walk::descendants:
        for (auto [k, d] : tree->descendants(uid)) keep(k, d);
        break;
      case Walk::children:
        for (int64_t k : tree->children(uid)) keep(k, 1);
        break;
      case Walk::launched:
        for (auto [k, d] : tree->descendants(uid))
          if (auto r = tree->row(k); r && is_gpu_work(r->kind)) keep(k, d);
        break;
      case Walk::stack:
        for (auto [k, d] : tree->ancestors(uid))
          if (auto r = tree->row(k); r && r->kind == "python") keep(k, d);
        break;
    }
    if (std::string e = tree->take_walk_error(); !e.empty()) throw FunctionError(fmt::format("{}({}): {}", fn, uid, e));
    return out;
  }
  // The event's row, read when a column needs it; nullptr when it is gone.
  const TreeRow* row(const Row& r) {
    if (!current || current->uid != r.uid) current = tree->row(r.uid);
    return current ? &*current : nullptr;
  }
  static auto columns() {
    using C = TableColumn<TreeWalk, Row>;
    return std::to_array<C>({
        {"uid", "INTEGER", [](sqlite3_context* c, TreeWalk&, const Row& r) { result(c, r.uid); }},
        {"kind", "TEXT",
         [](sqlite3_context* c, TreeWalk& w, const Row& r) {
           const TreeRow* t = w.row(r);
           result(c, t ? std::optional(t->kind) : std::nullopt);
         }},
        {"name", "TEXT",
         [](sqlite3_context* c, TreeWalk& w, const Row& r) {
           const TreeRow* t = w.row(r);
           result(c, t ? std::optional(t->name) : std::nullopt);
         }},
        {"ts", "INTEGER",
         [](sqlite3_context* c, TreeWalk& w, const Row& r) {
           const TreeRow* t = w.row(r);
           result(c, t && t->has_time ? std::optional(t->ts) : std::nullopt);
         }},
        {"dur", "INTEGER",
         [](sqlite3_context* c, TreeWalk& w, const Row& r) {
           const TreeRow* t = w.row(r);
           result(c, t && t->has_time ? std::optional(sat_sub(t->end, t->ts)) : std::nullopt);
         }},
        {"parent", "INTEGER",
         [](sqlite3_context* c, TreeWalk& w, const Row& r) {
           const TreeRow* t = w.row(r);
           result(c, t && t->has_parent ? std::optional(t->parent) : std::nullopt);
         }},
        {"depth", "INTEGER",
         [](sqlite3_context* c, TreeWalk& w, const Row& r) {
           const TreeRow* t = w.row(r);
           result(c, t ? std::optional(t->depth) : std::nullopt);
         }},
        {"rel_depth", "INTEGER", [](sqlite3_context* c, TreeWalk&, const Row& r) { result(c, r.rel_depth); }},
    });
  }
};

// Scalar functions share the argument handling: (uid [, schema]).
TreeAccess* open_tree(sqlite3_context* ctx, int argc, sqlite3_value** argv, const char* fn, int64_t& uid,
                      std::optional<TreeRow>& row, std::unique_ptr<TreeAccess>& own) {
  if (!uid_arg(ctx, argv[0], fn, uid)) return nullptr;
  TreeAccess* tree = tree_arg(ctx, argc > 1 ? argv[1] : nullptr, own);
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

// work_name(uid): the name `ops` gives the work counted at uid (event_names.h, launch_label): an
// op's own name; a launch call that no op encloses, the innermost annotation or python frame above
// it and the call ("combine(F) > cudaLaunchKernelExC"). A runtime call is never an op name.
void work_name_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  int64_t uid;
  std::optional<TreeRow> row;
  std::unique_ptr<TreeAccess> own;
  TreeAccess* tree = open_tree(ctx, argc, argv, "work_name", uid, row, own);
  if (!tree) return;
  if (row->kind != "runtime" && row->kind != "driver")
    return sqlite3_result_text(ctx, row->name.c_str(), (int)row->name.size(), SQLITE_TRANSIENT);
  std::string frame;
  for (auto [k, d] : tree->ancestors(uid))
    if (auto r = tree->row(k); r && names_launch(r->kind, r->name)) {
      frame = std::move(r->name);
      break;
    }
  if (tree->report_walk_error(ctx, "work_name", uid)) return;
  const std::string label = launch_label(frame, row->name);
  sqlite3_result_text(ctx, label.c_str(), (int)label.size(), SQLITE_TRANSIENT);
}

}  // namespace

std::vector<SqlFunction> tree_functions() {
  auto walk = [](Walk w, const char* help) {
    return table_function<TreeWalk>(walk_name(w), help, reinterpret_cast<void*>(static_cast<intptr_t>(w)));
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
          nearest_source,
          scalar("work_name",
                 "what ops calls the work at uid: an op's name; a launch call no op encloses, the innermost "
                 "annotation or python frame above it and the call ('combine(F) > cudaLaunchKernelExC')",
                 work_name_fn)};
}
TLSQL_FUNCTIONS(tree_functions);

}  // namespace tlsql
