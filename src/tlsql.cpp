#include "tlsql.h"

#include "db_writer.h"
#include "event_table.h"

namespace tlsql {

void register_sql(sqlite3* db, EventStore* store) { register_event_module(db, store); }

void finish_load(sqlite3* db, const EventStore& store) { finish_schema(db, !store.traces.empty()); }

}  // namespace tlsql
