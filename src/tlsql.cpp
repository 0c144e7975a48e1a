#include "tlsql.h"

#include "db_writer.h"

namespace tlsql {

void register_sql(sqlite3* db) { finish_load(db); }

}  // namespace tlsql
