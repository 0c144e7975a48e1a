#include "udf/analysis/view_statement.h"

#include <fmt/format.h>

#include "src/sql_names.h"

namespace tlsql {

std::unique_ptr<Statement> view_statement(EventSource& events, const char* view, std::string_view sql) {
  std::string in = events.schema();
  if (in == "main") {
    Statement shadowed(events.db(), "SELECT 1 FROM temp.sqlite_schema WHERE type = 'view' AND name = ?");
    sqlite3_bind_text(shadowed.get(), 1, view, -1, SQLITE_STATIC);
    if (shadowed.step()) in = "temp";
  }
  return std::make_unique<Statement>(events.db(),
                                     fmt::format(fmt::runtime(sql), fmt::arg("v", schema_sql(events.db(), in)),
                                                 fmt::arg("s", schema_sql(events.db(), events.schema()))));
}

}  // namespace tlsql
