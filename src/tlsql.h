// The tlsql library: everything the `tlsql` binary (and later the SQLite extension) exposes.
#pragma once

#include <sqlite3.h>

#include "loader.h"

namespace tlsql {

// Registers tlsql's SQL surface (views; functions as they are added) on a connection.
void register_sql(sqlite3* db);

}  // namespace tlsql
