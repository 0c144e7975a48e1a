// The b-tree writer against SQLite itself: the same rows written by the writer and inserted by
// SQL must give a database that passes integrity_check (which also checks every index entry
// against its row) and reads back identically, at page sizes that force overflow chains and
// several interior levels.
#include "src/btree_writer.h"

#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using tlsql::BtreeFile;
using tlsql::compare_records;
using tlsql::RecordValue;

namespace {

struct Db {
  sqlite3* db = nullptr;
  explicit Db(const std::string& path) { REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK); }
  ~Db() { sqlite3_close(db); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    INFO(sql << ": " << (err ? err : ""));
    sqlite3_free(err);
    REQUIRE(rc == SQLITE_OK);
  }
  // Every row of a query, each value as typeof:text, joined.
  std::vector<std::string> rows(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
    std::vector<std::string> out;
    while (sqlite3_step(s) == SQLITE_ROW) {
      std::string r;
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const char* t = (const char*)sqlite3_column_text(s, c);
        r += std::to_string(sqlite3_column_type(s, c)) + ":" + (t ? t : "") + "|";
      }
      out.push_back(std::move(r));
    }
    sqlite3_finalize(s);
    return out;
  }
  int64_t root(const std::string& name) {
    return std::stoll(
        rows("SELECT rootpage FROM sqlite_schema WHERE name = '" + name + "'").at(0).substr(2, 20).c_str());
  }
};

struct Row {
  int64_t id;
  RecordValue b, c, d;
};

const char* kSchema =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c TEXT, d);"
    "CREATE INDEX t_bc ON t(b, c);"
    "CREATE INDEX t_d ON t(d);";

// Rows whose values cover every integer width, 0 and 1 (no body bytes), NULLs, texts from empty
// to many pages long, and repeated keys.
std::vector<Row> make_rows(size_t n, size_t long_text, std::vector<std::string>& texts) {
  std::mt19937_64 rng(7);
  const int64_t ints[] = {0,
                          1,
                          -1,
                          2,
                          127,
                          128,
                          -128,
                          -129,
                          32767,
                          32768,
                          -32769,
                          8388607,
                          8388608,
                          2147483647,
                          2147483648LL,
                          -2147483649LL,
                          0x7fffffffffffLL,
                          0x800000000000LL,
                          INT64_MAX,
                          INT64_MIN};
  texts.clear();
  texts.reserve(n);
  std::vector<Row> rows;
  int64_t id = -5;  // negative rowids take nine-byte varints
  for (size_t i = 0; i < n; ++i) {
    id += 1 + (int64_t)(rng() % 3);
    if (i == n / 2) id = (int64_t)1 << 60;
    size_t len = i % 97 == 0 ? long_text + rng() % 1000 : rng() % 40;
    texts.push_back(std::string(len, (char)('a' + rng() % 26)));
    Row r{id, {}, {}, {}};
    if (i % 5) r.b = RecordValue::of_int(ints[rng() % std::size(ints)]);
    if (i % 7) r.c = RecordValue::of_text(texts.back());
    r.d = i % 3 ? RecordValue::of_int((int64_t)(rng() % 50)) : RecordValue::of_text(i % 2 ? "x" : "y");
    rows.push_back(r);
  }
  return rows;
}

void bind(sqlite3_stmt* s, int col, const RecordValue& v) {
  if (v.type == RecordValue::integer) sqlite3_bind_int64(s, col, v.i);
  if (v.type == RecordValue::text) sqlite3_bind_text(s, col, v.s, (int)v.len, SQLITE_STATIC);
  if (v.type == RecordValue::null) sqlite3_bind_null(s, col);
}

void check_page_size(int page_size, size_t n, size_t long_text) {
  std::vector<std::string> texts;
  std::vector<Row> rows = make_rows(n, long_text, texts);
  auto dir = std::filesystem::temp_directory_path();
  std::string written = (dir / ("btree_w_" + std::to_string(getpid()) + ".db")).string();
  std::string inserted = (dir / ("btree_i_" + std::to_string(getpid()) + ".db")).string();
  std::filesystem::remove(written);
  std::filesystem::remove(inserted);
  int64_t table_root, bc_root, d_root;
  {
    Db db(written);
    db.exec("PRAGMA page_size=" + std::to_string(page_size) + ";" + kSchema);
    table_root = db.root("t"), bc_root = db.root("t_bc"), d_root = db.root("t_d");
  }
  {
    BtreeFile file(written);
    {
      BtreeFile::Table t(file, (uint32_t)table_root);
      for (const Row& r : rows) {
        RecordValue cols[] = {{}, r.b, r.c, r.d};  // the INTEGER PRIMARY KEY column is NULL in the record
        t.add(r.id, cols);
      }
      t.finish();
    }
    auto write_index = [&](uint32_t root, auto key) {
      std::vector<std::vector<RecordValue>> entries;
      for (const Row& r : rows) entries.push_back(key(r));
      std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return compare_records(a, b) < 0; });
      BtreeFile::Index ix(file, root);
      for (const auto& e : entries) ix.add(e);
      ix.finish();
    };
    write_index((uint32_t)bc_root, [](const Row& r) { return std::vector{r.b, r.c, RecordValue::of_int(r.id)}; });
    write_index((uint32_t)d_root, [](const Row& r) { return std::vector{r.d, RecordValue::of_int(r.id)}; });
    file.finish();
  }
  {
    Db db(inserted);
    db.exec("PRAGMA page_size=" + std::to_string(page_size) + ";" + kSchema + "BEGIN");
    sqlite3_stmt* ins = nullptr;
    REQUIRE(sqlite3_prepare_v2(db.db, "INSERT INTO t VALUES(?,?,?,?)", -1, &ins, nullptr) == SQLITE_OK);
    for (const Row& r : rows) {
      sqlite3_bind_int64(ins, 1, r.id);
      bind(ins, 2, r.b);
      bind(ins, 3, r.c);
      bind(ins, 4, r.d);
      REQUIRE(sqlite3_step(ins) == SQLITE_DONE);
      sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    db.exec("COMMIT");
  }
  Db w(written), i(inserted);
  CHECK(w.rows("PRAGMA integrity_check") == std::vector<std::string>{"3:ok|"});
  CHECK(w.rows("SELECT count(*) FROM t") == std::vector<std::string>{"1:" + std::to_string(n) + "|"});
  for (const char* q :
       {"SELECT * FROM t ORDER BY a", "SELECT b, c, a FROM t INDEXED BY t_bc ORDER BY b, c, a",
        "SELECT d, a FROM t INDEXED BY t_d ORDER BY d, a", "SELECT a FROM t INDEXED BY t_bc WHERE b = 127 AND c > 'm'",
        "SELECT a FROM t INDEXED BY t_d WHERE d IN (3, 'y')", "SELECT * FROM t WHERE a > 1152921504606846976"})
    CHECK_MESSAGE(w.rows(q) == i.rows(q), q);
  // Several interior levels where the sizes make them (what the 512-byte case is for): dbstat
  // paths are "/" for the root, "/000/" for its first child, and so on.
  if (page_size == 512)
    for (const char* tree : {"t", "t_bc", "t_d"})
      CHECK(w.rows(std::string("SELECT max(length(path)) >= 9 FROM dbstat WHERE name = '") + tree + "'") ==
            std::vector<std::string>{"1:1|"});
  std::filesystem::remove(written);
  std::filesystem::remove(inserted);
}

}  // namespace

TEST_CASE("compare_records orders as SQLite's BINARY collation") {
  std::string ab = "ab", abc = "abc", b = "b";
  auto cmp = [](std::vector<RecordValue> x, std::vector<RecordValue> y) { return compare_records(x, y); };
  CHECK(cmp({RecordValue{}}, {RecordValue::of_int(INT64_MIN)}) < 0);
  CHECK(cmp({RecordValue::of_int(INT64_MAX)}, {RecordValue::of_text("")}) < 0);
  CHECK(cmp({RecordValue::of_int(-1)}, {RecordValue::of_int(0)}) < 0);
  CHECK(cmp({RecordValue::of_text(ab)}, {RecordValue::of_text(abc)}) < 0);
  CHECK(cmp({RecordValue::of_text(abc)}, {RecordValue::of_text(b)}) < 0);
  CHECK(cmp({RecordValue::of_int(1), RecordValue::of_int(2)}, {RecordValue::of_int(1), RecordValue::of_int(2)}) == 0);
  CHECK(cmp({RecordValue::of_int(1), RecordValue::of_int(3)}, {RecordValue::of_int(1), RecordValue::of_int(2)}) > 0);
}

TEST_CASE("b-trees written page by page equal SQLite's own inserts") {
  // 512-byte pages: ~10 rows a leaf, so 6,000 rows need three levels, and 2,000-byte texts
  // overflow (a table leaf keeps at most 477 bytes, an index cell 103).
  SUBCASE("512-byte pages") { check_page_size(512, 6000, 2000); }
  // tlsql's own page size: texts past 65,501 bytes overflow.
  SUBCASE("64 KiB pages") { check_page_size(65536, 3000, 70000); }
  SUBCASE("one row") { check_page_size(4096, 1, 10); }
  SUBCASE("no rows") { check_page_size(4096, 0, 10); }
}
