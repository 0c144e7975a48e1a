// The GPU classes of one schema's events (gpu_class.h's rules applied to what the schema holds):
// its kernel_rule table, re-read when the connection has changed rows since (an INSERT of a rule
// shows at once), and the GPU events that a communication_context launched. gpu_class(uid),
// gpu_class_of(kind, name), kernel_rule_of(name) and through them every report and picture.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "udf/connection_cache.h"
#include "udf/gpu_class.h"
#include "udf/perf/name_memo.h"
#include "udf/tree/tree_access.h"

namespace tlsql {

class SchemaGpuClasses {
 public:
  SchemaGpuClasses(sqlite3* db, std::string schema);
  // The class of an event of that kind and name by the rules alone.
  GpuClass of_name(Kind kind, std::string_view name, GpuRule rule);
  // The class of event `uid` of the schema's `tree`: the rules, then what launched it. nullopt: no
  // event has that uid.
  std::optional<GpuClass> of_event(TreeAccess& tree, int64_t uid, GpuRule rule);
  // The same for an event `tree` gave (its uid, kind and name; a loaded trace's name a view into
  // its store): a scan classes each event it reads without reading it again.
  GpuClass of_view(TreeAccess& tree, const EventView& e, GpuRule rule);
  // The rule that classes a kernel of that name, or nullptr.
  const KernelRule* rule_for(std::string_view name);

 private:
  void refresh();                         // re-reads the rules when the connection changed rows since
  void find_structure(TreeAccess& tree);  // the GPU events below a communication_context (once)
  const KernelRule* stored_rule_for(std::string_view name);  // rule_for, for a name in the schema's store

  sqlite3* db_;
  std::string schema_;
  ChangesSeen seen_;  // when rules_ was read
  KernelRules rules_;
  NameMemo<int> rule_of_;               // index in rules_, -1 for none
  StoredNameMemo<int> stored_rule_of_;  // the same, by place
  bool structure_known_ = false;
  std::unordered_set<int64_t> under_communication_;
};

// The SchemaGpuClasses of the schema a function's `schema` argument names (nullptr: "main";
// schema_arg): the connection's (connection_cache.h: kept for what the schema holds), else one made
// into `own`; resolved on the statement's first call and kept in its memo for the calls after it
// while the schema holds what it did (udf/statement_memo.h). With `tree`, the schema's tree too
// (made into `own_tree` where it is not the connection's). Throws SqlError (a kernel_rule row tlsql
// would not write) and as schema_arg.
SchemaGpuClasses& gpu_classes_arg(sqlite3_context* ctx, sqlite3_value* schema, std::unique_ptr<SchemaGpuClasses>& own,
                                  TreeAccess** tree = nullptr, std::unique_ptr<TreeAccess>* own_tree = nullptr);

// The SchemaGpuClasses of a resolved schema where no function call holds a memo (a table-valued
// function's rows): the connection's, kept for what the schema holds, else one made for the caller.
std::shared_ptr<SchemaGpuClasses> gpu_classes_for(sqlite3* db, const std::string& schema);

}  // namespace tlsql
