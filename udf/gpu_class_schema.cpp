#include "udf/gpu_class_schema.h"

#include <optional>
#include <string_view>
#include <vector>

#include "src/kind.h"
#include "src/sqlite_util.h"
#include "udf/connection_cache.h"
#include "udf/statement_memo.h"

namespace tlsql {

SchemaGpuClasses::SchemaGpuClasses(sqlite3* db, std::string schema) : db_(db), schema_(std::move(schema)) { refresh(); }

void SchemaGpuClasses::refresh() {
  // Rules are rows the user may INSERT at any time: a change on this connection shows in
  // total_changes, a cheap counter, and the table is read again only then (ChangesSeen).
  if (seen_.current(db_)) return;
  KernelRules rules = KernelRules::read(db_, schema_);
  seen_.mark(db_);
  if (rules == rules_ && !rules_.rules().empty()) return;
  rules_ = std::move(rules);
  rule_of_ = {};
  stored_rule_of_.clear();
}

const KernelRule* SchemaGpuClasses::rule_for(std::string_view name) {
  refresh();
  const int i = rule_of_.get(name, [&](std::string_view n) {
    const KernelRule* r = rules_.match(n);
    return r ? (int)(r - rules_.rules().data()) : -1;
  });
  return i < 0 ? nullptr : &rules_.rules()[(size_t)i];
}

const KernelRule* SchemaGpuClasses::stored_rule_for(std::string_view name) {
  refresh();
  const int i = stored_rule_of_.get(name, [&](std::string_view n) {
    const KernelRule* r = rule_for(n);
    return r ? (int)(r - rules_.rules().data()) : -1;
  });
  return i < 0 ? nullptr : &rules_.rules()[(size_t)i];
}

GpuClass SchemaGpuClasses::of_name(Kind kind, std::string_view name, GpuRule rule) {
  if (!is_gpu_work(kind)) return GpuClass::none;
  if (kind == Kind::memcpy || rule == GpuRule::hta || (kind == Kind::memset && rule == GpuRule::tlsql))
    return classify_gpu(kind, name, rule, rules_, false);  // (the rules do not decide these)
  const KernelRule* r = rule_for(name);
  return r ? r->cls : GpuClass::compute;
}

void SchemaGpuClasses::find_structure(TreeAccess& tree) {
  if (structure_known_) return;
  // The ops and annotations that say communication, then the GPU work beneath each with no other
  // op or annotation in between: what launched a kernel is its innermost op or annotation
  // (torchrec's "## KJTAllToAllTensorsAwaitable wait() ##" wraps fbgemm's permutes, which compute).
  std::vector<int64_t> roots;
  EventScan ops;  // (in any order: what is found below is a set)
  ops.kinds = {Kind::cpu_op, Kind::annotation};
  ops.any_order = true;
  // Decided once per name (a trace's ops repeat a few thousand names; the rule lowercases and
  // matches each against the kernel rules): for an op and an annotation it is the name's alone.
  NameMemo<bool> says;
  StoredNameMemo<bool> stored_says;  // (a loaded trace's names, by place)
  tree.scan(ops, [&](const EventView& e) {
    auto decide = [&](std::string_view name) { return communication_context(e.kind, name); };
    if (tree.store() ? stored_says.get(e.name, decide) : says.get(e.name, decide)) roots.push_back(e.uid);
  });
  std::unordered_set<int64_t> seen;  // (a file's parent links may loop: each node once)
  for (int64_t root : roots) {
    std::vector<int64_t> stack = tree.children(root);
    while (!stack.empty()) {
      const int64_t u = stack.back();
      stack.pop_back();
      if (!seen.insert(u).second) continue;
      auto row = tree.row(u);
      if (!row) continue;
      const Kind k = kind_from_name(row->kind);
      if (k == Kind::cpu_op || k == Kind::annotation) continue;  // its own launcher: a root if it says so
      if (is_gpu_work(k)) under_communication_.insert(u);
      for (int64_t c : tree.children(u)) stack.push_back(c);
    }
    if (std::string e = tree.take_walk_error(); !e.empty()) throw SqlError(e);
  }
  structure_known_ = true;
}

std::optional<GpuClass> SchemaGpuClasses::of_event(TreeAccess& tree, int64_t uid, GpuRule rule) {
  // A loaded trace's event read in place (its name a view into the store), a saved one's row
  // through SQL: this runs once per GPU event of the reports that class them.
  if (tree.store()) {
    const std::optional<EventView> e = tree.event(uid);
    if (!e) return std::nullopt;
    return of_view(tree, *e, rule);
  }
  const std::optional<TreeRow> row = tree.row(uid);
  if (!row) return std::nullopt;
  EventView e;
  e.uid = uid, e.kind = kind_from_name(row->kind), e.name = row->name;
  return of_view(tree, e, rule);
}

GpuClass SchemaGpuClasses::of_view(TreeAccess& tree, const EventView& e, GpuRule rule) {
  if (!is_gpu_work(e.kind)) return GpuClass::none;
  if (e.kind == Kind::memcpy || rule == GpuRule::hta || (e.kind == Kind::memset && rule == GpuRule::tlsql))
    return of_name(e.kind, e.name, rule);  // (the rules do not decide these)
  // What is left, a kernel (or a memset, which TraceLens's rule classes as one), by the rules; one
  // no rule names is communication when a communication_context launched it.
  if (const KernelRule* r = tree.store() ? stored_rule_for(e.name) : rule_for(e.name)) return r->cls;
  find_structure(tree);
  return under_communication_.count(e.uid) ? GpuClass::communication : GpuClass::compute;
}

namespace {
std::shared_ptr<SchemaGpuClasses> shared_classes(sqlite3* db, const std::string& schema, const SchemaIdentity& id) {
  return connection_cached_shared<SchemaGpuClasses>(db, "gpu_classes:" + schema, id,
                                                    [&] { return std::make_unique<SchemaGpuClasses>(db, schema); });
}

// What gpu_classes_arg keeps for a schema argument (the classes shared, alive as long as it).
struct KeptClasses {
  KeptSchema at;
  std::shared_ptr<SchemaGpuClasses> classes;
};
}  // namespace

std::shared_ptr<SchemaGpuClasses> gpu_classes_for(sqlite3* db, const std::string& schema) {
  std::shared_ptr<SchemaGpuClasses> c = shared_classes(db, schema, schema_identity(db, schema));
  return c ? c : std::make_shared<SchemaGpuClasses>(db, schema);
}

SchemaGpuClasses& gpu_classes_arg(sqlite3_context* ctx, sqlite3_value* schema, std::unique_ptr<SchemaGpuClasses>& own,
                                  TreeAccess** tree, std::unique_ptr<TreeAccess>* own_tree) {
  sqlite3* db = sqlite3_context_db_handle(ctx);
  KeptClasses fresh;
  const KeptClasses& kept = kept_for_call(ctx, kGpuClassesMemo, schema, fresh, [&](KeptClasses& k) {
    k.classes = shared_classes(db, k.at.schema, k.at.id);  // (nullptr without the connection's state)
  });
  // (what `fresh` holds the connection's cache holds too, alive past this call)
  if (tree) *tree = kept.at.tree ? kept.at.tree.get() : tree_for(db, kept.at.schema, *own_tree, &kept.at.id);
  if (kept.classes) return *kept.classes;
  own = std::make_unique<SchemaGpuClasses>(db, kept.at.schema);
  return *own;
}

}  // namespace tlsql
