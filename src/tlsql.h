// The tlsql library: everything the `tlsql` binary (and later the SQLite extension) exposes.
#pragma once

#include <sqlite3.h>

#include "event_store.h"
#include "loader.h"

namespace tlsql {

// Registers tlsql's SQL surface on a connection (the event table module; functions as they are
// added). `store` holds the traces loaded into this connection and must outlive it.
void register_sql(sqlite3* db, EventStore* store);

// Creates the tables, the event table and the views; call once after loading (or on a saved
// database, where it only adds what is missing).
void finish_load(sqlite3* db, const EventStore& store);

// Writes the database to `path` atomically (a saved database opens without re-parsing).
void save_database(sqlite3* db, const std::string& path);

}  // namespace tlsql
