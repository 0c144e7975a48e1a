// EventSource scans (udf/tree/tree_access.h) give the rows the event table holds, in the order
// asked, from the loaded store and from a saved database alike: uid order, (ts, uid) order, and
// any_order (the same rows, in no promised order), each checked against SQL over the event table;
// and event(uid)'s texts, which outlive the call either way.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "session/session.h"
#include "src/event_store.h"
#include "src/kind.h"
#include "udf/tree/tree_access.h"

namespace tlsql {
namespace {

// Ops and annotations written out of start order, a runtime call and a kernel among them.
const char* kTrace = R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 100, "dur": 900},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 500, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 200, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 210, "dur": 10,
   "args": {"correlation": 7}},
  {"ph": "X", "cat": "user_annotation", "name": "inner", "pid": 1, "tid": 1, "ts": 150, "dur": 20},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 230, "dur": 40,
   "args": {"correlation": 7, "device": 0, "stream": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 150, "dur": 5}
]})";

std::vector<int64_t> sql_uids(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK);
  std::vector<int64_t> out;
  while (sqlite3_step(s) == SQLITE_ROW) out.push_back(sqlite3_column_int64(s, 0));
  sqlite3_finalize(s);
  return out;
}

std::vector<int64_t> scanned(EventSource& events, bool by_ts, bool any_order) {
  EventScan what;
  what.kinds = {Kind::cpu_op, Kind::annotation};
  what.by_ts = by_ts, what.any_order = any_order;
  std::vector<int64_t> out;
  events.scan(what, [&](const EventView& e) {
    CHECK((e.kind == Kind::cpu_op || e.kind == Kind::annotation));
    out.push_back(e.uid);
  });
  return out;
}

void check_scans(sqlite3* db) {
  std::unique_ptr<EventSource> own;
  EventSource& events = event_source(db, nullptr, own);
  const auto by_uid = sql_uids(db, "SELECT uid FROM event WHERE kind IN ('cpu_op', 'annotation') ORDER BY uid");
  const auto by_ts = sql_uids(db, "SELECT uid FROM event WHERE kind IN ('cpu_op', 'annotation') ORDER BY ts, uid");
  REQUIRE(by_uid.size() == 5);  // 3 ops and 2 annotations: the kernel and the launch call are not read
  REQUIRE(by_ts != by_uid);     // (the file's order is not its start order)
  CHECK(scanned(events, false, false) == by_uid);
  CHECK(scanned(events, true, false) == by_ts);
  CHECK(scanned(events, true, true) == by_ts);  // by_ts is an order asked for: it wins
  std::vector<int64_t> any = scanned(events, false, true);
  std::sort(any.begin(), any.end());
  CHECK(any == by_uid);  // the same rows, each once
  // event(uid): its texts outlive the call (a saved database's row is gone by then: they were
  // left pointing into it) and stay valid until the next one.
  sqlite3_stmt* q = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT uid, name, cat FROM event ORDER BY uid", -1, &q, nullptr) == SQLITE_OK);
  while (sqlite3_step(q) == SQLITE_ROW) {
    const std::optional<EventView> e = events.event(sqlite3_column_int64(q, 0));
    REQUIRE(e);
    const std::string name = (const char*)sqlite3_column_text(q, 1), cat = (const char*)sqlite3_column_text(q, 2);
    events.row(sqlite3_column_int64(q, 0));  // (other statements of the source run between)
    CHECK(std::string(e->name) == name);
    CHECK(std::string(e->cat) == cat);
  }
  sqlite3_finalize(q);
  CHECK(!events.event(1000));
}

}  // namespace

TEST_CASE("EventSource scans: uid, (ts, uid) and any order, loaded and saved, as the event table says") {
  const std::string trace = fmt::format("/tmp/tlsql-event-source-{}.json", getpid());
  const std::string saved = fmt::format("/tmp/tlsql-event-source-{}.db", getpid());
  std::ofstream(trace) << kTrace;
  {
    Session s;
    s.load(trace);
    s.finish();
    check_scans(s.db());
    s.save(saved);
  }
  {
    Session s(saved);
    check_scans(s.db());
  }
  std::remove(saved.c_str());
  std::remove(trace.c_str());
}

// Each load's parse threads write args through writers of their own; a writer left its 16 MB block
// part-filled, and a folder of small traces held one such block's last page per writer per trace.
TEST_CASE("TextArena: a writer goes on in the block an earlier writer left unfilled") {
  TextArena arena;
  uint64_t a = 0, b = 0;
  {
    TextArena::Writer w1(arena), w2(arena);
    a = w1.add("first");
    b = w2.add("second");
  }
  CHECK((a >> 32) != (b >> 32));  // (a block a writer)
  TextArena::Writer w3(arena), w4(arena), w5(arena);
  const uint64_t c = w3.add("third"), d = w4.add("fourth"), e = w5.add("fifth");
  // w3 and w4 go on after "first" (5 bytes) and "second" (6) in those blocks; w5 takes a new one.
  const std::set<uint64_t> went_on = {c, d}, after = {(a >> 32) << 32 | 5, (b >> 32) << 32 | 6};
  CHECK(went_on == after);
  CHECK((e >> 32) == 2);
  CHECK(arena.get(a, 5) == "first");
  CHECK(arena.get(b, 6) == "second");
  CHECK(arena.get(c, 5) == "third");
  CHECK(arena.get(d, 6) == "fourth");
  // kSlack readable bytes still follow each text written last in its block
  const std::string slack(arena.get(c, 5 + TextArena::kSlack).substr(5));
  CHECK(slack == std::string(TextArena::kSlack, ' '));
}

// A block of 2 MiB pages (TextArena::use_huge_pages, as a large load's process asks; blocks of 2 MiB
// and more) starts on a 2 MiB boundary, so that every page of it can be one; a text longer than a
// block gets a block of its own, rounded up to whole pages. Texts, their slack and the blocks of
// 4 KiB pages before them read back as written either way.
TEST_CASE("TextArena: blocks of 2 MiB pages start on a 2 MiB boundary and keep their texts") {
  TextArena arena;
  const std::string big(17u << 20, 'x');  // (over a 16 MB block)
  uint64_t before = 0, first = 0, second = 0, large = 0;
  {
    TextArena::Writer w(arena);
    before = w.add("small pages");
  }
  struct HugePages {  // (process-wide: off again for the tests after this one, whatever happens)
    HugePages() { TextArena::use_huge_pages(true); }
    ~HugePages() { TextArena::use_huge_pages(false); }
  };
  {
    HugePages on;
    TextArena::Writer w1(arena), w2(arena);
    w1.add(std::string(100, 'a'));               // (goes on in the block the first writer left)
    first = w2.add(std::string(3u << 20, 'h'));  // (a block of 3 MB and more: 2 MiB pages)
    second = w2.add("and more");
    large = w2.add(big);
  }
  CHECK(arena.get(before, 11) == "small pages");
  CHECK(arena.get(first, 3u << 20) == std::string(3u << 20, 'h'));
  CHECK(arena.get(second, 8) == "and more");
  CHECK(arena.get(large, (uint32_t)big.size()) == big);
  CHECK(std::string(arena.get(large, (uint32_t)big.size() + TextArena::kSlack).substr(big.size())) ==
        std::string(TextArena::kSlack, ' '));
  CHECK((first & 0xffffffffu) == 0);  // (a block's first text)
#if !defined(__SANITIZE_ADDRESS__)    // (there a block is a heap allocation: reads past it are caught)
  CHECK(reinterpret_cast<uintptr_t>(arena.get(first, 0).data()) % (2u << 20) == 0);
  CHECK(reinterpret_cast<uintptr_t>(arena.get(large, 0).data()) % (2u << 20) == 0);
#endif
}

// A folder's small traces' rows lie side by side in the store's RowSpace (src/event_store.h), on
// 2 MiB pages: ranges follow each other from a 2 MiB boundary; the last range grows and shrinks
// in place (fit) and is given back when its array goes; an array that is no longer the last one, or
// that outgrows its block, moves to a mapping of its own with every row; ranges past kLargest are
// never taken.
TEST_CASE("RowSpace: small traces' rows side by side, grown in place while last, moved out with their rows") {
  auto fill = [](RowArray& a, size_t from, size_t to, int64_t tag) {
    for (size_t i = from; i < to; ++i) {
      new (a.slot(i)) EventRec();
      a.slot(i)->ts = tag * 1000000 + (int64_t)i;
    }
    a.set_size(to);
  };
  auto intact = [](const RowArray& a, int64_t tag) {
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].ts != tag * 1000000 + (int64_t)i) return false;
    return true;
  };
  auto bytes_of = [](size_t rows) { return (rows * sizeof(EventRec) + 63) & ~size_t{63}; };  // (a range's)
  RowSpace space;
  CHECK(space.take(RowSpace::kLargest + 64) == nullptr);
  auto first = std::make_unique<RowArray>();
  first->take_from(&space);
  first->reserve(1000);
  fill(*first, 0, 1000, 1);
  const EventRec* at = first->begin();
  CHECK(reinterpret_cast<uintptr_t>(at) % (2u << 20) == 0);  // (a block's first range)
  first->reserve(5000);                                      // (the last range: grown where it is)
  CHECK(first->begin() == at);
  fill(*first, 1000, 3000, 1);
  first->fit();  // (3000 rows of 88 bytes: 264,000 bytes, a multiple of 64)
  CHECK(first->capacity() == 3000);
  RowArray second;
  second.take_from(&space);
  second.reserve(10);
  CHECK(reinterpret_cast<const char*>(second.begin()) == reinterpret_cast<const char*>(at) + bytes_of(3000));
  fill(second, 0, 10, 2);
  const EventRec* second_at = second.begin();
  first->reserve(6000);  // (no longer the last: moved to a mapping of its own)
  CHECK(first->begin() != at);
  CHECK(first->size() == 3000);
  CHECK(intact(*first, 1));
  fill(*first, 3000, 6000, 1);
  CHECK(intact(*first, 1));
  CHECK(intact(second, 2));
  // The last range grown past its block's end: moved out too, its rows kept, its range given back.
  second.reserve(RowSpace::kBlock / sizeof(EventRec));
  CHECK(second.begin() != second_at);
  CHECK(intact(second, 2));
  RowArray third;
  third.take_from(&space);
  third.reserve(100);
  CHECK(third.begin() == second_at);
  // A range given back when its array goes, and taken again by the next.
  const char* after_third = reinterpret_cast<const char*>(third.begin()) + bytes_of(100);
  {
    RowArray fourth;
    fourth.take_from(&space);
    fourth.reserve(100);
    CHECK(reinterpret_cast<const char*>(fourth.begin()) == after_third);
  }
  RowArray fifth;
  fifth.take_from(&space);
  fifth.reserve(100);
  CHECK(reinterpret_cast<const char*>(fifth.begin()) == after_third);
  // Ranges of kLargest: three more fit the first block's rest, a fourth starts a new block from a
  // 2 MiB boundary.
  std::vector<std::unique_ptr<RowArray>> large;
  for (int i = 0; i < 4; ++i) {
    large.push_back(std::make_unique<RowArray>());
    large.back()->take_from(&space);
    large.back()->reserve(RowSpace::kLargest / sizeof(EventRec));
  }
  CHECK(reinterpret_cast<const char*>(large[2]->begin()) ==
        reinterpret_cast<const char*>(large[1]->begin()) + bytes_of(large[1]->capacity()));
  CHECK(reinterpret_cast<uintptr_t>(large[3]->begin()) % (2u << 20) == 0);
  CHECK(reinterpret_cast<const char*>(large[3]->begin()) !=
        reinterpret_cast<const char*>(large[2]->begin()) + bytes_of(large[2]->capacity()));
  first.reset();
  CHECK(intact(second, 2));
}

// A kind list grows to its size once a load (EventStore::index_new_kinds), geometrically from one
// load to the next: a folder of many traces must not copy the lists whole on every load.
TEST_CASE("EventStore: kind lists take their size once a load, and grow geometrically across loads") {
  EventStore store;
  size_t grown = 0;
  for (int t = 0; t < 200; ++t) {
    auto trace = std::make_unique<LoadedTrace>();
    trace->uid_base = store.first_uid + store.total_rows;
    trace->rows.reserve(6);
    for (int i = 0; i < 6; ++i) {
      new (trace->rows.slot(i)) EventRec();
      trace->rows[i].kind = i == 0 ? Kind::kernel : Kind::cpu_op;
    }
    trace->rows.set_size(6);
    store.total_rows += 6;
    store.traces.push_back(std::move(trace));
    const size_t capacity = store.rows_of_kind.empty() ? 0 : store.rows_of_kind[(size_t)Kind::cpu_op].capacity();
    store.index_new_kinds();
    const std::vector<uint32_t>& ops = store.rows_of_kind[(size_t)Kind::cpu_op];
    if (ops.capacity() != capacity) ++grown;
    if (t == 0) CHECK(ops.capacity() == 5);  // (the first load's exact size; by push_back, 8)
    REQUIRE(ops.size() == 5 * (size_t)(t + 1));
    CHECK(ops.back() == (uint32_t)(6 * t + 5));
    CHECK(store.rows_of_kind[(size_t)Kind::kernel].back() == (uint32_t)(6 * t));
  }
  CHECK(grown < 20);  // (geometric: ~log1.5(200); a list grown by exactly each load's rows: 200)
}

// A folder's traces load one after another into one store: the kind lists (EventStore::rows_of_kind,
// which `WHERE kind = ...` reads) and the uid lookups (EventStore::trace_at, which a join on uid
// reads) must give each trace's rows, whichever trace holds them. Each is checked against the same
// question asked so that SQLite scans every row (`kind || ''` and `+uid` use no index).
TEST_CASE("EventStore over several traces: kind lists and uid lookups find each trace's rows") {
  // Kinds differ between the traces (the second has no annotation, the third only annotations),
  // and names say which trace a row came from.
  const std::vector<std::string> traces = {kTrace,
                                           R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "b_op", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
  {"ph": "X", "cat": "kernel", "name": "b_kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 5,
   "args": {"device": 0, "stream": 7}}]})",
                                           R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "c_outer", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
  {"ph": "X", "cat": "user_annotation", "name": "c_inner", "pid": 1, "tid": 1, "ts": 20, "dur": 5}]})"};
  std::vector<std::string> paths;
  Session s;
  for (size_t i = 0; i < traces.size(); ++i) {
    paths.push_back(fmt::format("/tmp/tlsql-event-source-{}-{}.json", getpid(), i));
    std::ofstream(paths.back()) << traces[i];
    s.load(paths.back());
  }
  s.finish();
  auto text = [&](const std::string& sql) {
    sqlite3_stmt* q = nullptr;
    REQUIRE(sqlite3_prepare_v2(s.db(), sql.c_str(), -1, &q, nullptr) == SQLITE_OK);
    std::string out;
    while (sqlite3_step(q) == SQLITE_ROW)
      for (int c = 0; c < sqlite3_column_count(q); ++c)
        out += fmt::format("{}{}", sqlite3_column_text(q, c) ? (const char*)sqlite3_column_text(q, c) : "",
                           c + 1 < sqlite3_column_count(q) ? "," : ";");
    sqlite3_finalize(q);
    return out;
  };
  CHECK(text("SELECT count(*) FROM event") == "11;");  // 7 + 2 + 2
  CHECK(text("SELECT count(DISTINCT trace) FROM event") == "3;");
  for (const char* kind : {"cpu_op", "annotation", "runtime", "kernel"}) {
    CAPTURE(kind);
    const std::string listed = text(fmt::format("SELECT uid, name FROM event WHERE kind = '{}' ORDER BY uid", kind));
    CHECK(!listed.empty());
    CHECK(listed == text(fmt::format("SELECT uid, name FROM event WHERE kind || '' = '{}' ORDER BY uid", kind)));
  }
  // Every uid looked up on its own: the row found is the row the scan has at that uid.
  const std::string all = text("SELECT uid, name, trace FROM event ORDER BY +uid");
  CHECK(text("SELECT e.uid, e.name, e.trace FROM (SELECT uid FROM event ORDER BY +uid) k "
             "JOIN event e ON e.uid = k.uid") == all);
  for (const std::string& p : paths) std::remove(p.c_str());
}

}  // namespace tlsql
