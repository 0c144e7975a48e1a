#include "src/readers/kineto_json/json_reader.h"

#include <emmintrin.h>
#include <simdjson.h>

#include <new>
#include <utility>

#include "src/args_text.h"
#include "src/decimal.h"
#include "src/json_check.h"
#include "src/json_scan.h"
#include "src/kind.h"
#include "src/readers/row_rules.h"

namespace tlsql {

namespace {

// A value as the reader takes a field from it: its token (a scalar as written, an object's or an
// array's whole text) and, for a string, its content (unescaped).
struct Token {
  std::string_view tok, str;
  bool is_string = false;
  size_t end = 0;  // the index past the value
};

// Reads the events of one chunk in one walk of its text. Trusted text is valid JSON (check_json()
// proved it, repair_json() mended what it called repairable), so the walk needs no error paths:
// it only finds where each key and value starts and ends, and reads the values the row keeps.
// (Given other text it still reads nothing past the text's end: an error or rows, never a crash.)
// Checked (issue 51: the bytes walked once), it also checks every byte it passes as check_json
// would, with json_check.h's rules (the grammar between values, each string, each scalar, each
// value it skips; UTF-8 for the whole text at once), and gives up (`unchecked`) on anything
// check_json would not call valid: the caller then checks the text and reads it trusted. So a
// checked read's rows are a trusted read's, and its errors are check_json's.
// (It took simdjson's on-demand API before, whose own pass over the chunk and per-value
// navigation were about a fifth of the parse's CPU on top of the check's walk: issue 51.)
class Reader {
 public:
  Reader(const char* text, size_t size, ChunkSink& sink, std::string (&buffers)[2],
         std::vector<args_text::Member>& members, bool checked)
      : d_(text),
        n_(size),
        sink_(sink),
        h_(sink.health),
        buf_(buffers[0]),
        cat_buf_(buffers[1]),
        members_(members),
        checked_(checked) {}

  ReadStatus run() {
    if (checked_ && !simdjson::validate_utf8(d_, n_)) return unchecked();
    size_t p = ws(0);
    if (p >= n_ || d_[p] != '[')
      return checked_ ? unchecked() : ReadStatus{ReadStatus::error, "expected an array of events", p};
    p = ws(p + 1);
    size_t idx = sink_.first_row;
    const size_t last = sink_.first_row + sink_.events;
    if (p < n_ && d_[p] != ']')
      for (;;) {
        // The scanner counted the commas between elements: one more element means a missing comma.
        if (idx >= last) return {ReadStatus::error, "malformed JSON: expected ',' between events", p};
        if (p >= n_) return {ReadStatus::error, "malformed JSON: expected an event", p};
        EventRec& ev = *new (sink_.rows.slot(idx)) EventRec();
        if (d_[p] == '{') {
          p = read_event(p, ev, idx);
          if (refused_) return unchecked();
        } else {
          if (checked_) return unchecked();  // (rare: a trusted read keeps it whole)
          const size_t end = value_end(p);
          set_args(ev, {d_ + p, end - p}, idx);  // kept whole (minified) so nothing is lost
          h_.add("element_not_object", idx,
                 "traceEvents elements that are not objects: kept as kind 'other', text in args");
          p = end;
        }
        ++idx;
        p = ws(p);
        if (p >= n_ || d_[p] != ',') break;  // (the array's ']')
        p = ws(p + 1);
      }
    if (checked_) {  // the array's ']' and nothing after it
      if (p >= n_ || d_[p] != ']' || ws(p + 1) != n_) return unchecked();
      sink_.events = idx - sink_.first_row;
      return {};
    }
    if (idx != last) return {ReadStatus::error, "malformed JSON: expected an event", p};
    return {};
  }

 private:
  ReadStatus unchecked() { return {ReadStatus::unchecked, {}, 0}; }
  // A checked read met text it does not vouch for: it reads on to the event's end harmlessly (as a
  // trusted read of any text does) and stops there.
  size_t refuse() {
    refused_ = true;
    return n_;
  }

  size_t ws(size_t p) const {
    while (p < n_ && json_scan::is_ws(d_[p])) ++p;
    return p;
  }
  size_t value_end(size_t p) {
    if (checked_) {
      if (p < n_ && d_[p] == '"') {
        bool escaped = false;
        const size_t close = string_close(p, escaped);
        return close < n_ ? close + 1 : n_;
      }
      if (p < n_ && d_[p] != '{' && d_[p] != '[') return scalar_end(p);
      bool repair = false;
      const size_t e = json_check::value_end(d_, n_, p, repair);
      return e == json_check::npos || repair ? refuse() : e;
    }
    const size_t e = json_scan::skip_value(d_, n_, p);
    return e == json_scan::npos ? n_ : e;
  }
  // p at a string's opening quote: the index of its closing quote (n_ when the text ends first);
  // `escaped` set when the string holds a backslash.
  size_t string_close(size_t p, bool& escaped) {
    if (checked_) {
      bool repair = false;
      const size_t e = json_check::string_end(d_, n_, p + 1, repair, escaped);
      return e == json_check::npos || repair ? refuse() : e - 1;
    }
    const size_t e = json_scan::skip_string(d_, n_, p, &escaped);
    return e == json_scan::npos ? n_ : e - 1;
  }

  // p at a number or a literal: the index past it (white space, ',', '}' or ']' ends it in valid
  // JSON). Checked, json_check::scalar_end finds it and checks it; trusted, scalar_span, 16 bytes a
  // step: ts and ids run to 16-20 characters.
  size_t scalar_end(size_t p) {
    if (checked_) {
      const size_t e = json_check::scalar_end(d_, n_, p);
      return e == json_check::npos ? refuse() : e;
    }
    return scalar_span(p);
  }
  size_t scalar_span(size_t p) const {
    const __m128i space = _mm_set1_epi8(' '), comma = _mm_set1_epi8(','), brace = _mm_set1_epi8('}');
    for (; p + 16 <= n_; p += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d_ + p));
      // (white space is all <= ' ', and no other such byte is outside strings; ']' | 0x20 is '}')
      const __m128i stop =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(v, space), space), _mm_cmpeq_epi8(v, comma)),
                       _mm_cmpeq_epi8(_mm_or_si128(v, space), brace));
      if (const int m = _mm_movemask_epi8(stop)) return p + (size_t)__builtin_ctz(m);
    }
    while (p < n_ && !json_scan::is_ws(d_[p]) && d_[p] != ',' && d_[p] != '}' && d_[p] != ']') ++p;
    return p;
  }

  // The value at p as a Token; a string's content unescaped into `buf` when it has escapes
  // (valid until `buf` is used again). Checked, an empty token past the text's end once the read
  // gives up: the text there is not to be stored (a name or args would take the rest of the chunk).
  Token token_at(size_t p, std::string& buf) {
    Token t = token_of(p, buf);
    if (refused_) return Token{{}, {}, false, n_};
    return t;
  }
  Token token_of(size_t p, std::string& buf) {
    Token t;
    if (p >= n_) return t.end = n_, t;
    const char c = d_[p];
    if (c == '"') {
      bool escaped = false;
      const size_t close = string_close(p, escaped);
      t.is_string = true;
      if (close >= n_) return t.tok = {d_ + p, n_ - p}, t.end = n_, t;
      t.tok = {d_ + p, close + 1 - p};
      t.str = {d_ + p + 1, close - p - 1};
      t.end = close + 1;
      if (escaped) {
        buf.clear();
        json_scan::unescape(d_ + p + 1, d_ + n_, buf);
        t.str = buf;
      }
      return t;
    }
    t.end = c == '{' || c == '[' ? value_end(p) : scalar_end(p);
    t.tok = {d_ + p, t.end - p};
    return t;
  }

  void set_args(EventRec& ev, std::string_view raw, size_t idx) {
    row_rules::store_args(sink_.args, ev, raw, h_, idx, minified_);
  }

  // A field that should be a string: true for a string; anything else is counted and `out` is its
  // JSON text (empty for null), so the value is kept rather than lost.
  bool text_of(const Token& t, std::string_view& out, size_t idx) {
    if (t.is_string) return out = t.str, true;
    out = t.tok == "null" ? std::string_view() : t.tok;
    h_.add("not_a_string", idx, "name, cat or ph that is not a string: kept as its JSON text (null as NULL)");
    return false;
  }

  static bool is_number_start(std::string_view tok) {
    return !tok.empty() && (tok[0] == '-' || (tok[0] >= '0' && tok[0] <= '9'));
  }
  // A number or numeric string as int64; counts repairs. Returns false when absent / not numeric.
  bool int_of(const Token& t, int64_t& out, size_t idx) {
    bool wrapped = false;
    if (is_number_start(t.tok)) {
      if (auto r = parse_int64(t.tok, &wrapped)) {
        if (*r == kNull) return at_null_marker(idx);
        out = *r;
        if (wrapped)
          h_.add("id_over_int64", idx, "integer ids in [2^63, 2^64) stored as their two's-complement int64 value");
        return true;
      }
      if (auto r = micros_to_ns(t.tok); r && *r % 1000 == 0) {  // an integral value written as 7.0
        out = *r / 1000;
        return true;
      }
      h_.add("number_not_integer", idx, "a field that should be an integer is not one; stored as NULL");
      return false;
    }
    if (t.is_string) {
      if (auto r = parse_int64(t.str, &wrapped)) {
        if (*r == kNull) return at_null_marker(idx);
        out = *r;
        h_.add("number_as_string", idx, "numbers written as strings, converted");
        return true;
      }
    }
    if (t.tok != "null")
      h_.add("number_not_integer", idx, "a field that should be an integer is not one; stored as NULL");
    return false;
  }

  bool at_null_marker(size_t idx) { return row_rules::at_null_marker(h_, idx); }

  bool time_of(const Token& t, int64_t& out, size_t idx) {
    if (!t.is_string) {
      if (auto r = micros_to_ns(t.tok)) {
        if (*r == kNull) return at_null_marker(idx);
        out = *r;
        return true;
      }
    } else if (auto r = micros_to_ns(t.str); r && *r != kNull) {
      out = *r;
      h_.add("number_as_string", idx, "numbers written as strings, converted");
      return true;
    }
    if (t.tok != "null") row_rules::bad_time(h_, idx);
    return false;
  }

  // pid / tid / flow id: an integer, or a label kept as an interned string.
  void scalar_of(const Token& t, Id32& out, uint8_t& flags, uint8_t text_flag, size_t idx) {
    if (t.is_string) {
      if (auto r = parse_int64(t.str)) {
        out = sink_.ids.id(*r);        // Kineto 2021 wrote tids as "25738"
        flags &= (uint8_t)~text_flag;  // (a repeated key: the last value wins)
      } else {
        out = sink_.ids.id(sink_.strings.intern(t.str));
        flags |= text_flag;
      }
      return;
    }
    if (int64_t i = kNull; int_of(t, i, idx)) {
      out = sink_.ids.id(i);
      flags &= (uint8_t)~text_flag;
    }
  }

  // "args": an object is minified and keyed in one walk that also finds its members
  // (args_text::minify_encode_object), and the members a row takes a column from are read where
  // that walk found them; where the walk cannot decide (more than 1000 brackets: the depth rule
  // must look) its members are found by json_scan and the text stored by store_args. Anything
  // else is kept whole as its JSON text. Returns the index past the value.
  size_t read_args(size_t p, EventRec& ev, size_t idx) {
    if (p >= n_) return n_;
    if (d_[p] != '{') {
      const Token t = token_at(p, buf_);
      if (refused_) return n_;
      if (t.tok != "null") {
        set_args(ev, t.tok, idx);
        h_.add("args_not_object", idx, "\"args\" that is not an object: kept as its JSON text, no fields read from it");
      }
      return t.end;
    }
    encoded_.clear();
    members_.clear();
    size_t end;
    if (const size_t len =
            args_text::minify_encode_object(d_ + p, d_ + n_, sink_.args.keys(), encoded_, members_, checked_)) {
      end = p + len;
      row_rules::store_encoded_args(sink_.args, ev, encoded_);
    } else if (checked_) {
      return refuse();
    } else {
      end = value_end(p);
      members_.clear();
      json_scan::for_each_member({d_ + p, end - p}, [&](std::string_view key, std::string_view value) {
        members_.push_back({key, value.data(), key.find('\\') != std::string_view::npos});
      });
      set_args(ev, {d_ + p, end - p}, idx);
    }
    const bool checked = std::exchange(checked_, false);  // (the args walk checked the members' values)
    for (const args_text::Member& m : members_) {
      auto known = [&](std::string_view key) {
        row_rules::ArgKey k;
        if (key.empty() || key != row_rules::arg_key_named(key[0], k)) return false;
        if (int64_t i = kNull; int_of(token_at((size_t)(m.value - d_), buf_), i, idx))
          row_rules::set_arg(ev, k, i, sink_.ids, h_, idx);
        return true;
      };
      if (!known(m.key) && m.escaped_key) known_unescaped(m.key, idx, known);
    }
    checked_ = checked;
    return end;
  }

  // A key no reader knew, written with escapes ("n\u0061me"): the same key unescaped, tried again
  // (json_scan::plain_key), and counted.
  template <class Known>
  void known_unescaped(std::string_view key, size_t idx, Known& known) {
    if (auto plain = json_scan::plain_key(key.data(), d_ + n_)) {
      h_.add("escaped_key", idx, "keys written with escapes (\"n\\u0061me\"): read as the key they spell");
      known(std::string_view(*plain));
    }
  }

  // p at an event's '{': reads its members into `ev`; returns the index past its '}'.
  size_t read_event(size_t p, EventRec& ev, size_t idx) {
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
    p = ws(p + 1);
    while (p < n_ && d_[p] == '"') {
      bool escaped = false;
      const size_t close = string_close(p, escaped);
      const std::string_view key(d_ + p + 1, close - p - 1);
      const size_t colon = ws(close + 1);
      if (colon >= n_ || d_[colon] != ':') {  // (only text check_json refuses: never read past it)
        if (checked_) refuse();
        break;
      }
      const size_t at = ws(colon + 1);
      size_t end = json_scan::npos;
      // The index past the value when `key` is one the row takes, else npos.
      auto known = [&](std::string_view key) -> size_t {
        if (key.empty()) return json_scan::npos;
        std::string_view s;
        switch (key[0]) {
          case 'p':
            if (key == "ph") {
              mark(kPh);
              const Token t = token_at(at, buf_);
              if (!text_of(t, s, idx) || s.size() != 1)
                h_.add("bad_ph", idx, "\"ph\" that is not a one-character string: its first character kept");
              if (!s.empty()) ev.ph = s[0];
              return t.end;
            }
            if (key != "pid") return json_scan::npos;
            mark(kPid);
            return read_scalar(at, ev.pid, ev.flags, EventRec::pid_text, idx);
          case 't':
            if (key == "ts") {
              mark(kTs);
              return read_time(at, ev.ts, idx);
            }
            if (key != "tid") return json_scan::npos;
            mark(kTid);
            return read_scalar(at, ev.tid, ev.flags, EventRec::tid_text, idx);
          case 'd':
            if (key != "dur") return json_scan::npos;
            mark(kDur);
            return read_time(at, ev.dur, idx);
          case 'n': {
            if (key != "name") return json_scan::npos;
            mark(kName);
            const Token t = token_at(at, buf_);
            if (text_of(t, s, idx) || !s.empty()) ev.name = strings.intern(s);
            return t.end;
          }
          case 'c': {
            if (key != "cat") return json_scan::npos;
            mark(kCat);
            const Token t = token_at(at, cat_buf_);  // (its own buffer: cat_text is read at the end)
            if (text_of(t, s, idx) || !s.empty()) ev.cat = strings.intern(s), cat_text = s;
            return t.end;
          }
          case 'i':
            if (key != "id") return json_scan::npos;
            mark(kId);
            return read_scalar(at, ev.flow_id, ev.flags, EventRec::flow_text, idx);
          case 'a':
            if (key != "args") return json_scan::npos;
            mark(kArgs);
            return read_args(at, ev, idx);
          default: return json_scan::npos;
        }
      };
      end = known(key);
      if (end == json_scan::npos && escaped)
        if (auto plain = json_scan::plain_key(key.data(), d_ + n_)) {
          h_.add("escaped_key", idx, "keys written with escapes (\"n\\u0061me\"): read as the key they spell");
          end = known(*plain);
        }
      if (end == json_scan::npos) end = value_end(at);
      p = ws(end);
      if (p < n_ && d_[p] == ',') {
        p = ws(p + 1);
        if (checked_ && (p >= n_ || d_[p] != '"')) refuse();  // (a key must follow)
      } else if (checked_ && (p >= n_ || d_[p] != '}')) {
        refuse();  // (the object's end must)
      }
    }
    if (checked_ && (p >= n_ || d_[p] != '}')) refuse();
    row_rules::check_row(ev, seen & kPh, seen & kName, seen & kTs, h_, idx);
    ev.kind = row_rules::kind_for(sink_.kind_of_cat, ev.ph, ev.cat, cat_text);
    return p < n_ ? p + 1 : n_;  // (past the '}')
  }

  size_t read_time(size_t p, int64_t& out, size_t idx) {
    const Token t = token_at(p, buf_);
    time_of(t, out, idx);
    return t.end;
  }
  size_t read_scalar(size_t p, Id32& out, uint8_t& flags, uint8_t text_flag, size_t idx) {
    const Token t = token_at(p, buf_);
    scalar_of(t, out, flags, text_flag, idx);
    return t.end;
  }

  const char* d_;
  size_t n_;
  ChunkSink& sink_;
  Health& h_;
  std::string& buf_;      // a string value's unescaped content
  std::string& cat_buf_;  // the same for "cat", kept until the event's kind is decided
  std::vector<args_text::Member>& members_;
  std::string minified_, encoded_;  // store_args' and minify_encode_object's buffers
  bool checked_;
  bool refused_ = false;  // checked: text check_json would not call valid was met
};

}  // namespace

ReadStatus read_event_chunk(const char* text, size_t size, ChunkSink& sink, bool checked) {
  thread_local std::string buffers[2];
  thread_local std::vector<args_text::Member> members;
  Reader r(text, size, sink, buffers, members, checked);
  ReadStatus s = r.run();
  if (checked && s.code == ReadStatus::error) s = {ReadStatus::unchecked, {}, 0};  // (check_json's error is the one)
  return s;
}

}  // namespace tlsql
