// Built twice (see CMakeLists.txt) with TLSQL_READER_NS naming the CPU target.
#include "src/readers/kineto_json/json_reader.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "src/decimal.h"
#include "src/json_scan.h"
#include "src/kind.h"

namespace tlsql::TLSQL_READER_NS {

using namespace simdjson;
using ondemand::raw_json_string;

namespace {

std::string describe(error_code e) {
  switch (e) {
    case TAPE_ERROR: return "malformed JSON: expected ',' ':' or a closing bracket";
    case INCOMPLETE_ARRAY_OR_OBJECT: return "malformed JSON: unbalanced brackets";
    case UNCLOSED_STRING: return "unclosed string";
    case NUMBER_ERROR: return "malformed number";
    case T_ATOM_ERROR:
    case F_ATOM_ERROR:
    case N_ATOM_ERROR: return "invalid literal: expected a value";
    case INCORRECT_TYPE: return "unexpected value type";
    case DEPTH_ERROR: return "nesting too deep";
    default: return error_message(e);
  }
}

std::string_view trim_right(std::string_view t) {
  while (!t.empty() && json_scan::is_ws(t.back())) t.remove_suffix(1);
  return t;
}

class Reader {
 public:
  Reader(const char* text, size_t size, ChunkSink& sink) : text_(text), size_(size), sink_(sink), h_(sink.health) {}

  ReadStatus run(ondemand::document& doc) {
    doc_ = &doc;
    ondemand::array arr;
    if (auto e = doc.get_array().get(arr)) return fail(e, "expected an array of events");
    size_t idx = sink_.first_row;
    for (auto element : arr) {
      // The scanner counted the commas between elements: one more element means a missing comma.
      if (idx >= sink_.first_row + sink_.events) return fail(TAPE_ERROR, "malformed JSON: expected ',' between events");
      EventRec& ev = *new (sink_.rows.slot(idx)) EventRec();
      ++idx;
      ondemand::value el;
      if (auto e = element.get(el)) return fail(e, "expected an event");
      ondemand::object obj;
      if (auto e = el.get_object().get(obj)) {
        if (e != INCORRECT_TYPE) return fail(e, "expected an event object");
        std::string_view raw;
        if (auto st = span_of(el, raw); st.code != ReadStatus::ok) return st;
        set_args(ev, raw, idx - 1);  // kept whole (minified) so nothing is lost
        h_.add("element_not_object", idx - 1,
               "traceEvents elements that are not objects: kept as kind 'other', text in args");
        continue;
      }
      if (auto st = read_event(obj, ev, idx - 1); st.code != ReadStatus::ok) return st;
    }
    if (idx != sink_.first_row + sink_.events) return fail(TAPE_ERROR, "malformed JSON: expected an event");
    return {};
  }

 private:
  ReadStatus fail(error_code e, const std::string& expected) {
    ReadStatus st{ReadStatus::error, expected, size_};
    const char* loc = nullptr;
    bool ours = expected.rfind("malformed JSON", 0) == 0;  // a message of ours, not simdjson's
    if (doc_ && !doc_->current_location().get(loc) && loc >= text_ && loc <= text_ + size_) st.offset = loc - text_;
    if (e != INCORRECT_TYPE && !ours) st.message = describe(e);
    if (e == INCORRECT_TYPE && st.offset < size_) st.message += fmt::format(", found '{}'", text_[st.offset]);
    return st;
  }

  // SQLite's JSON functions refuse nesting deeper than 1000 levels (and would fail every query
  // touching such a row's args): such args are stored as a JSON string of their original text.
  static bool too_deep(std::string_view raw) {
    if (std::count_if(raw.begin(), raw.end(), [](char c) { return c == '[' || c == '{'; }) <= 1000) return false;
    int depth = 0, max_depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (in_string) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        max_depth = std::max(max_depth, ++depth);
      } else if (c == ']' || c == '}') {
        --depth;
      }
    }
    return max_depth > 1000;
  }

  void set_args(EventRec& ev, std::string_view raw, size_t idx) {
    // Kept without the whitespace between tokens (the form SQLite's JSON functions write; strings
    // byte for byte): Kineto indents every args object, and those spaces were a fifth of its
    // bytes, ~100 MB of a GB trace's store and of its saved database.
    // Always minified (the event table serves args members as they lie): minified and keyed in
    // one walk where it can (most args), else simdjson's minifier (the scalar one where that
    // refuses the text), the depth check, then the keys.
    if (sink_.args.add_raw_args(raw, ev.args, ev.args_len)) {
      ev.flags |= EventRec::has_args | EventRec::keyed_args;
      return;
    }
    if (minified_.size() < raw.size() + 64) minified_.resize(raw.size() + 64);  // (room past len: SIMD)
    if (size_t n = 0; simdjson::minify(raw.data(), raw.size(), minified_.data(), n) == simdjson::SUCCESS)
      raw = std::string_view(minified_.data(), n);
    else
      raw = minified_ = json_scan::minify(raw);
    std::string quoted;
    if (too_deep(raw)) {
      h_.add("args_too_deep", idx, "args nested deeper than 1000 levels (SQLite's JSON limit): kept as a JSON string");
      quoted.reserve(raw.size() + raw.size() / 8 + 2);
      quoted.push_back('"');
      for (char c : raw) {
        if (c == '"' || c == '\\') quoted.push_back('\\');
        quoted.push_back(c);
      }
      quoted.push_back('"');
      raw = quoted;
    }
    bool keyed;
    ev.args = sink_.args.add_args(raw, ev.args_len, keyed);
    ev.flags |= EventRec::has_args | (keyed ? EventRec::keyed_args : 0);
  }

  // The raw text of any value: simdjson 3.0 has no raw_json() on objects, so we note where the
  // value starts, let the iterator skip it, and read where the iterator stopped.
  ReadStatus span_of(ondemand::value& v, std::string_view& out) {
    const char* start = v.raw_json_token().data();
    ondemand::json_type t;
    if (auto e = v.type().get(t)) return fail(e, "expected a value");
    if (t == ondemand::json_type::object) {
      ondemand::object o;
      if (auto e = v.get_object().get(o)) return fail(e, "expected an object");
      for (auto f : o)
        if (auto e = f.error()) return fail(e, "expected a key and a value");
      return end_span(start, '}', out);
    }
    if (t == ondemand::json_type::array) {
      ondemand::array a;
      if (auto e = v.get_array().get(a)) return fail(e, "expected an array");
      for (auto x : a)
        if (auto e = x.error()) return fail(e, "expected an array element");
      return end_span(start, ']', out);
    }
    out = trim_right(v.raw_json_token());
    return {};
  }
  ReadStatus end_span(const char* start, char close, std::string_view& out) {
    const char* loc = nullptr;
    if (auto e = doc_->current_location().get(loc)) return fail(e, "unexpected end of document");
    const char* end = loc;
    while (end > start && end[-1] != close) --end;
    out = std::string_view(start, end - start);
    return {};
  }

  // A string value as a view: into the text when it has no escapes, else unescaped by simdjson
  // (valid until the next chunk: callers intern or copy it).
  bool string_of(ondemand::value& v, std::string_view& out) {
    std::string_view tok = v.raw_json_token();
    if (tok.size() < 2 || tok[0] != '"') return false;
    size_t n = tok.size();
    while (n > 1 && tok[n - 1] != '"') --n;  // raw_json_token runs to the next structural character
    std::string_view inner = tok.substr(1, n - 2);
    if (inner.find('\\') == std::string_view::npos) {
      out = inner;
      return true;
    }
    return !v.get_string().get(out);
  }

  // A field that should be a string: true for a string; anything else is counted and `out` is its
  // JSON text (empty for null), so the value is kept rather than lost.
  bool text_of(ondemand::value& v, std::string_view& out, size_t idx) {
    if (string_of(v, out)) return true;
    out = {};
    if (span_of(v, out).code != ReadStatus::ok || out == "null") out = {};
    h_.add("not_a_string", idx, "name, cat or ph that is not a string: kept as its JSON text (null as NULL)");
    return false;
  }

  // A number or numeric string as int64; counts repairs. Returns false when absent / not numeric.
  bool int_of(ondemand::value& v, int64_t& out, size_t idx) {
    std::string_view tok = trim_right(v.raw_json_token());
    bool wrapped = false;
    if (!tok.empty() && (tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9'))) {
      if (auto r = parse_int64(tok, &wrapped)) {
        if (*r == kNull) return at_null_marker(idx);
        out = *r;
        if (wrapped)
          h_.add("id_over_int64", idx, "integer ids in [2^63, 2^64) stored as their two's-complement int64 value");
        return true;
      }
      if (auto r = micros_to_ns(tok); r && *r % 1000 == 0) {  // an integral value written as 7.0
        out = *r / 1000;
        return true;
      }
      h_.add("number_not_integer", idx, "a field that should be an integer is not one; stored as NULL");
      return false;
    }
    std::string_view s;
    if (string_of(v, s)) {
      if (auto r = parse_int64(s, &wrapped)) {
        if (*r == kNull) return at_null_marker(idx);
        out = *r;
        h_.add("number_as_string", idx, "numbers written as strings, converted");
        return true;
      }
    }
    if (tok != "null")
      h_.add("number_not_integer", idx, "a field that should be an integer is not one; stored as NULL");
    return false;
  }

  // -2^63 is the store's NULL marker (and 2^63 wraps onto it): such a value cannot be kept.
  bool at_null_marker(size_t idx) {
    h_.add("int64_min", idx, "integers equal to -2^63 (or 2^63, which wraps onto it) stored as NULL");
    return false;
  }

  bool time_of(ondemand::value& v, int64_t& out, size_t idx) {
    std::string_view tok = trim_right(v.raw_json_token());
    if (!tok.empty() && tok[0] != '"') {
      if (auto r = micros_to_ns(tok)) {
        if (*r == kNull) return at_null_marker(idx);
        out = *r;
        return true;
      }
    } else if (std::string_view s; string_of(v, s)) {
      if (auto r = micros_to_ns(s); r && *r != kNull) {
        out = *r;
        h_.add("number_as_string", idx, "numbers written as strings, converted");
        return true;
      }
    }
    if (tok != "null")
      h_.add("bad_time", idx, "ts or dur is not a number of microseconds within range; stored as NULL");
    return false;
  }

  // An id field (event_store.h: Id32); false (`out` as it was) when not an integer.
  bool id_of(ondemand::value& v, Id32& out, size_t idx) {
    int64_t i = kNull;
    if (!int_of(v, i, idx)) return false;
    out = sink_.ids.id(i);
    return true;
  }

  // pid / tid / flow id: an integer, or a label kept as an interned string.
  void scalar_of(ondemand::value& v, Id32& out, uint8_t& flags, uint8_t text_flag, size_t idx) {
    std::string_view tok = v.raw_json_token();
    if (!tok.empty() && tok[0] == '"') {
      std::string_view s;
      if (!string_of(v, s)) return;
      if (auto r = parse_int64(s)) {
        out = sink_.ids.id(*r);        // Kineto 2021 wrote tids as "25738"
        flags &= (uint8_t)~text_flag;  // (a repeated key: the last value wins)
      } else {
        out = sink_.ids.id(sink_.strings.intern(s));
        flags |= text_flag;
      }
      return;
    }
    if (id_of(v, out, idx)) flags &= (uint8_t)~text_flag;
  }

  ReadStatus read_args(ondemand::value& v, EventRec& ev, size_t idx) {
    const char* start = v.raw_json_token().data();
    ondemand::json_type type;
    if (auto e = v.type().get(type)) return fail(e, "expected a value in \"args\"");
    if (type != ondemand::json_type::object) {  // keep whatever JSON it is, whole
      std::string_view raw;
      if (auto st = span_of(v, raw); st.code != ReadStatus::ok) return st;
      if (raw != "null") {
        set_args(ev, raw, idx);
        h_.add("args_not_object", idx, "\"args\" that is not an object: kept as its JSON text, no fields read from it");
      }
      return {};
    }
    ondemand::object o;
    if (auto e = v.get_object().get(o)) return fail(e, "expected an object");
    for (auto field : o) {
      raw_json_string key;
      if (auto e = field.key().get(key)) return fail(e, "expected a key in \"args\"");
      ondemand::value a;
      if (auto e = field.value().get(a)) return fail(e, "expected a value in \"args\"");
      int64_t i = kNull;
      auto known = [&](raw_json_string key) {
        switch (key.raw()[0]) {
          case 'c': return key.unsafe_is_equal("correlation") && (id_of(a, ev.correlation, idx), true);
          case 'E': return key.unsafe_is_equal("External id") && (id_of(a, ev.external_id, idx), true);
          case 'e': return key.unsafe_is_equal("external id") && (id_of(a, ev.external_id, idx), true);
          case 'S': return key.unsafe_is_equal("Sequence number") && (id_of(a, ev.seq, idx), true);
          case 's': return key.unsafe_is_equal("stream") && (id_of(a, ev.stream, idx), true);
          case 'd':
            if (!key.unsafe_is_equal("device")) return false;
            if (int_of(a, i, idx) && i >= INT32_MIN + 1 && i <= INT32_MAX) ev.device = (int32_t)i;
            return true;
          case 'F':
            // The autograd engine records the forward thread's id (> 0) on backward ops; forward
            // ops of some PyTorch versions carry 0.
            if (!key.unsafe_is_equal("Fwd thread id")) return false;
            if (int_of(a, i, idx) && i != 0) ev.flags |= EventRec::backward;
            return true;
          default: return false;
        }
      };
      if (!known(key)) known_unescaped(key, idx, known);
    }
    std::string_view span;
    if (auto st = end_span(start, '}', span); st.code != ReadStatus::ok) return st;
    set_args(ev, span, idx);
    return {};
  }

  // A key no reader knew, written with escapes ("n\u0061me"): the same key unescaped, tried again
  // (json_scan::plain_key), and counted. Keys without a backslash cost a scan to their quote.
  template <class Known>
  void known_unescaped(raw_json_string key, size_t idx, Known& known) {
    const char* k = key.raw();
    const char* end = text_ + size_;
    const char* q = k;
    while (q < end && *q != '"' && *q != '\\') ++q;
    if (q >= end || *q != '\\') return;
    if (auto plain = json_scan::plain_key(k, end)) {
      h_.add("escaped_key", idx, "keys written with escapes (\"n\\u0061me\"): read as the key they spell");
      plain->push_back('"');  // (raw_json_string's form: the text to its closing quote)
      known(raw_json_string(reinterpret_cast<const uint8_t*>(plain->data())));
    }
  }

  Kind kind_for(char ph, uint32_t cat, std::string_view cat_text) {
    if (ph != 'X' && ph != 'B' && ph != 'E' && ph != 0) return normalize_kind(ph, cat_text);
    if (cat == StringPool::kNone) return normalize_kind(ph, {});
    auto& cache = sink_.kind_of_cat;
    if (cat >= cache.size()) cache.resize(cat + 1, -1);
    if (cache[cat] < 0) cache[cat] = (int8_t)normalize_kind('X', cat_text);
    return (Kind)cache[cat];
  }

  ReadStatus read_event(ondemand::object& obj, EventRec& ev, size_t idx) {
    // Known keys seen so far: a repeated one is counted (the last value is kept, as JSON parsers do).
    enum : unsigned { kPh = 1, kPid = 2, kTid = 4, kTs = 8, kDur = 16, kName = 32, kCat = 64, kId = 128, kArgs = 256 };
    unsigned seen = 0;
    auto mark = [&](unsigned bit) {
      if (seen & bit)
        h_.add("duplicate_key", idx, "events repeating a key (\"ts\", \"name\", ...): the last value is kept");
      seen |= bit;
    };
    std::string_view cat_text;
    StringPool::Cache& strings = sink_.strings;
    ReadStatus status{};
    for (auto field : obj) {
      raw_json_string key;
      if (auto e = field.key().get(key)) return fail(e, "expected a key in an event");
      ondemand::value v;
      if (auto e = field.value().get(v)) return fail(e, "expected a value in an event");
      std::string_view s;
      auto known = [&](raw_json_string key) {
        switch (key.raw()[0]) {
          case 'p':
            if (key.unsafe_is_equal("ph")) {
              mark(kPh);
              if (!text_of(v, s, idx) || s.size() != 1)
                h_.add("bad_ph", idx, "\"ph\" that is not a one-character string: its first character kept");
              if (!s.empty()) ev.ph = s[0];
              return true;
            }
            if (!key.unsafe_is_equal("pid")) return false;
            mark(kPid);
            scalar_of(v, ev.pid, ev.flags, EventRec::pid_text, idx);
            return true;
          case 't':
            if (key.unsafe_is_equal("ts")) {
              mark(kTs);
              time_of(v, ev.ts, idx);
              return true;
            }
            if (!key.unsafe_is_equal("tid")) return false;
            mark(kTid);
            scalar_of(v, ev.tid, ev.flags, EventRec::tid_text, idx);
            return true;
          case 'd':
            if (!key.unsafe_is_equal("dur")) return false;
            mark(kDur), time_of(v, ev.dur, idx);
            return true;
          case 'n':
            if (!key.unsafe_is_equal("name")) return false;
            mark(kName);
            if (text_of(v, s, idx) || !s.empty()) ev.name = strings.intern(s);
            return true;
          case 'c':
            if (!key.unsafe_is_equal("cat")) return false;
            mark(kCat);
            if (text_of(v, s, idx) || !s.empty()) ev.cat = strings.intern(s), cat_text = s;
            return true;
          case 'i':
            if (!key.unsafe_is_equal("id")) return false;
            mark(kId), scalar_of(v, ev.flow_id, ev.flags, EventRec::flow_text, idx);
            return true;
          case 'a':
            if (!key.unsafe_is_equal("args")) return false;
            mark(kArgs);
            status = read_args(v, ev, idx);
            return true;
          default: return false;
        }
      };
      if (!known(key)) known_unescaped(key, idx, known);
      if (status.code != ReadStatus::ok) return status;
    }
    if (!(seen & kPh)) h_.add("missing_ph", idx, "events without a \"ph\" phase: kind taken from \"cat\" alone");
    if (!(seen & kName)) h_.add("missing_name", idx, "events without a \"name\": name is NULL");
    if (!(seen & kTs) && ev.ph != 'M')
      h_.add("missing_ts", idx, "events (other than 'M' metadata) without a \"ts\": ts is NULL, not in the tree");
    if (ev.dur != kNull && ev.dur < 0)
      h_.add("negative_dur", idx, "events with dur < 0: kept as recorded; they nest as zero-length");
    if (int64_t end; ev.ts != kNull && ev.dur != kNull && __builtin_add_overflow(ev.ts, ev.dur, &end))
      h_.add("end_overflow", idx, kEndOverflow);
    ev.kind = kind_for(ev.ph, ev.cat, cat_text);
    return {};
  }

  const char* text_;
  size_t size_;
  ChunkSink& sink_;
  Health& h_;
  ondemand::document* doc_ = nullptr;
  std::string minified_;  // set_args' buffer
};

}  // namespace

ReadStatus read_event_chunk(const char* text, size_t size, size_t capacity, ChunkSink& sink) {
  thread_local ondemand::parser parser;
  // simdjson sizes its buffers (~5 bytes per byte of text) to exactly the text, so every chunk a
  // few bytes longer than all before it would reallocate them, fresh pages for the kernel to zero
  // each time: grow with room, as TextBuffer does (chunks are chunk_bytes and one event more).
  if (parser.capacity() < size)
    if (error_code e = parser.allocate(size + size / 8, parser.max_depth())) return {ReadStatus::error, describe(e), 0};
  ondemand::document doc;
  error_code e = parser.iterate(text, size, capacity).get(doc);
  if (e) return {ReadStatus::error, describe(e), 0};
  Reader r(text, size, sink);
  return r.run(doc);
}

}  // namespace tlsql::TLSQL_READER_NS
