// docs/extending.md's examples, extracted from the page and built with their folders' include rules
// (tests/CMakeLists.txt), answer what another path over the same rows answers: stream_gaps against
// lag() over the event table, gpu_stream against the event table's stream, loaded and saved (the
// EventSource's two paths); kernel_lines loads rows through the shared pipeline with exact times,
// GPU fields and an error naming its byte offset. So the page cannot drift from the code.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "session/session.h"
#include "src/readers/kernel_lines/kernel_lines.h"  // the page's
#include "src/readers/kineto_json/kineto_json.h"

namespace {

using namespace tlsql;

// The query's rows, columns joined by ',' and rows by ';' (NULL as "NULL").
std::string rows_of(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK,
                  (std::string(sqlite3_errmsg(db)) + ": " + sql));
  std::string out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (!out.empty()) out += ';';
    for (int i = 0; i < sqlite3_column_count(s); ++i) {
      const unsigned char* v = sqlite3_column_text(s, i);
      if (i) out += ',';
      out += v ? (const char*)v : "NULL";
    }
  }
  CHECK_MESSAGE(rc == SQLITE_DONE, std::string(sqlite3_errmsg(db)));
  sqlite3_finalize(s);
  return out;
}

void check_functions(sqlite3* db) {
  const std::string streams = rows_of(db,
                                      "SELECT count(DISTINCT stream) FROM event WHERE kind IN ('kernel', 'memcpy', "
                                      "'memset')");
  CHECK(streams == "2");  // hta_trace_compare_base: streams 7 and 16
  // stream_gaps(trace, stream): max(0, ts - the end of the event before) over the stream's GPU
  // events by (ts, uid), here by lag() over the table.
  const std::string mine = rows_of(db,
                                   "SELECT s.trace, s.stream, g.before, g.after, g.gap_ns FROM (SELECT DISTINCT "
                                   "trace, stream FROM event WHERE kind IN ('kernel', 'memcpy', 'memset')) s, "
                                   "stream_gaps(s.trace, s.stream) g");
  const std::string lag = rows_of(db,
                                  "SELECT trace, stream, b, uid, max(0, ts - e) FROM (SELECT trace, stream, uid, "
                                  "ts, lag(uid) OVER w AS b, lag(end) OVER w AS e FROM event WHERE kind IN "
                                  "('kernel', 'memcpy', 'memset') AND ts IS NOT NULL AND end IS NOT NULL WINDOW w AS "
                                  "(PARTITION BY trace, stream ORDER BY ts, uid)) WHERE b IS NOT NULL "
                                  "ORDER BY trace, stream, ts, uid");
  CHECK(mine.size() > 100);
  CHECK(mine == lag);
  CHECK(rows_of(db,
                "SELECT count(*) FROM event WHERE gpu_stream(uid) IS NOT CASE WHEN kind IN ('kernel', 'memcpy', "
                "'memset', 'gpu_annotation', 'sync') THEN stream END") == "0");
  CHECK(rows_of(db, "SELECT count(*) FROM event WHERE gpu_stream(uid) IS NOT NULL") != "0");
  CHECK(rows_of(db, "SELECT name FROM tlsql_functions WHERE name IN ('stream_gaps', 'gpu_stream') ORDER BY name") ==
        "gpu_stream;stream_gaps");
}

}  // namespace

TEST_CASE("the page's functions: loaded and saved, the same as the event table says") {
  const std::string saved = fmt::format("/tmp/tlsql-extending-{}.db", getpid());
  {
    Session s;
    s.load(TLSQL_TEST_DATA "/hta_trace_compare_base.json.gz");
    s.finish();
    check_functions(s.db());
    s.save(saved);
  }
  {
    Session s(saved);
    check_functions(s.db());
  }
  unlink(saved.c_str());
  // A mistake reads as the kit writes it.
  Session s;
  s.load(TLSQL_TEST_DATA "/hta_trace_compare_base.json.gz");
  s.finish();
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(s.db(), "SELECT * FROM stream_gaps(0, 'x')", -1, &st, nullptr) == SQLITE_OK);
  CHECK(sqlite3_step(st) == SQLITE_ERROR);
  CHECK(std::string(sqlite3_errmsg(s.db())) == "stream_gaps(trace, stream [, schema]): stream must be an integer");
  sqlite3_finalize(st);
}

TEST_CASE("the page's kernel_lines format loads through the pipeline") {
  const std::string path = fmt::format("/tmp/tlsql-extending-{}.txt", getpid());
  const ReaderFormat formats[] = {kernel_lines::format, kineto_json::format};
  LoadOptions opt;
  opt.formats = formats;
  // 14 header bytes; "gemm,1.5,2.25,0,7\n" at 14, blank line at 32, "copy,10,0.001,1,9" at 33
  std::ofstream(path, std::ios::binary) << "#kernel_lines\ngemm,1.5,2.25,0,7\n\ncopy,10,0.001,1,9";
  for (size_t chunk : {size_t{1}, size_t{8} << 20}) {
    opt.chunk_bytes = chunk;
    Session s;
    s.load(path, opt);
    s.finish();
    CHECK(rows_of(s.db(), "SELECT name, kind, ts, dur, device, stream FROM event ORDER BY uid") ==
          "gemm,kernel,1500,2250,0,7;copy,kernel,10000,1,1,9");
  }
  std::ofstream(path, std::ios::binary) << "#kernel_lines\ngemm,1.5,2.25,0,7\ncopy,x10,0.001,1,9\n";
  std::string error;
  try {
    Session s;
    s.load(path, opt);
  } catch (const LoadError& e) {
    error = e.what();
  }
  // "copy," starts at byte 32, so the start field at 37
  CHECK(error == path + ": at byte 37: expected a start in µs, found 'x10'");
  unlink(path.c_str());
}
