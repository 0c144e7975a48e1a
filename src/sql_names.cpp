#include "src/sql_names.h"

#include <fmt/format.h>

namespace tlsql {

namespace {
std::string quoted(std::string_view text, char q) {
  std::string out(1, q);
  out.reserve(text.size() + 2);
  for (char c : text) {
    if (c == q) out += q;
    out += c;
  }
  return out += q;
}
}  // namespace

std::string quote_identifier(std::string_view name) { return quoted(name, '"'); }

std::string quote_literal(std::string_view text) { return quoted(text, '\''); }

std::string glob_containing(std::string_view text) {
  std::string out = "*";
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[')
      out += '[', out += c, out += ']';
    else
      out += c;
  }
  return out += '*';
}

std::optional<std::string> attached_schema(sqlite3* db, std::string_view name) {
  // The list pragma_database_list reads, without preparing SQL: a name with a NUL byte matches no
  // entry, as SQLite's own lookup stops at the NUL.
  if (name.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string n(name);
  for (int i = 0; const char* s = sqlite3_db_name(db, i); ++i)
    if (sqlite3_stricmp(s, n.c_str()) == 0) return std::string(s);
  return std::nullopt;
}

std::string schema_sql(sqlite3* db, std::string_view name) {
  if (auto s = attached_schema(db, name)) return quote_identifier(*s);
  throw SchemaError(fmt::format("no database is attached as '{}'", name));
}

int64_t schema_pragma(sqlite3* db, std::string_view schema, const char* pragma) {
  int64_t out = -1;
  sqlite3_stmt* q = nullptr;
  try {
    const std::string sql = fmt::format("PRAGMA {}.{}", schema_sql(db, schema), pragma);
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
      out = sqlite3_column_int64(q, 0);
  } catch (const SchemaError&) {  // (no such schema: -1)
  }
  sqlite3_finalize(q);
  return out;
}

void attach_database(sqlite3* db, const std::string& path, const std::string& name) {
  Statement s(db, "ATTACH ?1 AS ?2");
  sqlite3_bind_text(s.get(), 1, path.c_str(), (int)path.size(), SQLITE_TRANSIENT);
  sqlite3_bind_text(s.get(), 2, name.c_str(), (int)name.size(), SQLITE_TRANSIENT);
  s.step();
}

void detach_quietly(sqlite3* db, const std::string& name) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "DETACH ?1", -1, &s, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(s, 1, name.c_str(), (int)name.size(), SQLITE_TRANSIENT);
    sqlite3_step(s);
  }
  sqlite3_finalize(s);
}

}  // namespace tlsql
