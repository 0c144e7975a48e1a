#include "src/readers/event_records.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "src/args_text.h"
#include "src/readers/kineto_json/kineto_json.h"
#include "src/readers/kineto_text.h"
#include "src/readers/row_rules.h"

namespace tlsql::event_records {

namespace {

using row_rules::ArgKey;

constexpr int kArgKeys = Head::kArgKeys;
constexpr size_t kMaxChunkBytes = 1u << 20;
static_assert(kArgKeys == (int)ArgKey::count - 1);

enum Present : uint16_t {
  kTs = 1,
  kDur = 2,
  kPid = 4,
  kTid = 8,
  kArgs = 16,
  kAsText = 32,      // parsed as Kineto text (see the header)
  kArg0 = 64,        // kArg0 << (ArgKey - 1): that member was written
  kStored = 0x8000,  // the args text is as the store keeps it (Writer::encode_keys)
};
static_assert(kArg0 << (kArgKeys - 1) < kStored, "Present bits fit in 16");

}  // namespace

Writer::Writer(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare, size_t chunk_bytes)
    // Records are 3-7x denser than the Kineto text that chunk_bytes sizes (~130 bytes an Nsight
    // row, ~900 of Kineto text for a rocprofv3 kernel), and each chunk in flight is memory held
    // beside the rows: at most 1 MB of records a chunk, thousands of rows still. body_ holds a
    // chunk and one record more without growing past it (doubling would hold 2x).
    : emit_(emit), spare_(spare), chunk_bytes_(std::min(chunk_bytes, kMaxChunkBytes)) {
  body_.reserve(chunk_bytes_ + (64u << 10));
}

// Strings the Kineto parser would repair (json_check.h): invalid UTF-8 and NUL (written \u0000).
bool Writer::clean(std::string_view s) {
  // Most text is ASCII: one pass that vectorizes says so (a call into simdjson's validator per
  // name and per text member was 4% of an Nsight load).
  unsigned char any = 0, zero = 0;
  for (char c : s) any |= (unsigned char)c, zero |= (unsigned char)(c == 0);
  if (zero) return false;
  return any < 0x80 || simdjson::validate_utf8(s.data(), s.size());
}

void Writer::check(std::string_view s) {
  if (head_.present & kAsText) return;
  const auto at = (uintptr_t)s.data(), from = (uintptr_t)checked_.data();
  if (at >= from && at + s.size() <= from + checked_.size()) return;  // (inside a text found clean)
  if (!clean(s)) head_.present |= kAsText;
}

void Writer::begin(std::string_view ph, std::string_view cat, std::string_view name, uint32_t name_key,
                   std::string_view within) {
  at_ = body_.size();
  head_ = Head();
  checked_ = {};
  if (!within.empty() && clean(within)) checked_ = within;
  head_.ph = ph.empty() ? 0 : ph[0];
  if (ph.size() != 1) head_.present |= kAsText;  // (the Kineto parser counts it)
  head_.cat_len = (uint32_t)cat.size(), head_.name_len = (uint32_t)name.size();
  head_.name_key = name_key;
  body_.resize(at_ + sizeof(Head));
  body_ += cat;
  body_ += name;
  check(cat);
  if (!name_key) check(name);
  args_at_ = body_.size();
}

void Writer::ts(int64_t ns) { head_.ts = ns, head_.present |= kTs; }
void Writer::dur(int64_t ns) { head_.dur = ns, head_.present |= kDur; }
void Writer::pid(int64_t v) { head_.pid = v, head_.present |= kPid; }
void Writer::tid(int64_t v) { head_.tid = v, head_.present |= kTid; }

void Writer::open_args() {
  body_ += '{';
  first_arg_ = true;
  direct_ = keys_ != nullptr, unkeyed_ = false;
}

// Keys come in the same order row after row: the key after the last one found is tried first.
const Writer::Key& Writer::key_of(Literal k) {
  if (next_key_ < key_cache_.size() && key_cache_[next_key_].data == k.text.data()) return key_cache_[next_key_++];
  for (size_t i = 0; i < key_cache_.size(); ++i)
    if (key_cache_[i].data == k.text.data()) return next_key_ = i + 1, key_cache_[i];
  next_key_ = key_cache_.size() + 1;
  Key& e = key_cache_.emplace_back();
  e.data = k.text.data(), e.column = row_rules::arg_key(k.text);
  kineto_text::escape(e.text, k.text);
  e.text += ':';
  if (keys_) args_text::encode_key(e.text, *keys_, e.stored);
  return e;
}

const Writer::Key& Writer::put_key(Literal k) {
  const Key& e = key_of(k);
  if (!first_arg_) body_ += ',';
  body_ += direct_ ? e.stored : e.text;
  first_arg_ = false;
  return e;
}

void Writer::arg(Literal k, int64_t v) {
  const Key& e = put_key(k);
  kineto_text::integer(body_, v);
  if (e.column != ArgKey::none)
    head_.arg[(int)e.column - 1] = v, head_.present |= (uint16_t)(kArg0 << ((int)e.column - 1));
}

void Writer::text_arg(Literal k, std::string_view v) {
  const Key& e = put_key(k);
  kineto_text::escape(body_, v);
  check(v);
  if (e.column != ArgKey::none) head_.present |= kAsText;  // a column from a string: its rules
}

void Writer::json_arg(Literal k, std::string_view json, bool flat) {
  const Key& e = put_key(k);
  body_ += json;
  unkeyed_ = unkeyed_ || !flat;  // (its keys, if any, are not tokens)
  if (!flat) check(json);
  if (e.column != ArgKey::none) head_.present |= kAsText;
}

void Writer::dims_arg(Literal k, int64_t x, int64_t y, int64_t z) {
  const Key& e = put_key(k);
  body_ += '[';
  kineto_text::integer(body_, x);
  body_ += ',';
  kineto_text::integer(body_, y);
  body_ += ',';
  kineto_text::integer(body_, z);
  body_ += ']';
  if (e.column != ArgKey::none) head_.present |= kAsText;  // (as json_arg)
}

void Writer::end(bool args) {
  if (args) body_ += '}';
  if (args && direct_) {
    if (unkeyed_ || (head_.present & kAsText))
      unkey();
    else
      head_.present |= kStored;
  }
  direct_ = false;
  head_.args_len = (uint32_t)(body_.size() - args_at_);
  if (args) head_.present |= kArgs;
  std::memcpy(body_.data() + at_, &head_, sizeof head_);
  ++rows_;
  if (body_.size() >= chunk_bytes_) flush();
}

// The open record's args as JSON: each key written as its token (put_key) written as its text.
// A token is the only place the byte kToken can be: every value written is JSON (a string's
// control characters escaped), and a token ends at its last digit (args_text.h), so the first
// key whose token the bytes there start with is the key written there.
void Writer::unkey() {
  unkeyed_text_.assign(body_.data() + args_at_, body_.size() - args_at_);
  body_.resize(args_at_);
  const std::string_view text = unkeyed_text_;
  for (size_t i = 0; i < text.size();) {
    const size_t at = text.find(args_text::kToken, i);
    body_.append(text.data() + i, std::min(at, text.size()) - i);
    if (at == std::string_view::npos) break;
    auto e = std::find_if(key_cache_.begin(), key_cache_.end(), [&](const Key& k) {
      return !k.stored.empty() && k.stored[0] == args_text::kToken && text.substr(at).starts_with(k.stored);
    });
    if (e == key_cache_.end()) throw std::logic_error("event_records::Writer: a token no key of this writer has");
    body_ += e->text;
    i = at + e->stored.size();
  }
}

void Writer::Body::grow(size_t n) {
  const size_t size = n_;
  buf_.resize(std::max(n, 2 * buf_.capacity()));  // (keeps the text; a chunk's size after the first)
  n_ = size;
}

void Writer::flush() {
  if (stopped_) body_.clear(), first_ = rows_;  // cancelled: the error that cancelled it is reported
  if (rows_ == first_) return;
  const size_t rows = rows_ - first_;
  Chunk c{body_.take(spare_()), 0, rows};
  body_.reserve(chunk_bytes_ + (64u << 10));
  first_ = rows_;
  stopped_ = !emit_(std::move(c));
}

namespace {

class Parser : public ChunkParser {
 public:
  Parser(const RowSink& sink, const std::string& path) : sink_(sink), path_(path) {}

  void parse(const Chunk& chunk) override {
    const char* p = chunk.text.data();
    Health& health = sink_.health;
    for (size_t i = 0; i < chunk.rows; ++i) {
      const size_t idx = chunk.first_row + i;
      Head h;
      std::memcpy(&h, p, sizeof h);
      p += sizeof h;
      const std::string_view cat(p, h.cat_len), name(p + h.cat_len, h.name_len),
          args(p + h.cat_len + h.name_len, h.args_len);
      p += h.cat_len + h.name_len + h.args_len;
      if (h.present & kAsText) {
        as_text(h, cat, name, args, idx);
        continue;
      }
      EventRec& ev = *new (sink_.rows.slot(idx)) EventRec();
      ev.ph = h.ph;
      ev.cat = sink_.strings.intern(cat);
      if (h.name_key) {
        if (h.name_key >= name_ids_.size()) name_ids_.resize(h.name_key + 1, StringPool::kNone);
        uint32_t& id = name_ids_[h.name_key];
        if (id == StringPool::kNone) id = sink_.strings.intern(name);
        ev.name = id;
      } else {
        ev.name = sink_.strings.intern(name);
      }
      if (h.present & kTs) row_rules::set_time(h.ts, ev.ts, health, idx);
      if (h.present & kDur) row_rules::set_time(h.dur, ev.dur, health, idx);
      if (h.present & kPid) row_rules::set_id(h.pid, ev.pid, sink_.ids, health, idx);
      if (h.present & kTid) row_rules::set_id(h.tid, ev.tid, sink_.ids, health, idx);
      if (h.present & kArgs) {
        for (int k = 0; k < kArgKeys; ++k)
          if (h.present & (kArg0 << k)) row_rules::set_arg(ev, ArgKey(k + 1), h.arg[k], sink_.ids, health, idx);
        if (h.present & kStored) {
          ev.args = sink_.args.add(args), ev.args_len = h.args_len;
          ev.flags |= EventRec::has_args | EventRec::keyed_args;
        } else {
          row_rules::store_args(sink_.args, ev, args, health, idx, scratch_);
        }
      }
      row_rules::check_row(ev, true, true, h.present & kTs, health, idx);
      ev.kind = row_rules::kind_for(kind_of_cat_, ev.ph, ev.cat, cat);
    }
  }

 private:
  // The record as the Kineto event it stands for, parsed by the Kineto parser: its repairs and
  // their counts are made there.
  void as_text(const Head& h, std::string_view cat, std::string_view name, std::string_view args, size_t idx) {
    std::string& t = text_;
    t.assign("[{\"ph\":");
    kineto_text::escape(t, std::string_view(&h.ph, h.ph ? 1 : 0));
    t += ",\"cat\":";
    kineto_text::escape(t, cat);
    t += ",\"name\":";
    kineto_text::escape(t, name);
    auto field = [&](uint16_t bit, const char* key, int64_t v, bool time) {
      if (!(h.present & bit)) return;
      t += key;
      time ? kineto_text::micros(t, v) : kineto_text::integer(t, v);
    };
    field(kTs, ",\"ts\":", h.ts, true);
    field(kDur, ",\"dur\":", h.dur, true);
    field(kPid, ",\"pid\":", h.pid, false);
    field(kTid, ",\"tid\":", h.tid, false);
    if (h.present & kArgs) t += ",\"args\":", t += args;
    t += "}]";
    Chunk c{TextBuffer(t.size()), 0, 1, idx};
    std::memcpy(c.text.data(), t.data(), t.size());
    if (!kineto_) kineto_ = kineto_json::event_parser(sink_, path_);
    kineto_->parse(c);
  }

  RowSink sink_;
  std::string path_;
  std::vector<int8_t> kind_of_cat_;  // category string id -> Kind (row_rules::kind_for)
  std::vector<uint32_t> name_ids_;   // Head::name_key -> the name's string id
  std::string scratch_, text_;
  std::unique_ptr<ChunkParser> kineto_;  // for records parsed as text
};

}  // namespace

std::unique_ptr<ChunkParser> parser(const RowSink& sink, const std::string& path) {
  return std::make_unique<Parser>(sink, path);
}

}  // namespace tlsql::event_records
