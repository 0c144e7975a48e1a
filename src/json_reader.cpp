// Built twice (see CMakeLists.txt) with TLSQL_READER_NS naming the CPU target.
#include <simdjson.h>

#include <cstring>
#include <fmt/format.h>

#include "decimal.h"
#include "json_reader.h"
#include "kind.h"

namespace tlsql::TLSQL_READER_NS {

using namespace simdjson;
using ondemand::raw_json_string;

namespace {

std::string describe(error_code e) {
  switch (e) {
    case TAPE_ERROR: return "malformed JSON: expected ',' ':' or a closing bracket";
    case INCOMPLETE_ARRAY_OR_OBJECT: return "document ends inside an array or object (truncated file?)";
    case UNCLOSED_STRING: return "unclosed string (truncated file?)";
    case NUMBER_ERROR: return "malformed number";
    case T_ATOM_ERROR: case F_ATOM_ERROR: case N_ATOM_ERROR: return "invalid literal: expected a value";
    case EMPTY: return "empty file: expected a JSON object or array";
    case INCORRECT_TYPE: return "unexpected value type";
    case DEPTH_ERROR: return "nesting too deep";
    default: return error_message(e);
  }
}

class Reader {
 public:
  Reader(const char* text, size_t size, ParsedTrace& out, Health& h) : text_(text), size_(size), out_(out), h_(h) {}

  ReadStatus run(ondemand::document& doc) {
    doc_ = &doc;
    ondemand::json_type t;
    if (auto e = doc.type().get(t)) return fail(e, "expected a JSON object or array");
    if (t == ondemand::json_type::array) {
      out_.bare_array = true;
      ondemand::array arr;
      if (auto e = doc.get_array().get(arr)) return fail(e, "expected an array of events");
      if (auto st = read_events(arr); st.code != ReadStatus::ok) return st;
    } else if (t == ondemand::json_type::object) {
      ondemand::object top;
      if (auto e = doc.get_object().get(top)) return fail(e, "expected a JSON object");
      bool have_events = false;
      out_.metadata = "{";
      for (auto field : top) {
        raw_json_string key;
        if (auto e = field.key().get(key)) return fail(e, "expected a key");
        ondemand::value v;
        if (auto e = field.value().get(v)) return fail(e, "expected a value");
        if (key.unsafe_is_equal("traceEvents")) {
          ondemand::array arr;
          if (auto e = v.get_array().get(arr))
            return fail(e, e == INCORRECT_TYPE ? "not a trace: \"traceEvents\" is not an array" : "expected an array of events");
          have_events = true;
          if (auto st = read_events(arr); st.code != ReadStatus::ok) return st;
        } else {
          std::string_view raw;
          if (auto st = span_of(v, raw); st.code != ReadStatus::ok) return st;
          std::string_view k(key.raw(), std::strchr(key.raw(), '"') - key.raw());
          if (out_.metadata.size() > 1) out_.metadata += ',';
          out_.metadata += '"';
          out_.metadata.append(k);
          out_.metadata += "\":";
          out_.metadata.append(raw);
        }
      }
      out_.metadata += '}';
      if (!have_events) return {ReadStatus::error, "not a trace: no \"traceEvents\" array in the top-level object", 0};
    } else {
      return {ReadStatus::error, "not a trace: expected a JSON object or array at the top level", 0};
    }
    const char* loc = nullptr;
    if (!doc.current_location().get(loc)) return {ReadStatus::error, "unexpected content after the end of the JSON document", (size_t)(loc - text_)};
    if (out_.bare_array && !out_.events.empty() && objects_ == 0)
      return {ReadStatus::error, "not a trace: the array holds no event objects", 0};
    return {};
  }

 private:
  ReadStatus fail(error_code e, const std::string& expected) {
    ReadStatus st{ReadStatus::error, expected, size_};
    const char* loc = nullptr;
    bool truncated = e == INCOMPLETE_ARRAY_OR_OBJECT || e == UNCLOSED_STRING;
    if (!truncated && doc_ && !doc_->current_location().get(loc) && loc >= text_ && loc <= text_ + size_) st.offset = loc - text_;
    if (e != INCORRECT_TYPE) st.message = describe(e);
    if (e == INCORRECT_TYPE && st.offset < size_) st.message += fmt::format(", found '{}'", text_[st.offset]);
    return st;
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
    out = v.raw_json_token();
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

  // A string value as a view: into the text when it has no escapes, else unescaped into the arena.
  bool string_of(ondemand::value& v, std::string_view& out) {
    std::string_view tok = v.raw_json_token();
    if (tok.size() >= 2 && tok[0] == '"') {
      // raw_json_token ends at the next structural character, so trim trailing spaces.
      size_t n = tok.size();
      while (n > 1 && tok[n - 1] != '"') --n;
      std::string_view inner = tok.substr(1, n - 2);
      if (inner.find('\\') == std::string_view::npos) {
        out = inner;
        return true;
      }
      std::string_view u;
      if (v.get_string().get(u)) return false;
      out = out_.arena.emplace_back(u);
      return true;
    }
    return false;
  }

  // A number or numeric string as int64; counts repairs. Returns false when absent / not numeric.
  bool int_of(ondemand::value& v, int64_t& out, size_t idx) {
    std::string_view tok = v.raw_json_token();
    while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t')) tok.remove_suffix(1);
    bool wrapped = false;
    if (!tok.empty() && (tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9'))) {
      if (auto r = parse_int64(tok, &wrapped)) {
        out = *r;
        if (wrapped) h_.add("id_over_int64", idx, "integer ids in [2^63, 2^64) stored as their two's-complement int64 value");
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
        out = *r;
        h_.add("number_as_string", idx, "numbers written as strings, converted");
        return true;
      }
    }
    if (tok != "null") h_.add("number_not_integer", idx, "a field that should be an integer is not one; stored as NULL");
    return false;
  }

  bool time_of(ondemand::value& v, int64_t& out, size_t idx) {
    std::string_view tok = v.raw_json_token();
    while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t')) tok.remove_suffix(1);
    if (!tok.empty() && tok[0] != '"') {
      if (auto r = micros_to_ns(tok)) {
        out = *r;
        return true;
      }
    } else if (std::string_view s; string_of(v, s)) {
      if (auto r = micros_to_ns(s)) {
        out = *r;
        h_.add("number_as_string", idx, "numbers written as strings, converted");
        return true;
      }
    }
    if (tok != "null") h_.add("bad_time", idx, "ts or dur is not a number of microseconds within range; stored as NULL");
    return false;
  }

  void scalar_of(ondemand::value& v, Scalar& out, size_t idx) {
    std::string_view tok = v.raw_json_token();
    if (!tok.empty() && tok[0] == '"') {
      std::string_view s;
      if (!string_of(v, s)) return;
      if (auto r = parse_int64(s)) {
        out.type = Scalar::integer, out.i = *r;  // Kineto 2021 wrote tids as "25738"
      } else {
        out.type = Scalar::text, out.s = s;
      }
      return;
    }
    int64_t i;
    if (int_of(v, i, idx)) out.type = Scalar::integer, out.i = i;
  }

  ReadStatus read_args(ondemand::value& v, Event& ev, size_t idx) {
    const char* start = v.raw_json_token().data();
    ondemand::object o;
    if (v.get_object().get(o)) {
      ev.args = v.raw_json_token();  // not an object: keep whatever JSON text it is
      ev.has_args = true;
      return {};
    }
    for (auto field : o) {
      raw_json_string key;
      if (auto e = field.key().get(key)) return fail(e, "expected a key in \"args\"");
      ondemand::value a;
      if (auto e = field.value().get(a)) return fail(e, "expected a value in \"args\"");
      const char* k = key.raw();
      switch (k[0]) {
        case 'c': if (key.unsafe_is_equal("correlation")) int_of(a, ev.correlation, idx); break;
        case 'E': if (key.unsafe_is_equal("External id")) int_of(a, ev.external_id, idx); break;
        case 'e': if (key.unsafe_is_equal("external id")) int_of(a, ev.external_id, idx); break;
        case 'S': if (key.unsafe_is_equal("Sequence number")) int_of(a, ev.seq, idx); break;
        case 's': if (key.unsafe_is_equal("stream")) int_of(a, ev.stream, idx); break;
        case 'd': if (key.unsafe_is_equal("device")) int_of(a, ev.device, idx); break;
        case 'F':
          // The autograd engine records the forward thread's id (> 0) on backward ops; forward
          // ops of some PyTorch versions carry 0.
          if (int64_t fwd_tid = 0; key.unsafe_is_equal("Fwd thread id") && int_of(a, fwd_tid, idx)) ev.backward = fwd_tid != 0;
          break;
        default: break;
      }
    }
    std::string_view span;
    if (auto st = end_span(start, '}', span); st.code != ReadStatus::ok) return st;
    ev.args = span;
    ev.has_args = true;
    return {};
  }

  ReadStatus read_events(ondemand::array& arr) {
    std::vector<Event>& events = out_.events;
    for (auto element : arr) {
      size_t idx = events.size();
      Event& ev = events.emplace_back();
      ondemand::value el;
      if (auto e = element.get(el)) return fail(e, "expected an event");
      ondemand::object obj;
      if (auto e = el.get_object().get(obj)) {
        if (e != INCORRECT_TYPE) return fail(e, "expected an event object");
        std::string_view raw;
        if (auto st = span_of(el, raw); st.code != ReadStatus::ok) return st;
        ev.args = raw, ev.has_args = true;  // kept verbatim so nothing is lost
        h_.add("element_not_object", idx, "traceEvents elements that are not objects: kept as kind 'other', text in args");
        continue;
      }
      ++objects_;
      bool has_ph = false;
      for (auto field : obj) {
        raw_json_string key;
        if (auto e = field.key().get(key)) return fail(e, "expected a key in an event");
        ondemand::value v;
        if (auto e = field.value().get(v)) return fail(e, "expected a value in an event");
        const char* k = key.raw();
        switch (k[0]) {
          case 'p':
            if (key.unsafe_is_equal("ph")) {
              std::string_view s;
              if (string_of(v, s) && !s.empty()) ev.ph = s[0], has_ph = true;
            } else if (key.unsafe_is_equal("pid")) {
              scalar_of(v, ev.pid, idx);
            }
            break;
          case 't':
            if (key.unsafe_is_equal("ts")) time_of(v, ev.ts, idx);
            else if (key.unsafe_is_equal("tid")) scalar_of(v, ev.tid, idx);
            break;
          case 'd':
            if (key.unsafe_is_equal("dur")) time_of(v, ev.dur, idx);
            break;
          case 'n':
            if (key.unsafe_is_equal("name")) ev.has_name = string_of(v, ev.name);
            break;
          case 'c':
            if (key.unsafe_is_equal("cat")) ev.has_cat = string_of(v, ev.cat);
            break;
          case 'i':
            if (key.unsafe_is_equal("id")) scalar_of(v, ev.flow_id, idx);
            break;
          case 'a':
            if (key.unsafe_is_equal("args"))
              if (auto st = read_args(v, ev, idx); st.code != ReadStatus::ok) return st;
            break;
          default: break;
        }
      }
      if (!has_ph) h_.add("missing_ph", idx, "events without a \"ph\" phase: kind taken from \"cat\" alone");
      ev.kind = normalise_kind(ev.ph, ev.cat);
    }
    return {};
  }

  const char* text_;
  size_t size_;
  ParsedTrace& out_;
  Health& h_;
  ondemand::document* doc_ = nullptr;
  size_t objects_ = 0;
};

}  // namespace

ReadStatus read_trace_json(const char* text, size_t size, size_t capacity, ParsedTrace& out, Health& health) {
  ondemand::parser parser;
  if (parser.allocate(std::max<size_t>(size, 64))) return {ReadStatus::error, "out of memory for the JSON parser", 0};
  size_t first = 0;
  while (first < size && (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' || text[first] == '\t')) ++first;
  if (first < size && text[first] != '{' && text[first] != '[')
    return {ReadStatus::error, fmt::format("not JSON: expected '{{' or '[', found '{}'", text[first]), first};
  ondemand::document doc;
  error_code e = parser.iterate(text, size, capacity).get(doc);
  if (e == UTF8_ERROR || e == UNESCAPED_CHARS) return {ReadStatus::needs_repair, describe(e), 0};
  if (e) return {ReadStatus::error, describe(e), e == EMPTY ? 0 : size};
  Reader r(text, size, out, health);
  ReadStatus st = r.run(doc);
  return st;
}

}  // namespace tlsql::TLSQL_READER_NS
