// Names in the SQL text tlsql prepares. A schema name reaches tlsql from a function's argument, and
// a saved database's views choose those arguments: the SQL a function prepares runs as top-level
// SQL, where SQLITE_DIRECTONLY and TRUSTED_SCHEMA do not apply. So no name from an argument or a
// file is ever spliced into SQL as it is: a schema is resolved against the connection's attached
// databases (anything else is refused) and then quoted, here and nowhere else
// (tests/shell/sql_names.py checks the sources for any other place that quotes a name into SQL).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/sqlite_util.h"

namespace tlsql {

// `name` as an SQL identifier: in double quotes, each '"' doubled, so that no text can end it.
std::string quote_identifier(std::string_view name);

// `text` as an SQL string literal: in single quotes, each '\'' doubled.
std::string quote_literal(std::string_view text);

// A GLOB pattern of the texts that contain `text`: '*' around it, its own '*', '?' and '['
// in brackets. `name GLOB ?` with it bound asks what instr(name, text) > 0 does (up to a NUL in
// `text`, where SQLite's text ends), and the event table answers GLOB once per distinct name.
std::string glob_containing(std::string_view text);

// The schema attached to `db` under `name` (as SQLite matches schema names: ASCII case ignored),
// spelled as SQLite lists it ("main", "temp", an ATTACH name); nullopt when there is none.
std::optional<std::string> attached_schema(sqlite3* db, std::string_view name);

struct SchemaError : SqlError {
  using SqlError::SqlError;
};

// The schema `name` of `db` as SQL text: resolved with attached_schema, then quoted. Throws
// SchemaError naming `name` when no database is attached under it.
std::string schema_sql(sqlite3* db, std::string_view name);

// The integer a schema's pragma (`PRAGMA schema.data_version`, `schema_version`: their names are
// literals; the schema is quoted by schema_sql) answers, or -1 when there is no such schema or no
// answer. Running it starts a read on that schema where none is open (data_version's reason).
int64_t schema_pragma(sqlite3* db, std::string_view schema, const char* pragma);

// ATTACH the database file `path` (":memory:" for a new one) as `name`, and DETACH `name`: SQLite
// takes both as bound values, so neither is spliced into SQL. attach throws SqlError; detach_quietly
// ignores a failure (cleaning up after an error).
void attach_database(sqlite3* db, const std::string& path, const std::string& name);
void detach_quietly(sqlite3* db, const std::string& name);

}  // namespace tlsql
