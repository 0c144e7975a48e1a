// The reader seam (src/readers/reader.h): a test-only format registered through
// LoadOptions::formats loads rows through the shared pipeline (1-8 threads, chunks, the tree
// builder, the event table), and the choice of format by the text's first bytes.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "session/session.h"
#include "src/json_check.h"
#include "src/kind.h"
#include "src/readers/kineto_json/json_reader.h"
#include "src/readers/kineto_json/kineto_json.h"
#include "src/readers/memory_timeline/memory_timeline.h"
#include "src/readers/pipeline.h"
#include "src/readers/reader.h"

namespace {

using namespace tlsql;

// The whole of a format behind the seam, as a new one would be written
// docs/extending.md, "An input format"): after the line "#rows", one event per line, "NAME TS DUR"
// with TS and DUR whole microseconds, all on one CPU thread.
constexpr std::string_view kMagic = "#rows\n";

class RowsParser : public ChunkParser {
 public:
  RowsParser(const RowSink& sink, std::string path) : sink_(sink), path_(std::move(path)) {}
  void parse(const Chunk& chunk) override {
    std::string_view text(chunk.text.data(), chunk.text.size());
    size_t row = chunk.first_row, p = 0;
    auto number = [&](int64_t& out) {
      while (p < text.size() && text[p] == ' ') ++p;
      auto [end, ec] = std::from_chars(text.data() + p, text.data() + text.size(), out);
      if (ec != std::errc())
        throw LoadError(fmt::format("{}: at byte {}: expected a number, found '{}'", path_, chunk.source_offset + p,
                                    p < text.size() ? text[p] : ' '));
      p = end - text.data();
    };
    while (p < text.size()) {
      EventRec& ev = *new (sink_.rows.slot(row++)) EventRec();
      size_t name_end = text.find(' ', p);
      ev.name = sink_.strings.intern(text.substr(p, name_end - p));
      p = name_end;
      int64_t ts, dur;
      number(ts), number(dur);
      ev.ts = ts * 1000, ev.dur = dur * 1000;
      ev.ph = 'X';
      ev.cat = sink_.strings.intern("cpu_op");
      ev.kind = normalize_kind('X', "cpu_op");
      ev.pid = ev.tid = sink_.ids.id(1);
      p = text.find('\n', p) + 1;
    }
    if (row != chunk.first_row + chunk.rows) throw LoadError("the scan and the parse disagree on the rows");
  }

 private:
  RowSink sink_;
  std::string path_;
};

class RowsReader : public TraceReader {
 public:
  RowsReader(InputSource& in, const std::string& path, size_t chunk_bytes)
      : in_(in), path_(path), chunk_bytes_(chunk_bytes) {}
  // Cuts after the line end where a chunk reaches chunk_bytes_ (the last line needs its '\n').
  void scan(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare, Health&) override {
    size_t start = kMagic.size(), p = start, lines = 0;
    auto flush = [&] {
      Chunk c{spare(), start, lines};
      c.text.resize(p - start);
      std::memcpy(c.text.data(), in_.window() + (start - in_.base()), p - start);
      start = p, lines = 0;
      return emit(std::move(c));
    };
    for (;;) {
      if (p == in_.base() + in_.avail() && !in_.refill(start)) break;
      if (in_.window()[p++ - in_.base()] != '\n') continue;
      ++lines;
      if (p - start >= chunk_bytes_ && !flush()) return;
    }
    if (p != start && in_.window()[p - 1 - in_.base()] != '\n')
      throw LoadError(fmt::format("{}: at byte {} (end of file): the last line has no end", path_, p));
    if (p != start) flush();
  }
  std::unique_ptr<ChunkParser> parser(const RowSink& sink) override {
    return std::make_unique<RowsParser>(sink, path_);
  }
  void finish(LoadedTrace&, Health&) override {}

 private:
  InputSource& in_;
  std::string path_;
  size_t chunk_bytes_;
};

const ReaderFormat kRows = {
    "rows", [](std::string_view head) { return head.starts_with(kMagic); },
    [](InputSource& in, const std::string& path, size_t chunk_bytes) -> std::unique_ptr<TraceReader> {
      return std::make_unique<RowsReader>(in, path, chunk_bytes);
    }};
// The registration: the test's format first, then tlsql's own (the last reads what none claims).
const ReaderFormat kFormats[] = {kRows, kineto_json::format};

std::string write_file(const std::string& name, const std::string& text) {
  std::string path = fmt::format("/tmp/tlsql-reader-test-{}-{}", getpid(), name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The query's rows, columns joined by ',' and rows by ';' (NULL as "NULL").
std::string rows_of(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK);
  std::string out;
  while (sqlite3_step(s) == SQLITE_ROW) {
    if (!out.empty()) out += ';';
    for (int i = 0; i < sqlite3_column_count(s); ++i) {
      const unsigned char* v = sqlite3_column_text(s, i);
      if (i) out += ',';
      out += v ? (const char*)v : "NULL";
    }
  }
  sqlite3_finalize(s);
  return out;
}

// Loads `path` into `session` in chunks of about `chunk_bytes` on `threads` threads, finished (its
// views made, ready to query).
LoadStats load_chunked(Session& session, const std::string& path, size_t chunk_bytes, size_t threads,
                       std::span<const ReaderFormat> formats = builtin_formats()) {
  LoadOptions opt;
  opt.formats = formats;
  opt.chunk_bytes = chunk_bytes;
  opt.threads = threads;
  LoadStats st = session.load(path, opt);
  session.finish();
  return st;
}

std::string load_error(const std::string& path, size_t chunk_bytes = size_t{8} << 20, size_t threads = 0) {
  Session session;
  LoadOptions opt;
  opt.formats = kFormats;
  opt.chunk_bytes = chunk_bytes;
  opt.threads = threads;
  try {
    session.load(path, opt);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "";
}

// step [0, 100] us holds matmul [10, 40] and relu [50, 70], relu holds add [60, 65]: uids in
// file order, so parents 0, 0, 2 and depths 0, 1, 1, 2.
const std::string kRowsText = "#rows\nstep 0 100\nmatmul 10 30\nrelu 50 20\nadd 60 5\n";
const char* kExpected = "0,step,0,100000,NULL,0;1,matmul,10000,30000,0,1;2,relu,50000,20000,0,1;3,add,60000,5000,2,2";

}  // namespace

TEST_CASE("reader seam: a test-only format loads rows through the shared pipeline and tree builder") {
  std::string path = write_file("a.rows", kRowsText);
  // 1-byte chunks: a chunk per line, parsed on every thread, each row at its own place; one
  // thread (the scanner parses each chunk as it cuts it) and more threads than chunks alike.
  for (size_t threads : {size_t{1}, size_t{2}, size_t{3}, size_t{8}})
    for (size_t chunk_bytes : {size_t{1}, size_t{20}, size_t{8} << 20}) {
      CAPTURE(threads);
      CAPTURE(chunk_bytes);
      Session session;
      const LoadStats st = load_chunked(session, path, chunk_bytes, threads, kFormats);
      CHECK(st.events == 4);
      CHECK(st.json_bytes == kRowsText.size());
      CHECK(rows_of(session.db(), "SELECT uid, name, ts, dur, parent, depth FROM event ORDER BY uid") == kExpected);
      CHECK(rows_of(session.db(), "SELECT kind, count(*) FROM event GROUP BY kind") == "cpu_op,4");
    }
  // Gzip is inflated below the seam: the format sees its own text and claims it.
  REQUIRE(std::system(fmt::format("gzip -c '{}' > '{}.gz'", path, path).c_str()) == 0);
  {
    Session session;
    LoadOptions opt;
    opt.formats = kFormats;
    session.load(path + ".gz", opt);
    session.finish();
    CHECK(rows_of(session.db(), "SELECT uid, name, ts, dur, parent, depth FROM event ORDER BY uid") == kExpected);
  }
  std::remove((path + ".gz").c_str());
  std::remove(path.c_str());
}

TEST_CASE("reader seam: a format's errors reach the user as it wrote them, with its file offsets") {
  // "#rows\n" is bytes 0-5, "step 0 100\n" 6-16, "relu " 17-21: the 'x' is byte 22.
  std::string path = write_file("bad.rows", "#rows\nstep 0 100\nrelu x 20\n");
  for (size_t chunk_bytes : {size_t{1}, size_t{8} << 20})
    CHECK(load_error(path, chunk_bytes) == path + ": at byte 22: expected a number, found 'x'");
  // Many bad lines, a chunk each, parsed on up to 8 threads: whichever thread fails first, the
  // message is the first bad line's in file order. 200 good lines of "a 1 1\n" (6 bytes) after
  // the 6-byte "#rows\n": the first "b x 1" starts at byte 1206, its 'x' is byte 1208.
  std::string many = kMagic.data();
  for (int i = 0; i < 200; ++i) many += "a 1 1\n";
  for (int i = 0; i < 200; ++i) many += "b x 1\n";
  std::string many_path = write_file("many.rows", many);
  for (size_t threads : {size_t{1}, size_t{2}, size_t{8}})
    for (int rep = 0; rep < 5; ++rep)
      CHECK(load_error(many_path, 1, threads) == many_path + ": at byte 1208: expected a number, found 'x'");
  std::remove(many_path.c_str());
  // Thrown by the scan, on the pipeline's other thread: "relu 5 2" is bytes 17-24.
  std::string cut = write_file("cut.rows", "#rows\nstep 0 100\nrelu 5 2");
  CHECK(load_error(cut) == cut + ": at byte 25 (end of file): the last line has no end");
  std::remove(path.c_str());
  std::remove(cut.c_str());
}

TEST_CASE("reader seam: Kineto JSON still loads when another format is asked first") {
  std::string path =
      write_file("t.json",
                 "\xEF\xBB\xBF {\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"mm\", "
                 "\"pid\": 1, \"tid\": 1, \"ts\": 1.5, \"dur\": 2}]}");
  Session session;
  LoadOptions opt;
  opt.formats = kFormats;
  session.load(path, opt);
  session.finish();
  CHECK(rows_of(session.db(), "SELECT name, ts, dur FROM event") == "mm,1500,2000");
  CHECK(rows_of(session.db(), "SELECT count FROM health WHERE \"check\" = 'utf8_bom'") == "1");
  std::remove(path.c_str());
  // What no format claims goes to the last (Kineto JSON), whose message says what the file is not.
  std::string other = write_file("x.txt", "PK\x03\x04");
  CHECK(load_error(other) == other + ": at byte 0: not JSON: expected '{' or '[', found 'P'");
  std::remove(other.c_str());
}

TEST_CASE("choose_format: the first format that claims the head, else the last") {
  CHECK(builtin_formats().back().name == "kineto_json");
  for (std::string_view json : {"{", "[", "  \n\t{\"traceEvents\"", "\xEF\xBB\xBF[", "\xEF\xBB\xBF \r\n{"})
    CHECK(kineto_json::claims(json));
  for (std::string_view other : {"", "   ", "\xEF\xBB\xBF", "#rows\n", "PK\x03\x04", "\x1f\x8b", "x{"})
    CHECK_FALSE(kineto_json::claims(other));
  CHECK(choose_format(kFormats, "#rows\nstep 0 1\n").name == "rows");
  CHECK(choose_format(kFormats, "{\"traceEvents\": []}").name == "kineto_json");
  CHECK(choose_format(kFormats, "").name == "kineto_json");  // the last: claims nothing, reads the rest
  CHECK(choose_format(kFormats, "#row").name == "kineto_json");
  // A torch.profiler memory timeline is an array of arrays; a trace-event array holds objects.
  for (std::string_view timeline : {"[[-1, 1, 512, 7]", " [ \n[1,", "\xEF\xBB\xBF[[", "[[0, 1], [[1, 2]]]"})
    CHECK(memory_timeline::claims(timeline));
  for (std::string_view other : {"[", "[1, 2, 3]", "[{\"ph\": \"X\"}", "{\"traceEvents\": [[", "", "[ "})
    CHECK_FALSE(memory_timeline::claims(other));
  CHECK(choose_format(builtin_formats(), "[[-1, 1, 512, 7]]").name == "memory_timeline");
  CHECK(choose_format(builtin_formats(), "[1, 2, 3]").name == "kineto_json");
}

namespace {

// A Kineto trace of n events "e0" ... with ts 10 * i, built so that a speculative cut can be
// checked by construction. With `traps`, each event's args hold what looks like an event boundary
// to guess_cut and is none: a nested array of 30 objects ({"k":1},{"k":2},...) and a string ending
// in "},{" (its closing quote follows the '{'). Then nearly every guessed cut is wrong (only one
// landing in the few bytes after an event's string and before its end finds the true comma).
// With `strings`, args hold only a 400-byte string ending in "},{": a guess landing in it or before
// it in its event finds that string's end, a cut inside a string.
enum Shape { plain, traps, strings };
std::string kineto_events(int n, Shape shape, const std::string& bad_dur = "") {
  std::string t = "{\"schemaVersion\": 1, \"traceEvents\": [\n";
  for (int i = 0; i < n; ++i) {
    if (i) t += i % 2 ? ",\n  " : ", ";
    std::string dur = i == n / 2 && !bad_dur.empty() ? bad_dur : "5";
    t += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "e{}", "pid": 1, "tid": 1, "ts": {}, "dur": {})", i,
                     10 * i, dur);
    if (shape == strings) t += ", \"args\": {\"s\": \"" + std::string(400, 'a') + "x},{\"}";
    if (shape == traps) {
      t += ", \"args\": {\"list\": [";
      for (int k = 1; k <= 30; ++k) t += fmt::format("{}{{\"k\":{}}}", k > 1 ? "," : "", k);
      t += "], \"t\": \"x},{\"}";
    }
    t += "}";
  }
  t += "\n], \"traceName\": \"x\"}\n";
  return t;
}

std::string gzip_copy(const std::string& path) {
  REQUIRE(std::system(fmt::format("gzip -c '{}' > '{}.gz'", path, path).c_str()) == 0);
  return path + ".gz";
}

}  // namespace

TEST_CASE("speculative cuts: rows in file order whichever guesses were wrong (issue 51)") {
  constexpr int n = 300;
  std::string names;  // "e0 e1 ... e299": each row's name is its uid's
  for (int i = 0; i < n; ++i) names += fmt::format("{}e{}", i ? " " : "", i);
  for (Shape shape : {plain, traps, strings}) {
    size_t guessed = 0, recut = 0;  // over the loads of the .json (the .gz's chunks are never guessed)
    const std::string text = kineto_events(n, shape);
    const std::string path = write_file(fmt::format("shape{}.json", (int)shape), text);
    const std::string gz = gzip_copy(path);  // inflated text is read serially: never guessed
    // Chunk sizes that put the guesses at many offsets of the events (an event is ~120 bytes
    // plain, ~470 with traps, ~540 with strings); 1-8 threads.
    for (const std::string& file : {path, gz})
      for (size_t chunk_bytes : {size_t{97}, size_t{1000}, size_t{4096}, size_t{20011}, size_t{8} << 20})
        for (size_t threads : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
          CAPTURE(shape);
          CAPTURE(file);
          CAPTURE(chunk_bytes);
          CAPTURE(threads);
          Session session;
          const LoadStats st = load_chunked(session, file, chunk_bytes, threads);
          CHECK(st.events == (size_t)n);
          CHECK(st.json_bytes == text.size());
          if (file == gz) CHECK(st.chunks_guessed == 0);
          // Where guesses mislead, the scan stops guessing after the third wrong one (each costs
          // the chunks read after it).
          CHECK(st.wrong_guesses <= 3);
          guessed += st.chunks_guessed, recut += st.wrong_guesses;
          CHECK(rows_of(session.db(), "SELECT group_concat(name, ' ') FROM (SELECT name FROM event ORDER BY uid)") ==
                names);
          CHECK(rows_of(session.db(),
                        "SELECT count(*) FROM event WHERE ts = 10000 * (uid - "
                        "(SELECT min(uid) FROM event)) AND dur = 5000") == std::to_string(n));
          if (shape == traps)
            CHECK(rows_of(session.db(),
                          "SELECT count(*) FROM event WHERE args ->> '$.t' = 'x},{' AND "
                          "json_array_length(args, '$.list') = 30") == std::to_string(n));
          if (shape == strings)
            CHECK(rows_of(session.db(),
                          "SELECT count(*) FROM event WHERE args ->> '$.s' = printf('%.*c', 400, "
                          "'a') || 'x},{'") == std::to_string(n));
          CHECK(rows_of(session.db(), "SELECT count(*) FROM health") == "0");
        }
    // Plain events: every guess is right (it lands in an event, and the next '}' ',' '{' '"' is
    // that event's end). With traps or strings nearly every guess is wrong, and each is re-cut by
    // a walk (after which guessing goes on until the third wrong guess: some chunks are still
    // guessed).
    CHECK(guessed > 0);
    if (shape == plain) CHECK(recut == 0);
    if (shape != plain) CHECK(recut > 0);
    std::remove(gz.c_str());
    std::remove(path.c_str());
  }
}

TEST_CASE("chunk_size: four chunks a thread of a small text, none under 256 KB") {
  constexpr size_t MB2 = size_t{2} << 20, KB256 = size_t{256} << 10;
  CHECK(chunk_size(MB2, 2600000, 2) == 325000);  // 2.6 MB / (4 x 2 threads)
  CHECK(chunk_size(MB2, 2600000, 16) == KB256);  // 40,625 B a chunk: the floor
  CHECK(chunk_size(MB2, size_t{1} << 30, 2) == MB2);
  CHECK(chunk_size(MB2, 16 * MB2, 2) == MB2);  // (exactly four 2 MB chunks a thread)
  CHECK(chunk_size(MB2, 0, 2) == MB2);         // a pipe: the text's size is not known
  CHECK(chunk_size(97, size_t{1} << 30, 8) == 97);
  CHECK(chunk_size(0, 0, 1) == 1);
  // Loaded with the default chunk size: a 2.4 MB file is cut speculatively into 300 KB chunks
  // (before: two chunks, both cut by the serial scan), with its rows in file order.
  constexpr int n = 20000;
  const std::string text = kineto_events(n, plain);
  const std::string path = write_file("small-cut.json", text);
  Session session;
  LoadOptions opt;
  opt.threads = 2;
  const LoadStats st = session.load(path, opt);
  session.finish();
  // Each chunk but the last runs from a cut to the first event boundary past `c` bytes on (an
  // event here is under 200 bytes).
  const size_t c = chunk_size(opt.chunk_bytes, text.size(), 2);
  CHECK(c < text.size() / 7);
  CHECK(st.chunks >= text.size() / (c + 200));
  CHECK(st.chunks <= text.size() / c + 1);
  CHECK(st.chunks_guessed > 0);
  CHECK(rows_of(session.db(), "SELECT count(*) FROM event WHERE ts = 10000 * uid AND name = 'e' || uid") ==
        std::to_string(n));
  // Its .gz: the text's size from the gzip trailer, the same chunk size, every chunk cut by the
  // serial scan (it inflates the text), none guessed.
  const std::string gz = gzip_copy(path);
  Session unzipped;
  const LoadStats zst = unzipped.load(gz, opt);
  unzipped.finish();
  CHECK(zst.chunks >= text.size() / (c + 200));
  CHECK(zst.chunks <= text.size() / c + 1);
  CHECK(zst.chunks_guessed == 0);
  CHECK(rows_of(unzipped.db(), "SELECT count(*) FROM event WHERE ts = 10000 * uid AND name = 'e' || uid") ==
        std::to_string(n));
  std::remove(gz.c_str());
  std::remove(path.c_str());
}

// A folder's traces load one after another, each taking the buffers the one before left
// (ReadBuffers: the input window and the chunk buffers, still holding that trace's text, and the
// speculative chunks' staged rows, still holding its rows). Each file must load as it does alone:
// gzip (the whole window written), speculative cuts, another format, a file that fails, and small
// files after large ones, on 2 threads in small chunks (several chunk buffers).
TEST_CASE("ReadBuffers: a load given the buffers of the loads before it reads what it reads alone") {
  const std::string big = write_file("reuse-big.json", kineto_events(2000, traps));
  // One event of a 72 MB string, gzipped: read through the window (a .gz is), which grows past
  // its 64 MiB to keep the event whole, and is then not given back.
  const std::string huge = write_file(
      "reuse-huge.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "h", "pid": 1, "tid": 1, "ts": 1, )"
                         R"("dur": 2, "args": {"s": ")" +
                             std::string(72u << 20, 'a') + R"("}}]})");
  const std::string files[] = {gzip_copy(big),
                               gzip_copy(huge),
                               big,
                               write_file("reuse-strings.json", kineto_events(300, strings)),
                               write_file("reuse-small.json", kineto_events(3, plain)),
                               write_file("reuse.rows", kRowsText),
                               write_file("reuse-cut.json", kineto_events(300, plain).substr(0, 20000)),
                               write_file("reuse-bad.json", kineto_events(300, plain, "\"x\"")),
                               write_file("reuse-tiny.json", kineto_events(1, plain))};
  auto load = [](const std::string& path, ReadBuffers* reuse) {
    Session session;
    LoadOptions opt;
    opt.formats = kFormats;
    opt.chunk_bytes = 4096;
    opt.threads = 2;
    opt.reuse = reuse;
    try {
      session.load(path, opt);
    } catch (const LoadError& e) {
      return std::string("error: ") + e.what();
    }
    session.finish();
    return rows_of(session.db(),
                   "SELECT uid, name, ts, dur, length(args), substr(args, 1, 2000), parent, depth FROM event "
                   "ORDER BY uid") +
           "|" + rows_of(session.db(), "SELECT \"check\", count, example_uid FROM health ORDER BY 1");
  };
  ReadBuffers reuse;
  for (const std::string& f : files) {
    CAPTURE(f);
    const std::string alone = load(f, nullptr);
    CHECK(alone.size() > 10);
    CHECK(load(f, &reuse) == alone);
    // The loads leave their window, but for the huge one's, grown to 128 MiB: the next load
    // allocates one afresh.
    CHECK((reuse.window.capacity() > 0) == (f != files[1]));
  }
  CHECK(!reuse.chunks.empty());
  CHECK(!reuse.staged.empty());
  for (const std::string& f : files) std::remove(f.c_str());
  std::remove(huge.c_str());
}

// A speculative chunk is read whole before its place is known, into rows of its own (the
// checked read, or check_json, a repair and a trusted read where the checked read gives up), and
// parked while a chunk before it is still being read. Its health counts must still name their
// rows by uid, and its repairs be counted once: event 150's dur written as a string (the checked
// read counts it) and event 200's name holding an escape JSON does not have (the checked read
// gives up there, after counting event 150 when they share a chunk; check_json calls the chunk
// repairable), at chunk sizes that put them in many chunks, on 1-8 threads, as the .gz (read
// serially, counted chunks) gives them.
TEST_CASE("speculative cuts: health counts name their rows, repairs counted once (issue 51)") {
  constexpr int n = 300;
  std::string text = kineto_events(n, plain, "\"7\"");
  text.insert(text.find("\"e200\"") + 3, "\\q");
  const std::string path = write_file("health_spec.json", text);
  const std::string gz = gzip_copy(path);
  const std::string expected = "invalid_escape 1 -1|number_as_string 1 150";
  const char* sql =
      "SELECT group_concat(c, '|') FROM (SELECT check_name || ' ' || count || ' ' || coalesce(example_uid - "
      "(SELECT min(uid) FROM event), -1) AS c FROM (SELECT \"check\" AS check_name, count, example_uid FROM health) "
      "ORDER BY c)";
  for (const std::string& file : {path, gz})
    for (size_t chunk_bytes : {size_t{97}, size_t{1000}, size_t{4096}, size_t{20011}})
      for (size_t threads : {size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
        CAPTURE(file);
        CAPTURE(chunk_bytes);
        CAPTURE(threads);
        Session session;
        const LoadStats st = load_chunked(session, file, chunk_bytes, threads);
        CHECK(st.events == (size_t)n);
        CHECK(rows_of(session.db(), sql) == expected);
        CHECK(rows_of(session.db(), "SELECT dur FROM event WHERE name = 'e150'") == "7000");
        CHECK(rows_of(session.db(), "SELECT count(*) FROM event WHERE name = 'e2\\q00'") == "1");
      }
  std::remove(gz.c_str());
  std::remove(path.c_str());
}

TEST_CASE("speculative cuts: errors as the serial scan reports them, first in file order") {
  constexpr int n = 300;
  // A bad literal in event 150 (JSON the check refuses: that chunk fails its proof and is re-cut
  // serially); two errors, the first in file order reported; and a file cut short.
  const std::string bad_literal = kineto_events(n, traps, "tru");
  std::string two_errors = kineto_events(n, plain, "nul");
  two_errors.insert(two_errors.find("\"e250\"") + 6, " @");
  const std::string cut_short = kineto_events(n, strings).substr(0, kineto_events(n, strings).size() / 2 + 7);
  for (const auto& [name, text] :
       {std::pair{"literal.json", bad_literal}, std::pair{"two.json", two_errors}, std::pair{"cut.json", cut_short}}) {
    const std::string path = write_file(name, text);
    const std::string gz = gzip_copy(path);
    const std::string serial = load_error(gz);
    REQUIRE(!serial.empty());
    CAPTURE(serial);
    // The 't' of "tru", the 'n' of "nul": the first byte that is not JSON.
    if (std::string(name) == "literal.json")
      CHECK(serial.find(fmt::format("at byte {}: ", text.find(": tru") + 2)) != std::string::npos);
    if (std::string(name) == "two.json")
      CHECK(serial.find(fmt::format("at byte {}: ", text.find(": nul") + 2)) != std::string::npos);
    for (size_t chunk_bytes : {size_t{97}, size_t{1000}, size_t{4096}, size_t{20011}})
      for (size_t threads : {size_t{1}, size_t{2}, size_t{8}}) {
        CAPTURE(name);
        CAPTURE(chunk_bytes);
        CAPTURE(threads);
        // The same message, the .gz's name aside.
        CHECK(load_error(path, chunk_bytes, threads) == path + serial.substr(gz.size()));
      }
    std::remove(gz.c_str());
    std::remove(path.c_str());
  }
}

// The args members a row takes columns from ("correlation", "External id", ...) are read where
// the walk that minifies the args (args_text::minify_encode_object) found them, and where that
// walk gives up (more than 1000 brackets) where json_scan::for_each_member finds them. Each args
// text below is loaded as it is, with a key written with an escape added ("\u0078" spells "x":
// escaped keys are read as the key they spell) and with a member nested 1001 deep added (the other
// path): the columns and every health count but escaped_key and args_too_deep (the added members')
// must agree, and be what the rules say (row_rules::set_arg, the reader's int_of).
TEST_CASE("args: the members a row reads, from the minifying walk or json_scan's (issue 51)") {
  struct Case {
    const char* args;
    const char* columns;  // correlation|external_id|seq|stream|device, then the backward op's fwd
    const char* health;   // check:count, sorted, escaped_key left out
  };
  const Case cases[] = {
      // (The backward op, uid 1, is linked to the forward op, uid 0, by their Sequence number when
      // its "Fwd thread id" is not 0.)
      {R"({"correlation": 123, "External id": 45})", "123|45|||;", ""},
      {"{\n  \"External id\" :  \"45\" ,\n  \"Sequence number\": 7.0\n}", "|45|7||;", "number_as_string:1"},
      {R"({"stream": 7.5, "device": null, "correlation": true})", "|||||;", "number_not_integer:2"},
      {R"({"Fwd thread id": 1, "stream": "abc", "device": -3, "Sequence number": 5})", "||5||-3;0",
       "number_not_integer:1"},
      {R"({"External id": 18446744073709551615})", "|-1|||;", "id_over_int64:1"},
      {R"({"device": -9223372036854775808, "seq": 1})", "|||||;", "int64_min:1"},
      {R"({"correlation": 1, "nested": {"correlation": 9}, "correlation": 2})", "2||||;", ""},
      {R"({"External id": {"a": 1}, "device": [1], "stream": 3})", "|||3|;", "number_not_integer:2"},
      {R"({"correlation": "\u0031\u0032", "Fwd thread id": 0, "Sequence number": 5})", "12||5||;",
       "number_as_string:1"},
      {R"({"": 1, "c": 2, "correlatio": 3, "correlations": 4})", "|||||;", ""},
  };
  auto load = [](const std::string& args) {
    const std::string path =
        write_file("args.json",
                   "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"fwd\", \"pid\": 1, \"tid\": 1, "
                   "\"ts\": 1, \"dur\": 2, \"args\": {\"Sequence number\": 5}},\n"
                   "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 2, \"ts\": 10, "
                   "\"dur\": 2, \"args\": " +
                       args + "}]}");
    Session session;
    session.load(path, LoadOptions{});
    session.finish();
    std::remove(path.c_str());
    const std::string columns =
        rows_of(session.db(),
                "SELECT ifnull(correlation, '') || '|' || ifnull(external_id, '') || '|' || ifnull(seq, '') || '|' || "
                "ifnull(stream, '') || '|' || ifnull(device, '') || ';' || ifnull(fwd, '') FROM event WHERE uid = 1");
    const std::string health =
        rows_of(session.db(),
                "SELECT ifnull(group_concat(\"check\" || ':' || count, ' '), '') FROM (SELECT * "
                "FROM health WHERE \"check\" NOT IN ('escaped_key', 'args_too_deep') ORDER BY 1)");
    return std::make_pair(columns, health);
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.args));
    const auto walked = load(c.args);
    CHECK(walked.second == c.health);
    std::string escaped = c.args, deep = c.args;
    escaped.insert(1, "\"\\u0078\": 0, ");
    deep.insert(1, "\"deep\": " + std::string(1001, '[') + std::string(1001, ']') + ", ");
    CHECK(load(escaped) == walked);
    CHECK(load(deep) == walked);
  }
}

// The Kineto reader walks text check_json() has proved valid and checks nothing itself; given text
// that never passes that check (cut inside a key, a value, a string or after a comma), it still
// ends in an error or rows without reading past the text: each text lies in a heap block of its
// exact size, where the sanitizer build reports a read beyond it.
TEST_CASE("read_event_chunk: text check_json would refuse is never read past its end") {
  const char* texts[] = {"",
                         "[",
                         "[{",
                         "[{\"name\"",
                         "[{\"name\":",
                         "[{\"name\": ",
                         "[{\"name\":\"open",
                         "[{\"name\":\"x\\",
                         "[{\"name\":\"x\\u00",
                         "[{\"ts\":12",
                         "[{\"ts\":1.5e",
                         "[{\"pid\":\"7",
                         "[{\"args\"",
                         "[{\"args\":",
                         "[{\"args\":{\"correlation\":",
                         "[{\"args\":{\"correlation\":4",
                         "[{\"args\":{\"External id\":\"9",
                         "[{\"args\":[1,",
                         "[{\"\\u0061rgs\":{\"a",
                         "[1,",
                         "[{\"a\":1},",
                         "[{\"a\":1}, ",
                         "[\"s",
                         "[{\"name\" \"x\"}]",
                         "[{\"name\"}]"};
  for (const char* t : texts) {
    CAPTURE(std::string(t));
    const size_t n = std::strlen(t);
    std::unique_ptr<char[]> text(new char[n ? n : 1]);
    std::memcpy(text.get(), t, n);
    RowArray rows;
    rows.reserve(4);
    StringPool pool;
    StringPool::Cache strings(pool);
    TextArena arena;
    TextArena::Writer args(arena);
    Health health;
    WideIds ids;
    ChunkSink sink{{rows, strings, args, health, ids}};
    sink.events = 2;
    const ReadStatus st = read_event_chunk(text.get(), n, sink);
    CHECK(st.offset <= n);
  }
}

namespace {

// One read of `text` (trusted or checked) into a fresh store: its status, and each row and health
// count as text (a checked read's must equal a trusted read's of the same text).
struct ChunkRead {
  ReadStatus::Code code = ReadStatus::ok;
  size_t events = 0;
  std::vector<std::string> rows;
};
ChunkRead read_chunk(const std::string& t, bool checked, size_t events) {
  std::unique_ptr<char[]> text(new char[t.size() ? t.size() : 1]);  // (exact size: ASan sees past it)
  std::memcpy(text.get(), t.data(), t.size());
  RowArray rows;
  rows.reserve(t.size() / 3 + 16);
  StringPool pool;
  StringPool::Cache strings(pool);
  TextArena arena;
  TextArena::Writer args(arena);
  Health health;
  WideIds ids;
  ChunkSink sink{{rows, strings, args, health, ids}};
  sink.events = events;
  ChunkRead r;
  r.code = read_event_chunk(text.get(), t.size(), sink, checked).code;
  r.events = checked ? sink.events : events;
  if (r.code != ReadStatus::ok) return r;
  std::string buf;
  for (size_t i = 0; i < r.events; ++i) {
    const EventRec& e = rows[i];
    auto id = [&](Id32 v, bool text) {
      return text ? std::string(pool.get((uint32_t)v.v)) : std::to_string(ids.value(v));
    };
    r.rows.push_back(fmt::format(
        "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}", e.ts, e.dur,
        e.name == StringPool::kNone ? "-" : pool.get(e.name), e.cat == StringPool::kNone ? "-" : pool.get(e.cat),
        id(e.pid, e.is(EventRec::pid_text)), id(e.tid, e.is(EventRec::tid_text)),
        id(e.flow_id, e.is(EventRec::flow_text)), ids.value(e.correlation), ids.value(e.external_id), ids.value(e.seq),
        ids.value(e.stream), e.device, (int)e.kind, (int)e.ph, (int)e.flags, args_of(arena, e, buf)));
  }
  for (const auto& [check, row] : health.rows())
    r.rows.push_back(fmt::format("{} {} {}", check, row.count, row.example));
  return r;
}

}  // namespace

// The checked read (issue 51: a chunk's bytes walked once, the check folded into the reader's
// walk) must be sound: it vouches for a text (ok) only where check_json calls it valid, with the
// same element count, and then reads it exactly as the trusted read does. Every text below, and
// each of its one-byte edits (a byte deleted, replaced or inserted: the JSON's own characters,
// a control byte, a bad UTF-8 byte), is read both ways and checked by check_json.
TEST_CASE("read_event_chunk checked: ok only for what check_json calls valid, rows as a trusted read") {
  const std::string texts[] = {
      R"([{"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64", "pid": 0, "tid": 7, "ts": 1700000000123.456, "dur": 12.5,
 "args": {"External id": 42, "correlation": 9, "stream": 7, "device": 0, "grid": [128, 1, 1], "block": [256, 1, 1],
  "est. achieved occupancy %": 0, "registers per thread": 128, "shared memory": 0.5e3, "warps per SM": -1.25E-2}}])",
      R"([{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1234,"tid":"5","ts":1,"dur":2,"args":{"Input Dims":[[2,3],[3,4]],"Input type":["float","c10::Half"],"Concrete Inputs":["","","1e-05",true,null,false],"Ev Idx":3,"Sequence number":11,"Fwd thread id":0}},
{"ph":"s","id":17,"pid":1,"tid":2,"ts":3,"cat":"ac2g","name":"ac2g","bp":"e"} , {"ph":"f","id":"x17","pid":1,"tid":2,"ts":4,"cat":"ac2g","name":"ac2g","bp":"e"}])",
      R"([{"name":"tab\tin \"quotes\" \\ \u00e9\ud83d\ude00 /","ph":"i","s":"t","ts":0,"pid":"Spans","tid":"PyTorch Profiler","unknown":{"a":[{}, [], [1, {"b": "c"}]], "d": {}}}, {}, {"args": "not an object", "ph": "M"}, {"args": null}, {"n\u0061me": "escaped key", "args": {"Extern\u0061l id": 5, "k": 0, "l": -0.0}}])",
      "[]",
      "[ ]",
      "[{\"args\": {\n                    \"a\": 1,\n                                      \"b\": [\n  2\n]\n}\n}]",
      " [ {\"ts\" : 1 , \"dur\" :2 ,\"args\" : { \"a\" : [ 1 , 2 ] , \"b\" : { } } } ] \n",
  };
  const std::string edits = std::string("\"\\,:{}[] 0-e.xn\t\n") + '\x01' + '\xff';
  size_t vouched = 0, valid = 0;
  auto try_text = [&](const std::string& t) {
    const JsonCheck check = check_json(t.data(), t.size());
    const ChunkRead checked = read_chunk(t, true, t.size() / 3 + 16);
    valid += check.result == JsonCheck::ok;
    if (checked.code != ReadStatus::ok) return;
    ++vouched;
    CAPTURE(t);
    REQUIRE(check.result == JsonCheck::ok);
    REQUIRE(checked.events == check.elements);
    CHECK(read_chunk(t, false, check.elements).rows == checked.rows);
  };
  for (const std::string& t : texts) {
    CAPTURE(t);
    // Each whole text is valid, and the checked read vouches for it.
    CHECK(read_chunk(t, true, t.size() / 3 + 16).code == ReadStatus::ok);
    try_text(t);
    for (size_t i = 0; i <= t.size(); ++i)
      for (char c : edits) {
        if (i < t.size()) {
          try_text(std::string(t).erase(i, 1));
          try_text(std::string(t).replace(i, 1, 1, c));
        }
        try_text(std::string(t).insert(i, 1, c));
      }
  }
  // (The edits keep some texts valid: a space added, a digit changed. Most of those are vouched
  // for; the rest, as NaN-free valid text the read gives up on, are non-object elements.)
  CHECK(vouched > 1000);
  CHECK(vouched <= valid);
}

// A checked read that gives up keeps nothing of the rest of the chunk: a value it refused (NaN,
// a bad literal, an escape JSON lacks) is read as an empty token, not as the text to the chunk's
// end, which a name would intern and args would copy into the store-wide arena (the load then
// falls back to check_json, but the pool and the arena are the store's).
TEST_CASE("read_event_chunk checked: a refused value stores nothing of the chunk's rest") {
  const std::string pad(1 << 16, 'x');
  for (const std::string value : {"NaN", "nulx", "\"a\\qb\"", "-Infinity"})
    for (const char* key : {"name", "cat", "ph", "args", "pid"}) {
      const std::string t = fmt::format(R"([{{"{}": {}, "pad": "{}"}}, {{"name": "{}"}}])", key, value, pad, pad);
      CAPTURE(key);
      CAPTURE(value);
      RowArray rows;
      rows.reserve(16);
      StringPool pool;
      StringPool::Cache strings(pool);
      TextArena arena;
      TextArena::Writer args(arena);
      Health health;
      WideIds ids;
      ChunkSink sink{{rows, strings, args, health, ids}};
      sink.events = 16;
      CHECK(read_event_chunk(t.data(), t.size(), sink, true).code == ReadStatus::unchecked);
      for (size_t i = 0; i < pool.size(); ++i) CHECK(pool.get((uint32_t)i).size() < 16);
      CHECK(rows[0].args_len < 16);
    }
}
