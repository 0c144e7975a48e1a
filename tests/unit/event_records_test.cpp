// src/readers/event_records.h: the rows the rocprofv3 and Nsight readers make from records must be
// the rows the Kineto parser made from the Kineto text those readers wrote before (the reference
// here: kineto_text::ChunkWriter's text through kineto_json::event_parser). Every event below is
// written both ways and the two rows compared field by field, args decoded, health row by row.
// And src/readers/row_rules.h's rules on their own.
#include "src/readers/event_records.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "src/event_store.h"
#include "src/kind.h"
#include "src/readers/kineto_json/kineto_json.h"
#include "src/readers/kineto_text.h"
#include "src/readers/row_rules.h"

using namespace tlsql;

namespace {

// One event written through either writer (the Kineto text one spells times and ids as fields).
struct Out {
  kineto_text::ChunkWriter* text = nullptr;
  event_records::Writer* rec = nullptr;
  void begin(std::string_view ph, std::string_view cat, std::string_view name) {
    text ? text->begin(ph, cat, name) : rec->begin(ph, cat, name);
  }
  // An NVTX range's record: its name cut from `within`, the text checked once (Writer::begin).
  void begin_within(std::string_view cat, std::string_view name, std::string_view within) {
    text ? text->begin("X", cat, name) : rec->begin("X", cat, name, 0, within);
  }
  void ts(int64_t v) { text ? text->time("ts", v) : rec->ts(v); }
  void dur(int64_t v) { text ? text->time("dur", v) : rec->dur(v); }
  void pid(int64_t v) { text ? text->field("pid", v) : rec->pid(v); }
  void tid(int64_t v) { text ? text->field("tid", v) : rec->tid(v); }
  void open_args() { text ? text->open_args() : rec->open_args(); }
  using Key = event_records::Writer::Literal;
  void arg(Key k, int64_t v) { text ? text->arg(k.text, v) : rec->arg(k, v); }
  void text_arg(Key k, std::string_view v) { text ? text->text_arg(k.text, v) : rec->text_arg(k, v); }
  void json_arg(Key k, std::string_view v) { text ? text->json_arg(k.text, v) : rec->json_arg(k, v); }
  void dims_arg(Key k, int64_t x, int64_t y, int64_t z) {
    text ? text->json_arg(k.text, fmt::format("[{},{},{}]", x, y, z)) : rec->dims_arg(k, x, y, z);
  }
  // A value the caller wrote, flat (event_records::Writer::json_arg).
  void flat_arg(Key k, std::string_view v) { text ? text->json_arg(k.text, v) : rec->json_arg(k, v, true); }
  void end(bool args = true) { text ? text->end(args) : rec->end(args); }
};

constexpr int64_t kWide = int64_t(1) << 40;

void events(Out& o) {
  // A kernel as the rocprofv3 reader writes one.
  o.begin("X", "kernel", "void at::native::elementwise_kernel<128, 4>(int, \"q\" \\ x)");
  o.ts(1700000000123456789), o.dur(4567), o.pid(0), o.tid(kWide);
  o.open_args();
  o.arg("device", 0), o.arg("stream", kWide), o.arg("correlation", 77);
  o.dims_arg("grid", 1024, 1, 1);
  o.json_arg("block", "[128, 1, 1]");
  o.text_arg("truncated name", "elementwise_kernel");
  o.end();
  // A runtime call on a CPU thread, a backward op, a forward op with Fwd thread id 0.
  o.begin("X", "cuda_runtime", "hipLaunchKernel"), o.ts(5), o.dur(0), o.pid(3), o.tid(4);
  o.open_args(), o.arg("correlation", 77), o.arg("external id", -kWide), o.end();
  o.begin("X", "cpu_op", "MulBackward0"), o.ts(10), o.dur(20), o.pid(3), o.tid(5);
  o.open_args(), o.arg("Sequence number", 9), o.arg("Fwd thread id", 4), o.text_arg("nvtx", "MulBackward0, seq = 9");
  o.end();
  o.begin("X", "cpu_op", "aten::mul"), o.ts(10), o.dur(20), o.pid(3), o.tid(4);
  o.open_args(), o.arg("Fwd thread id", 0), o.json_arg("Input Dims", "[[2, 3], []]"), o.end();
  // An instant, an event without args, one with empty args, one without ts.
  o.begin("i", "user_annotation", "mark"), o.ts(100), o.pid(3), o.tid(4), o.open_args(), o.end();
  o.begin("X", "gpu_memcpy", "Memcpy HtoD"), o.ts(7), o.dur(8), o.end(false);
  o.begin("X", "hsa_api", "hsa_signal_wait"), o.dur(3), o.pid(1), o.open_args(), o.end();
  // Control characters and non-ASCII text pass; a device past int32 gives no device column.
  o.begin("X", "kernel", "ctl\x01name\ttab \xc3\xa9\xe4\xb8\xad"), o.ts(1), o.dur(1);
  o.open_args(), o.arg("device", int64_t(1) << 33), o.text_arg("short name", "a\x1f\"b\\"), o.end();
  // What the row checks count: a negative duration, an end past int64, NULL-marker values.
  o.begin("X", "kernel", "neg"), o.ts(50), o.dur(-7), o.open_args(), o.end();
  o.begin("X", "kernel", "overflow"), o.ts(INT64_MAX - 5), o.dur(10), o.open_args(), o.end();
  o.begin("X", "kernel", "null marker"), o.ts(kNull), o.dur(5), o.pid(kNull), o.open_args();
  o.arg("correlation", kNull), o.end();
  // Strings the Kineto parser repairs (parsed as text): invalid UTF-8, NUL; and a column from a
  // string value ("stream" written as text: number_as_string) or from a JSON value.
  o.begin("X", "kernel", "bad\xff\xfeutf"), o.ts(1), o.dur(2), o.open_args(), o.arg("correlation", 5), o.end();
  o.begin("X", "cpu_op", "x"), o.ts(1), o.dur(2), o.open_args();
  o.text_arg("sizes", std::string_view("nul\0in", 6)), o.end();
  o.begin("X", "kernel", "s"), o.ts(1), o.dur(2), o.open_args(), o.text_arg("stream", "12"), o.end();
  o.begin("X", "kernel", "k"), o.ts(1), o.dur(2), o.open_args(), o.json_arg("correlation", "31"), o.end();
  // Flat values the caller wrote (stored as written with encode_keys); a key with escapes.
  o.begin("X", "kernel", "flat"), o.ts(3), o.dur(4), o.open_args(), o.flat_arg("grid", "[4096,2,1]");
  o.flat_arg("truncated name", "\"k<\\\"x\\\">\""), o.arg("quote\"key", 1), o.arg("device", 1), o.end();
  // NVTX ranges: the name and shapes cut from the text, which is checked once; one clean, one with
  // invalid UTF-8 past the name (parsed as text all the same: its repair counted).
  for (std::string_view t : {std::string_view("aten::mm, op_id = 3, sizes = [[2, 3], [3]]"),
                             std::string_view("aten::mm, op_id = 4, sizes = [[2]], x\xff\xfe")}) {
    o.begin_within("cpu_op", t.substr(0, 8), t), o.ts(5), o.dur(6), o.pid(1), o.tid(1), o.open_args();
    o.arg("op_id", 3), o.json_arg("Input Dims", t.substr(t.find("[["), t.find("]]") + 2 - t.find("[[")));
    o.text_arg("nvtx", t), o.end();
  }
}

struct Loaded {
  StringPool pool;
  TextArena arena;
  WideIds ids;
  RowArray rows;
  Health health;
  size_t n = 0;
};

// Writes events() with the writer `text_form` picks, in chunks of `chunk_bytes`, and parses them;
// `keyed`: the records' args written as stored (Writer::encode_keys).
void load(Loaded& l, bool text_form, size_t chunk_bytes, bool keyed = false) {
  std::vector<Chunk> chunks;
  std::function<bool(Chunk &&)> emit = [&](Chunk&& c) {
    chunks.push_back(std::move(c));
    return true;
  };
  std::function<TextBuffer()> spare = [] { return TextBuffer(); };
  StringPool::Cache strings(l.pool);
  TextArena::Writer args(l.arena);
  Out o;
  if (text_form) {
    kineto_text::ChunkWriter w(emit, spare, chunk_bytes);
    o.text = &w;
    events(o);
    w.flush();
    l.n = w.rows();
  } else {
    event_records::Writer w(emit, spare, chunk_bytes);
    if (keyed) w.encode_keys(&args.keys());
    o.rec = &w;
    events(o);
    w.flush();
    l.n = w.rows();
  }
  l.rows.reserve(l.n);
  RowSink sink{l.rows, strings, args, l.health, l.ids};
  auto parser = text_form ? kineto_json::event_parser(sink, "t.json") : event_records::parser(sink, "t.json");
  size_t first = 0;
  for (Chunk& c : chunks) {
    c.first_row = first;
    first += c.rows;
    parser->parse(c);
  }
  REQUIRE(first == l.n);
  l.rows.set_size(l.n);
}

std::string text_of(const Loaded& l, uint32_t id) {
  return id == StringPool::kNone ? "<none>" : std::string(l.pool.get(id));
}

}  // namespace

TEST_CASE("event_records: rows equal the Kineto parser's rows of the same events as text") {
  for (size_t chunk_bytes : {size_t(1), size_t(300), size_t(1) << 20})
    for (bool keyed : {false, true}) {
      CAPTURE(chunk_bytes);
      CAPTURE(keyed);
      Loaded a, b;
      load(a, true, chunk_bytes);
      load(b, false, chunk_bytes, keyed);
      REQUIRE(a.n == 18);
      REQUIRE(b.n == a.n);
      std::string ba, bb;
      for (size_t i = 0; i < a.n; ++i) {
        CAPTURE(i);
        const EventRec &x = a.rows[i], &y = b.rows[i];
        CHECK(x.ph == y.ph);
        CHECK(text_of(a, x.name) == text_of(b, y.name));
        CHECK(text_of(a, x.cat) == text_of(b, y.cat));
        CHECK(x.ts == y.ts);
        CHECK(x.dur == y.dur);
        for (auto f : {&EventRec::correlation, &EventRec::external_id, &EventRec::seq, &EventRec::stream,
                       &EventRec::pid, &EventRec::tid, &EventRec::flow_id})
          CHECK(a.ids.value(x.*f) == b.ids.value(y.*f));
        CHECK(x.device == y.device);
        CHECK(x.kind == y.kind);
        CHECK(x.flags == y.flags);
        CHECK(args_of(a.arena, x, ba) == args_of(b.arena, y, bb));
        // As stored, byte for byte: the keys' tokens too (the dictionaries hold the keys alike).
        CHECK(a.arena.get(x.args, x.args_len) == b.arena.get(y.args, y.args_len));
      }
      REQUIRE(a.arena.keys().size() == b.arena.keys().size());
      for (uint32_t k = 0; k < a.arena.keys().size(); ++k) CHECK(a.arena.keys().get(k) == b.arena.keys().get(k));
      CHECK(a.health.rows().size() == b.health.rows().size());
      for (const auto& [check, row] : a.health.rows()) {
        CAPTURE(check);
        CHECK(b.health.count(check) == row.count);
        if (b.health.rows().count(check)) CHECK(b.health.rows().at(check).example == row.example);
      }
    }
}

TEST_CASE("event_records: the rows hold what was written (hand-written values)") {
  Loaded l;
  load(l, false, 1 << 20);
  std::string buf;
  const EventRec& k = l.rows[0];
  CHECK(k.kind == Kind::kernel);
  CHECK(k.ts == 1700000000123456789);  // ns kept exact (no µs text on the way)
  CHECK(k.dur == 4567);
  CHECK(l.ids.value(k.stream) == kWide);
  CHECK(l.ids.value(k.tid) == kWide);
  CHECK(l.ids.value(k.correlation) == 77);
  CHECK(k.device == 0);
  CHECK(args_of(l.arena, k, buf) ==
        R"({"device":0,"stream":1099511627776,"correlation":77,"grid":[1024,1,1],"block":[128,1,1],)"
        R"("truncated name":"elementwise_kernel"})");
  CHECK(l.rows[2].is(EventRec::backward));
  CHECK(!l.rows[3].is(EventRec::backward));
  CHECK(l.ids.value(l.rows[2].seq) == 9);
  CHECK(l.rows[4].kind == Kind::instant);
  CHECK(!l.rows[5].is(EventRec::has_args));
  CHECK(l.rows[7].device == EventRec::kNull32);
  CHECK(std::string(l.pool.get(l.rows[7].name)) == "ctl\x01name\ttab \xc3\xa9\xe4\xb8\xad");
  CHECK(std::string(l.pool.get(l.rows[11].name)) == "bad\xef\xbf\xbd\xef\xbf\xbdutf");  // U+FFFD twice
  CHECK(l.ids.value(l.rows[13].stream) == 12);
  CHECK(l.ids.value(l.rows[14].correlation) == 31);
  CHECK(l.health.count("negative_dur") == 1);
  CHECK(l.health.count("end_overflow") == 1);
  CHECK(l.health.count("int64_min") == 2);     // pid, correlation of "null marker"
  CHECK(l.health.count("bad_time") == 1);      // its ts: -2^63 ns is out of the µs range
  CHECK(l.health.count("missing_ts") == 1);    // hsa_signal_wait ("null marker" has a ts: NULL, counted above)
  CHECK(l.health.count("invalid_utf8") == 4);  // "bad\xff\xfeutf" and the NVTX text past its name
  CHECK(l.health.count("nul_character") == 1);
  CHECK(l.health.count("number_as_string") == 1);
}

TEST_CASE("row_rules: the args keys that give a column, and their columns") {
  using row_rules::ArgKey;
  CHECK(row_rules::arg_key("correlation") == ArgKey::correlation);
  CHECK(row_rules::arg_key("External id") == ArgKey::external_id);
  CHECK(row_rules::arg_key("external id") == ArgKey::external_id);
  CHECK(row_rules::arg_key("Sequence number") == ArgKey::seq);
  CHECK(row_rules::arg_key("stream") == ArgKey::stream);
  CHECK(row_rules::arg_key("device") == ArgKey::device);
  CHECK(row_rules::arg_key("Fwd thread id") == ArgKey::fwd_thread);
  for (const char* k : {"", "Correlation", "correlation ", "dev", "streams", "fwd thread id", "queue"})
    CHECK(row_rules::arg_key(k) == ArgKey::none);
  WideIds ids;
  Health h;
  EventRec ev;
  row_rules::set_arg(ev, ArgKey::device, INT32_MIN, ids, h, 0);  // INT32_MIN is the column's NULL
  CHECK(ev.device == EventRec::kNull32);
  row_rules::set_arg(ev, ArgKey::device, INT32_MAX, ids, h, 0);
  CHECK(ev.device == INT32_MAX);
  row_rules::set_arg(ev, ArgKey::fwd_thread, 0, ids, h, 0);
  CHECK(!ev.is(EventRec::backward));
  row_rules::set_arg(ev, ArgKey::fwd_thread, 12, ids, h, 0);
  CHECK(ev.is(EventRec::backward));
  row_rules::set_arg(ev, ArgKey::correlation, kNull, ids, h, 3);
  CHECK(ev.correlation.null());
  CHECK(h.count("int64_min") == 1);
  CHECK(h.rows().at("int64_min").example == 3);
}

TEST_CASE("row_rules: the checks on a finished row") {
  Health h;
  EventRec ev;
  ev.ph = 'M';
  row_rules::check_row(ev, true, true, false, h, 0);  // metadata needs no ts
  CHECK(h.rows().empty());
  ev.ph = 'X', ev.ts = 10, ev.dur = -1;
  row_rules::check_row(ev, false, false, true, h, 4);
  CHECK(h.count("missing_ph") == 1);
  CHECK(h.count("missing_name") == 1);
  CHECK(h.count("negative_dur") == 1);
  CHECK(h.count("end_overflow") == 0);
  ev.ts = INT64_MAX, ev.dur = 1;
  row_rules::check_row(ev, true, true, true, h, 5);
  CHECK(h.count("end_overflow") == 1);
  std::vector<int8_t> cache;
  CHECK(row_rules::kind_for(cache, 'X', 3, "kernel") == Kind::kernel);
  CHECK(row_rules::kind_for(cache, 'X', 3, "") == Kind::kernel);  // cached by the category's id
  CHECK(row_rules::kind_for(cache, 'i', 4, "user_annotation") == normalize_kind('i', "user_annotation"));
}
