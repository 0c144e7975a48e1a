#include "udf/perf/perf_cache.h"

#include <fmt/format.h>
#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "src/sql_names.h"
#include "src/sqlite_util.h"

#ifndef TLSQL_PERF_RULES
#error "TLSQL_PERF_RULES: the hash of the perf sources, set by CMakeLists.txt"
#endif

namespace tlsql {

namespace {

// The arrays are stored as bytes in the machine's order, which the rules string names: a file
// written on a machine of the other order is recomputed, not misread.
const std::string kRules = std::string(TLSQL_PERF_RULES) + (std::endian::native == std::endian::little ? "/le" : "/be");

// Deflates what it is given as it goes (ISA-L, level 1): the table is never copied into one
// buffer (a 1 GB trace's is 110 MB, 6 MB deflated). Small values are gathered into 256 KiB batches;
// an array larger than what is pending is deflated from where it lies. (A save packs the table at
// its peak, beside the pass's arrays: with two 1 MiB buffers a 24 MB Nsight export's save peaked
// ~1 MiB higher.)
class Writer {
 public:
  Writer() : level_(ISAL_DEF_LVL1_DEFAULT), buf_(1 << 18) {
    isal_deflate_init(&z_);
    z_.level = 1, z_.level_buf = level_.data(), z_.level_buf_size = (uint32_t)level_.size();
  }
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    feed(&v, sizeof v);
  }
  template <class T>
  void array(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    feed(v.data(), v.size() * sizeof(T));
  }
  void text(const std::string& s) {
    put<uint64_t>(s.size());
    feed(s.data(), s.size());
  }
  // The deflated bytes, and how many went in.
  std::string finish(uint64_t& raw_size) {
    deflate(pending_.data(), pending_.size(), true);
    raw_size = raw_;
    return std::move(out_);
  }

 private:
  static constexpr size_t kBatch = 1 << 18;
  void feed(const void* p, size_t n) {
    raw_ += n;
    if (pending_.size() + n < kBatch) {
      pending_.append((const char*)p, n);
      return;
    }
    deflate(pending_.data(), pending_.size(), false);
    pending_.clear();
    deflate(p, n, false);
  }
  // Deflates n bytes at p (and `end` closes the stream), at most 1 GB a call (ISA-L counts in 32 bits).
  void deflate(const void* p, size_t n, bool end) {
    for (size_t at = 0; at < n || end;) {
      const size_t part = std::min<size_t>(n - at, size_t{1} << 30);
      z_.next_in = (uint8_t*)p + at, z_.avail_in = (uint32_t)part;
      at += part;
      z_.end_of_stream = end && at == n;
      do {
        z_.next_out = buf_.data(), z_.avail_out = (uint32_t)buf_.size();
        if (isal_deflate(&z_) != COMP_OK) throw std::runtime_error("perf table: deflate failed");
        out_.append((const char*)buf_.data(), buf_.size() - z_.avail_out);
      } while (z_.avail_in > 0 || (z_.end_of_stream && z_.internal_state.state != ZSTATE_END));
      if (z_.end_of_stream) break;
    }
  }
  isal_zstream z_;
  std::vector<uint8_t> level_, buf_;
  std::string pending_, out_;
  uint64_t raw_ = 0;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class T>
  bool get(T& v) {
    if (in_.size() - at_ < sizeof v) return false;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  template <class T>
  bool array(std::vector<T>& v, uint64_t expect, bool or_empty = false) {
    uint64_t n;
    if (!get(n) || (n != expect && !(or_empty && n == 0)) || (in_.size() - at_) / sizeof(T) < n) return false;
    v.resize(n);
    if (n > 0) std::memcpy(v.data(), in_.data() + at_, n * sizeof(T));  // (an empty array's data() may be null)
    at_ += n * sizeof(T);
    return true;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

constexpr uint32_t kChunk = 1u << 30;  // ISA-L counts bytes in 32 bits

bool inflate_bytes(const void* in, size_t size, std::string& out) {
  inflate_state s;
  isal_inflate_init(&s);
  size_t fed = 0, made = 0;
  while (true) {
    if (s.avail_in == 0 && fed < size) {
      const size_t n = std::min<size_t>(kChunk, size - fed);
      s.next_in = (uint8_t*)in + fed, s.avail_in = (uint32_t)n, fed += n;
    }
    const size_t room = std::min<size_t>(kChunk, out.size() - made);
    s.next_out = (uint8_t*)out.data() + made, s.avail_out = (uint32_t)room;
    if (isal_inflate(&s) != ISAL_DECOMP_OK) return false;
    made += room - s.avail_out;
    if (s.block_state == ISAL_BLOCK_FINISH) return made == out.size() && s.avail_in == 0 && fed == size;
    if (room == s.avail_out && s.avail_in == 0 && fed == size) return false;  // no progress: cut short
    if (made == out.size() && s.avail_out == 0 && room == 0) return false;    // more than it said
  }
}

}  // namespace

PackedPerfTable pack_perf_table(const PerfTable& t) {
  PackedPerfTable p;
  if (!t.uids.empty() || !t.loop_uid.empty()) return p;  // uids not dense, or parent links that loop
  Writer w;
  w.put<uint64_t>(t.rows);
  w.put<int64_t>(t.first_uid);
  w.array(t.gpu_ns), w.array(t.model), w.array(t.flags);
  w.put<uint64_t>(t.trace_runs.size());
  for (auto [first, trace] : t.trace_runs) w.put(first), w.put(trace);
  w.array(t.device);
  w.array(t.gpu_classes), w.array(t.marker);
  w.put<uint64_t>(t.models.size());
  for (const PerfTable::Model& m : t.models) {
    w.put(m.flops), w.put(m.bytes), w.put<uint8_t>(m.has_flops), w.put<uint8_t>(m.has_bytes);
    w.put<uint8_t>(m.matrix), w.put(m.dtype);
  }
  w.put<uint64_t>(t.dtypes.size());
  for (const std::string& d : t.dtypes) w.text(d);
  w.put<uint64_t>(t.traces.size());
  for (const auto& [id, s] : t.traces) {
    w.put(id);
    for (int64_t k : s.kinds) w.put(k);
    w.put<uint8_t>(s.timed), w.put(s.first_start), w.put<uint8_t>(s.last_end.has_value());
    w.put(s.last_end.value_or(0));
    w.put<uint64_t>(s.steps.size());
    for (int64_t step : s.steps) w.put(step);
  }
  p.first_uid = t.first_uid, p.rows = t.rows;
  p.data = w.finish(p.raw_size);
  return p;
}

namespace {

// Every index checked: model into models, dtype into dtypes, marker into rows.
bool deserialize(std::string_view bytes, uint64_t rows, int64_t first_uid, PerfTable& t) {
  Reader r(bytes);
  uint64_t n, count;
  if (!r.get(n) || n != rows || !r.get(t.first_uid) || t.first_uid != first_uid) return false;
  t.rows = n;
  if (!r.array(t.gpu_ns, n) || !r.array(t.model, n) || !r.array(t.flags, n) || !r.get(count) || count > n) return false;
  // The trace runs: the first at row 0 (when there are rows), each after the one before, within the rows.
  t.trace_runs.resize(count);
  for (size_t k = 0; k < count; ++k) {
    auto& [first, trace] = t.trace_runs[k];
    if (!r.get(first) || !r.get(trace) || first >= n || (k == 0 ? first != 0 : first <= t.trace_runs[k - 1].first))
      return false;
  }
  if ((n > 0 && count == 0) || !r.array(t.device, n) || !r.array(t.gpu_classes, n) || !r.array(t.marker, n, true) ||
      !r.get(count) || count > bytes.size())
    return false;
  t.models.resize(count);
  for (PerfTable::Model& m : t.models) {
    uint8_t f, b, x;
    if (!r.get(m.flops) || !r.get(m.bytes) || !r.get(f) || !r.get(b) || !r.get(x) || !r.get(m.dtype)) return false;
    m.has_flops = f, m.has_bytes = b, m.matrix = x;
  }
  if (!r.get(count) || count == 0 || count > bytes.size()) return false;
  t.dtypes.assign(count, "");
  for (std::string& d : t.dtypes) {
    uint64_t len;
    if (!r.get(len) || len > bytes.size()) return false;
    d.resize(len);
    for (char& c : d)
      if (!r.get(c)) return false;
  }
  if (!r.get(count) || count > bytes.size()) return false;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t id;
    if (!r.get(id)) return false;
    TraceStats& s = t.traces[id];
    for (int64_t& k : s.kinds)
      if (!r.get(k)) return false;
    uint8_t timed, has_end;
    int64_t end;
    uint64_t steps;
    if (!r.get(timed) || !r.get(s.first_start) || !r.get(has_end) || !r.get(end) || !r.get(steps) ||
        steps > bytes.size())
      return false;
    s.timed = timed;
    if (has_end) s.last_end = end;
    for (uint64_t k = 0; k < steps; ++k) {
      int64_t step;
      if (!r.get(step)) return false;
      s.steps.insert(step);
    }
  }
  if (!r.done()) return false;
  for (uint32_t m : t.model)
    if (m != PerfTable::kNone && m >= t.models.size()) return false;
  for (const PerfTable::Model& m : t.models)
    if (m.dtype >= t.dtypes.size()) return false;
  for (uint32_t m : t.marker)
    if (m != PerfTable::kNone && m >= n) return false;
  // Markers that loop (only a hand-made row holds them) would keep marker_path walking: each
  // row's chain is followed until it ends or meets a row already known to end.
  std::vector<uint8_t> state(t.marker.size(), 0);  // 0 not seen, 1 on the chain now, 2 ends
  std::vector<uint32_t> chain;
  for (size_t r = 0; r < t.marker.size(); ++r) {
    chain.clear();
    uint32_t m = (uint32_t)r;
    for (; m != PerfTable::kNone && state[m] == 0; m = t.marker[m]) state[m] = 1, chain.push_back(m);
    if (m != PerfTable::kNone && state[m] == 1) return false;
    for (uint32_t c : chain) state[c] = 2;
  }
  for (uint8_t f : t.flags)
    if (f & PerfTable::looped) return false;  // (a table with loops is never stored)
  return true;
}

int64_t pragma(sqlite3* db, const std::string& schema, const char* name) {
  Statement s(db, fmt::format("PRAGMA {}.{}", schema_sql(db, schema), name));
  return s.step() ? sqlite3_column_int64(s.get(), 0) : -1;
}
int64_t schema_version(sqlite3* db, const std::string& schema) { return pragma(db, schema, "schema_version"); }

}  // namespace

void store_perf_table(sqlite3* db, const std::string& schema, const PackedPerfTable& p) {
  if (p.data.empty() || p.data.size() > 900'000'000) return;  // not packed, or over SQLite's default blob limit
  const std::string q = schema_sql(db, schema);
  std::string sql = fmt::format(
      "DROP TABLE IF EXISTS {0}.tlsql_perf;\n"
      "CREATE TABLE {0}.tlsql_perf(rules TEXT, schema_version INTEGER, first_uid INTEGER, rows INTEGER, "
      "raw_size INTEGER, data BLOB);\n",
      q);
  for (const char* table : {"event", "launch_link"})
    for (const char* op : {"INSERT", "UPDATE", "DELETE"})
      sql += fmt::format(
          "DROP TRIGGER IF EXISTS {0}.tlsql_perf_{1}_{2};\n"
          "CREATE TRIGGER {0}.tlsql_perf_{1}_{2} AFTER {3} ON {1} BEGIN DELETE FROM tlsql_perf; END;\n",
          q, table,
          op[0] == 'I'   ? "insert"
          : op[0] == 'U' ? "update"
                         : "delete",
          op);
  exec_sql(db, sql);
  Statement ins(db, fmt::format("INSERT INTO {}.tlsql_perf VALUES (?, ?, ?, ?, ?, ?)", q));
  sqlite3_bind_text(ins.get(), 1, kRules.c_str(), -1, SQLITE_STATIC);
  sqlite3_bind_int64(ins.get(), 2, schema_version(db, schema));  // after the CREATEs above
  sqlite3_bind_int64(ins.get(), 3, p.first_uid);
  sqlite3_bind_int64(ins.get(), 4, (int64_t)p.rows);
  sqlite3_bind_int64(ins.get(), 5, (int64_t)p.raw_size);
  sqlite3_bind_blob64(ins.get(), 6, p.data.data(), p.data.size(), SQLITE_STATIC);
  ins.step();
}

std::shared_ptr<PerfTable> load_perf_table(sqlite3* db, const std::string& schema) {
  sqlite3_stmt* s = nullptr;
  const std::string sql = fmt::format(
      "SELECT p.rules, p.schema_version, p.first_uid, p.rows, p.raw_size, p.data, e.lo, e.hi "
      "FROM {0}.tlsql_perf p, (SELECT min(uid) AS lo, max(uid) AS hi FROM {0}.event) e",
      schema_sql(db, schema));
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {  // no such table: not stored
    sqlite3_finalize(s);
    return nullptr;
  }
  std::shared_ptr<PerfTable> t;
  const int64_t version = schema_version(db, schema);
  if (sqlite3_step(s) == SQLITE_ROW) {
    auto text = [&](int c) {
      const unsigned char* v = sqlite3_column_text(s, c);
      return v ? std::string((const char*)v) : std::string();
    };
    const int64_t first = sqlite3_column_int64(s, 2), rows = sqlite3_column_int64(s, 3),
                  raw = sqlite3_column_int64(s, 4), hi = sqlite3_column_int64(s, 7);
    // Sizes a file cannot hold are refused before anything is allocated: a row of the event
    // table takes more than 4 bytes of the file, a row of the table at most 80 bytes.
    const int64_t file_bytes = pragma(db, schema, "page_count") * pragma(db, schema, "page_size");
    int64_t span;
    // The event table's uids are first .. first + rows - 1 (dense, as saved), and nothing changed.
    if (text(0) == kRules && sqlite3_column_int64(s, 1) == version && rows > 0 && rows <= file_bytes / 4 && raw > 0 &&
        raw <= rows * 80 + (1 << 20) && sqlite3_column_type(s, 6) == SQLITE_INTEGER &&
        sqlite3_column_int64(s, 6) == first && !__builtin_sub_overflow(hi, first, &span) && span == rows - 1) {
      std::string bytes((size_t)raw, '\0');
      const void* blob = sqlite3_column_blob(s, 5);
      const size_t size = (size_t)sqlite3_column_bytes(s, 5);
      t = std::make_shared<PerfTable>();
      if (!blob || !inflate_bytes(blob, size, bytes) || !deserialize(bytes, (uint64_t)rows, first, *t)) t.reset();
    }
  }
  sqlite3_finalize(s);
  return t;
}

}  // namespace tlsql
