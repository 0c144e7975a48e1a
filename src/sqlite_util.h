// Small RAII helpers over the SQLite C API.
#pragma once

#include <sqlite3.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace tlsql {

struct SqlError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs every statement in `sql`; throws SqlError with SQLite's message.
void exec_sql(sqlite3* db, std::string_view sql);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return stmt_; }
  // Steps once; returns true while rows come. Throws on error.
  bool step();
  void reset() { sqlite3_reset(stmt_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace tlsql
