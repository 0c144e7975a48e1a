// Built twice (see CMakeLists.txt) with TLSQL_READER_NS naming the CPU target.
#include "src/readers/kineto_json/json_reader.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "src/args_text.h"
#include "src/decimal.h"
#include "src/json_scan.h"
#include "src/kind.h"
#include "src/readers/row_rules.h"

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

  void set_args(EventRec& ev, std::string_view raw, size_t idx) {
    row_rules::store_args(sink_.args, ev, raw, h_, idx, minified_);
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
    const std::string_view tok = trim_right(v.raw_json_token());
    std::string_view s;
    const bool str = !is_number_start(tok) && string_of(v, s);
    return int_of_text(tok, str ? &s : nullptr, out, idx);
  }
  static bool is_number_start(std::string_view tok) {
    return !tok.empty() && (tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9'));
  }
  // int_of of a value given as its token (`tok`, as it lies without the whitespace after it) and,
  // when it is a string, its content (`str`, unescaped).
  bool int_of_text(std::string_view tok, const std::string_view* str, int64_t& out, size_t idx) {
    bool wrapped = false;
    if (is_number_start(tok)) {
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
    if (str) {
      if (auto r = parse_int64(*str, &wrapped)) {
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

  bool at_null_marker(size_t idx) { return row_rules::at_null_marker(h_, idx); }

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
    if (tok != "null") row_rules::bad_time(h_, idx);
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
    if (type == ondemand::json_type::object && read_args_walked(start, ev, idx)) return {};
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
      auto known = [&](raw_json_string key) {
        // (the first byte picks the one key it may be: no string is built per member)
        row_rules::ArgKey k;
        std::string_view name = row_rules::arg_key_named(key.raw()[0], k);
        if (name.empty() || !key.unsafe_is_equal(name)) return false;
        if (int64_t i = kNull; int_of(a, i, idx)) row_rules::set_arg(ev, k, i, sink_.ids, h_, idx);
        return true;
      };
      if (!known(key)) known_unescaped(key, idx, known);
    }
    std::string_view span;
    if (auto st = end_span(start, '}', span); st.code != ReadStatus::ok) return st;
    set_args(ev, span, idx);
    return {};
  }

  // An args object read in the one walk that minifies and keys it (args_text::
  // minify_encode_object), which finds its members too: the known keys' integers are read from
  // where that walk found their values, and simdjson skips the object unread (iterating its
  // members here was most of the reader's time in args). False, `ev` unchanged, where that walk
  // cannot decide or a member needs the iteration's path: a key with an escape (known_unescaped),
  // a known key whose value is an object, an array or a string with an escape.
  bool read_args_walked(const char* start, EventRec& ev, size_t idx) {
    encoded_.clear();
    members_.clear();
    if (!args_text::minify_encode_object(start, text_ + size_, sink_.args.keys(), encoded_, members_)) return false;
    for (args_text::Member& m : members_) {
      if (m.escaped_key) return false;
      row_rules::ArgKey k;
      if (m.key.empty() || m.key != row_rules::arg_key_named(m.key[0], k)) {
        m.value = nullptr;  // (not a key a column takes)
        continue;
      }
      const char* v = m.value;
      if (*v == '{' || *v == '[') return false;
      if (*v == '"') {
        const char* close = v + 1;
        while (*close != '"' && *close != '\\') ++close;  // (the text is valid JSON: a quote comes)
        if (*close == '\\') return false;
      }
    }
    for (const args_text::Member& m : members_) {
      if (!m.value) continue;
      row_rules::ArgKey k;
      row_rules::arg_key_named(m.key[0], k);
      const char* v = m.value;
      std::string_view tok, str;
      if (*v == '"') {
        const char* close = v + 1;
        while (*close != '"') ++close;
        str = std::string_view(v + 1, (size_t)(close - v - 1));
        tok = std::string_view(v, (size_t)(close + 1 - v));
      } else {
        const char* e = v;
        while (*e != ',' && *e != '}' && !json_scan::is_ws(*e)) ++e;
        tok = std::string_view(v, (size_t)(e - v));
      }
      if (int64_t i = kNull; int_of_text(tok, *v == '"' ? &str : nullptr, i, idx))
        row_rules::set_arg(ev, k, i, sink_.ids, h_, idx);
    }
    row_rules::store_encoded_args(sink_.args, ev, encoded_);
    return true;
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
    row_rules::check_row(ev, seen & kPh, seen & kName, seen & kTs, h_, idx);
    ev.kind = row_rules::kind_for(sink_.kind_of_cat, ev.ph, ev.cat, cat_text);
    return {};
  }

  const char* text_;
  size_t size_;
  ChunkSink& sink_;
  Health& h_;
  ondemand::document* doc_ = nullptr;
  std::string minified_;  // set_args' buffer
  std::string encoded_;   // read_args_walked's buffers
  std::vector<args_text::Member> members_;
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
