// udf/statement_memo.h: a memo lives for one run of one statement, shared by every call of the
// statement under its code, and is freed when the statement is reset (so a re-run works its
// answers out again). These rest on SQLite keeping auxiliary data under a negative index, which
// sqlite3.h does not document: if a SQLite stops doing so, the first case fails here (the functions
// would still answer alike, per call, more slowly).
#include "udf/statement_memo.h"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

namespace {

using namespace tlsql;

struct Memo {
  static inline int made = 0, alive = 0;
  int calls = 0;
  ArgMemo<int> by_arg;
  Memo() { ++made, ++alive; }
  ~Memo() { --alive; }
};

// memo_calls(x [, key]): how many calls of the statement the memo has seen, this one included;
// with `key`, also files the key's first call number in the memo's ArgMemo and answers that.
void memo_calls(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Memo* m = statement_memo<Memo>(ctx, kSchemaTreeMemo);  // (no other function runs on this connection)
  if (!m) return sqlite3_result_error(ctx, "no memo", -1);
  ++m->calls;
  if (argc < 2) return sqlite3_result_int(ctx, m->calls);
  if (int* first = m->by_arg.find(argv[1])) return sqlite3_result_int(ctx, *first);
  m->by_arg.put(argv[1], m->calls);
  sqlite3_result_int(ctx, m->calls);
}

sqlite3* connection() {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_create_function(db, "memo_calls", -1, SQLITE_UTF8, nullptr, memo_calls, nullptr, nullptr);
  return db;
}

std::vector<std::string> column(sqlite3_stmt* q) {
  std::vector<std::string> out;
  while (sqlite3_step(q) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(q); ++c) {
      const char* t = (const char*)sqlite3_column_text(q, c);
      if (c) row += ',';
      row += t ? t : "NULL";
    }
    out.push_back(row);
  }
  return out;
}

const char* kRows = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) ";

}  // namespace

TEST_CASE("a statement memo is made once a run, shared by its calls, freed at reset") {
  Memo::made = Memo::alive = 0;
  sqlite3* db = connection();
  sqlite3_stmt* q = nullptr;
  // Two calls a row, in two places of the statement: one memo for both (the calls count 1..10).
  REQUIRE(sqlite3_prepare_v2(db, (std::string(kRows) + "SELECT memo_calls(i), memo_calls(-i) FROM n").c_str(), -1, &q,
                             nullptr) == SQLITE_OK);
  CHECK(column(q) == std::vector<std::string>{"1,2", "3,4", "5,6", "7,8", "9,10"});
  CHECK(Memo::made == 1);
  sqlite3_reset(q);
  CHECK(Memo::alive == 0);                                                           // freed with the run
  CHECK(column(q) == std::vector<std::string>{"1,2", "3,4", "5,6", "7,8", "9,10"});  // made again
  CHECK(Memo::made == 2);
  sqlite3_finalize(q);
  CHECK(Memo::alive == 0);
  // Another statement: a memo of its own.
  REQUIRE(sqlite3_prepare_v2(db, (std::string(kRows) + "SELECT memo_calls(i) FROM n").c_str(), -1, &q, nullptr) ==
          SQLITE_OK);
  CHECK(column(q) == std::vector<std::string>{"1", "2", "3", "4", "5"});
  sqlite3_finalize(q);
  CHECK(Memo::made == 3);
  CHECK(sqlite3_close(db) == SQLITE_OK);
}

TEST_CASE("ArgMemo keys an argument by its text, NULL its own key") {
  sqlite3* db = connection();
  sqlite3_stmt* q = nullptr;
  // Keys in row order: 'a' (call 1), NULL (2), 'a' again, 'b' (4), NULL again, 'ab' (6), '' (7).
  REQUIRE(sqlite3_prepare_v2(db,
                             "SELECT memo_calls(0, k) FROM (SELECT 1 AS o, 'a' AS k UNION ALL SELECT 2, NULL "
                             "UNION ALL SELECT 3, 'a' UNION ALL SELECT 4, 'b' UNION ALL SELECT 5, NULL "
                             "UNION ALL SELECT 6, 'ab' UNION ALL SELECT 7, '') ORDER BY o",
                             -1, &q, nullptr) == SQLITE_OK);
  CHECK(column(q) == std::vector<std::string>{"1", "2", "1", "4", "2", "6", "7"});
  sqlite3_finalize(q);
  sqlite3_close(db);
}

TEST_CASE("ArgMemo holds at most 16 keys; the rest are answered per call") {
  sqlite3* db = connection();
  sqlite3_stmt* q = nullptr;
  // 20 keys, each twice: the first 16 are kept (the second call answers the first's number), the
  // last four are not (each call answers its own).
  REQUIRE(sqlite3_prepare_v2(db,
                             "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 39) "
                             "SELECT memo_calls(0, 'k' || (i % 20)) FROM n ORDER BY i",
                             -1, &q, nullptr) == SQLITE_OK);
  const std::vector<std::string> got = column(q);
  sqlite3_finalize(q);
  REQUIRE(got.size() == 40);
  for (int i = 20; i < 40; ++i) CHECK(got[(size_t)i] == std::to_string(i % 20 < 16 ? i % 20 + 1 : i + 1));
  sqlite3_close(db);
}
