#include "udf/table_function.h"

#include <fmt/format.h>

#include <deque>
#include <mutex>

namespace tlsql::table_detail {

const TableInfo* keep_table_info(const char* name, void* data) {
  static std::mutex mutex;
  static auto* kept = new std::deque<TableInfo>;
  std::lock_guard lock(mutex);
  return &kept->emplace_back(TableInfo{name, data});
}

std::string signature(std::span<const TableArgument> arguments) {
  std::string s = "(", closing;
  for (size_t k = 0; k < arguments.size(); ++k) {
    if (!arguments[k].required)
      s += k > 0 ? " [, " : "[", closing += "]";
    else if (k > 0)
      s += ", ";
    s += arguments[k].name;
  }
  return s + closing + ")";
}

std::string declaration(std::span<const std::tuple<const char*, const char*, bool>> columns,
                        std::span<const TableArgument> arguments) {
  std::string d = "CREATE TABLE x(";
  const char* sep = "";
  auto add = [&](const char* name, const char* type, bool hidden) {
    d += fmt::format("{}{}{}{}{}", sep, name, *type ? " " : "", type, hidden ? " HIDDEN" : "");
    sep = ", ";
  };
  for (const auto& [name, type, hidden] : columns)
    if (!hidden) add(name, type, false);
  for (const TableArgument& a : arguments) add(a.column, "", true);
  for (const auto& [name, type, hidden] : columns)
    if (hidden) add(name, type, true);
  return d + ")";
}

int best_index(sqlite3_index_info* info, int first, std::span<const TableArgument> arguments, double cost,
               double rows) {
  const int count = (int)arguments.size();
  int given[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  bool unusable[8] = {};
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.op != SQLITE_INDEX_CONSTRAINT_EQ || c.iColumn < first || c.iColumn >= first + count) continue;
    (c.usable ? given[c.iColumn - first] = i : unusable[c.iColumn - first] = true);
  }
  int plan = 0, arg = 0;
  bool complete = true;
  for (int k = 0; k < count && k < 8; ++k) {
    if (given[k] < 0 && unusable[k]) return SQLITE_CONSTRAINT;
    if (given[k] >= 0) {
      plan |= 1 << k;
      info->aConstraintUsage[given[k]].argvIndex = ++arg;
      info->aConstraintUsage[given[k]].omit = 1;
    } else if (arguments[(size_t)k].required) {
      complete = false;
    }
  }
  info->idxNum = plan;
  info->estimatedCost = complete ? cost : 1e12;
  if (rows > 0) info->estimatedRows = (sqlite3_int64)rows;
  return SQLITE_OK;
}

std::string message(const char* name, std::span<const TableArgument> arguments, std::string_view what) {
  return function_message(name, signature(arguments), what);
}

}  // namespace tlsql::table_detail
