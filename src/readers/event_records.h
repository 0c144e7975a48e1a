// Rows as records, for the readers that translate another profiler's records (src/readers/
// rocprof_json, src/readers/nsys_sqlite): their scan writes each event as a fixed-size record (the
// integers: times in ns, pid, tid, the args members a row takes a column from) followed by its
// category, name and args text, and the parse threads fill rows straight from them with the
// Kineto parser's rules (src/readers/row_rules.h). Before this, those readers wrote Kineto JSON
// text that the Kineto parser then parsed again: ~900 bytes of text per rocprofv3 kernel, written,
// checked and parsed, were most of their load time.
//
// The args text is the JSON the row stores (then minified and keyed as every args text is), so a
// row's args are the bytes the Kineto text gave; a Writer given the store's key dictionary writes
// it keyed already (encode_keys), the same bytes the store would make of it. A record whose strings the
// Kineto parser would repair (invalid UTF-8, NUL: json_check.h) or whose args give a column other
// than through arg() is parsed as Kineto text instead, so that the repair and its health counts
// stay in one place.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/readers/reader.h"
#include "src/readers/row_rules.h"

namespace tlsql::event_records {

// A record's fixed part (copied in and out with memcpy: records lie unaligned in a chunk),
// followed by its category, name and args text.
struct Head {
  static constexpr int kArgKeys = 6;  // row_rules::ArgKey's members that give a column
  int64_t ts = 0, dur = 0, pid = 0, tid = 0;
  int64_t arg[kArgKeys] = {};  // by ArgKey - 1
  uint32_t cat_len = 0, name_len = 0, args_len = 0;
  uint32_t name_key = 0;  // Writer::begin's: the parser interns a name once per key
  uint16_t present = 0;   // event_records.cpp's Present bits: which fields were written
  char ph = 0;
};

// Events written one field at a time into chunks of about `chunk_bytes`, each handed to the
// pipeline's emit with its row count. An event: begin(), its fields, then (optionally)
// open_args() and its members, then end().
class Writer {
 public:
  Writer(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare, size_t chunk_bytes);

  size_t rows() const { return rows_; }  // rows written so far: the next row's index in the trace

  // `ph`: the phase, one character ("X", "i"). `name_key` > 0 names the name for the parser, which
  // then interns it once per key rather than once per row (a kernel name runs to KBs): the same
  // key must always come with the same name, and one that is clean().
  // `within`: a text the record's name and string args are cut from (an NVTX range's text: its op
  // name, shapes, the text itself), checked once; strings inside it are not checked again.
  void begin(std::string_view ph, std::string_view cat, std::string_view name, uint32_t name_key = 0,
             std::string_view within = {});
  // Whether `s` is text the Kineto parser keeps as it is (no invalid UTF-8, no NUL): a string
  // that is not makes its record parsed as Kineto text (see above).
  static bool clean(std::string_view s);
  void ts(int64_t ns);
  void dur(int64_t ns);
  void pid(int64_t v);
  void tid(int64_t v);
  void open_args();
  // An args member's key: a string literal, and only that (consteval), so that the Writer can know
  // a key by its address alone. A reader passes a few keys millions of times; each is escaped,
  // looked up as a column and made a token once.
  struct Literal {
    template <size_t N>
    consteval Literal(const char (&s)[N]) : text(s, N - 1) {}  // (implicit: arg("device", v))
    std::string_view text;
  };
  void arg(Literal k, int64_t v);
  void text_arg(Literal k, std::string_view v);
  // `json` must be one valid JSON value (the caller checked it). `flat`: the caller wrote it,
  // clean(json) is true and it holds no object and no whitespace outside strings (a string escaped
  // once for many rows, an array of numbers).
  void json_arg(Literal k, std::string_view json, bool flat = false);
  // A kernel's grid or block as Kineto writes it: [x,y,z].
  void dims_arg(Literal k, int64_t x, int64_t y, int64_t z);
  // Args written as the store keeps them, keys as tokens of `keys` (args_text::encode_key: the
  // cache of the thread this Writer runs on, over the dictionary of the store its records go to;
  // a key's token is the store's, whichever thread parses the record), so that the parser stores
  // them as they are rather than walking them again (minify, keys). A record whose args take a
  // value the Writer cannot vouch for (a json_arg not flat) or that is parsed as text keeps
  // the JSON text, and is stored as any other.
  void encode_keys(StringPool::Cache* keys) {
    keys_ = keys;
    key_cache_.clear(), next_key_ = 0;  // (keys made before hold another dictionary's tokens, or none)
  }
  // Closes the event (and its args object when `args`).
  void end(bool args = true);
  void flush();
  bool stopped() const { return stopped_; }

 private:
  // A key as its args text has it: `"k":`, as stored (encode_keys), and the row column it gives.
  struct Key {
    const char* data;  // the literal's address
    std::string text, stored;
    row_rules::ArgKey column;
  };
  const Key& put_key(Literal k);
  const Key& key_of(Literal k);
  void check(std::string_view s);  // as text when `s` is a string the Kineto parser would repair
  void unkey();
  // The chunk being written, in the buffer it is handed on in (flush() copies nothing).
  class Body {
   public:
    using value_type = char;  // (std::back_inserter)
    size_t size() const { return n_; }
    char* data() { return buf_.data(); }
    void reserve(size_t n) {
      if (n + TextBuffer::kPadding > buf_.capacity()) grow(n);
    }
    void append(const char* p, size_t k) {
      reserve(n_ + k);
      std::memcpy(buf_.data() + n_, p, k);
      n_ += k;
    }
    Body& operator+=(std::string_view s) { return append(s.data(), s.size()), *this; }
    Body& operator+=(char c) { return push_back(c), *this; }
    void push_back(char c) {
      reserve(n_ + 1);
      buf_.data()[n_++] = c;
    }
    void resize(size_t n) {  // (growing: zeros, as std::string's)
      reserve(n);
      if (n > n_) std::memset(buf_.data() + n_, 0, n - n_);
      n_ = n;
    }
    void clear() { n_ = 0; }
    // The text written, as a chunk's; writing goes on in `next` (a spare buffer, or an empty one).
    TextBuffer take(TextBuffer&& next) {
      buf_.resize(n_);
      TextBuffer out = std::move(buf_);
      buf_ = std::move(next);
      n_ = 0;
      return out;
    }

   private:
    void grow(size_t n);
    TextBuffer buf_;
    size_t n_ = 0;
  };

  const std::function<bool(Chunk&&)>& emit_;
  const std::function<TextBuffer()>& spare_;
  size_t chunk_bytes_;
  Body body_;
  Head head_;                    // the open record's, written at end()
  size_t at_ = 0, args_at_ = 0;  // its offset in body_, and its args text's
  size_t rows_ = 0, first_ = 0;
  bool first_arg_ = true, stopped_ = false;
  StringPool::Cache* keys_ = nullptr;
  std::string_view checked_;  // begin()'s `within`, when clean
  std::vector<Key> key_cache_;
  size_t next_key_ = 0;  // key_of's first guess
  // encode_keys: whether the open record's args are written keyed (its keys as tokens), and
  // whether a value holds keys that are not tokens (a json_arg not flat). A record stored as JSON
  // after all (unkeyed_, or parsed as text) has its keys written back as text at end(): few
  // records (a repair, a json_arg of an object), and the others are written once rather than in
  // both forms.
  bool direct_ = false, unkeyed_ = false;
  std::string unkeyed_text_;
};

// The parser of chunks a Writer made, for one thread; `path` names the file in messages.
std::unique_ptr<ChunkParser> parser(const RowSink& sink, const std::string& path);

}  // namespace tlsql::event_records
