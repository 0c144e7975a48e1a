#include "src/readers/rocprof_json/rocprof_json.h"

#include <fmt/format.h>
#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/json_check.h"
#include "src/json_scan.h"
#include "src/parallel.h"
#include "src/readers/emit_nvtx.h"
#include "src/readers/event_records.h"
#include "src/readers/kineto_text.h"

namespace tlsql::rocprof_json {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// rocprofv3 writes every integer field, but a hand-edited or foreign file may not: a field that is
// absent or not an integer reads as `fallback`.
int64_t int_value(element v, int64_t fallback = kNull) {
  if (int64_t i; !v.get_int64().get(i)) return i;
  if (uint64_t u; !v.get_uint64().get(u)) return (int64_t)u;  // ids past 2^63: their two's complement
  return fallback;
}
// A time in ns, which rocprofv3 writes unsigned: one past INT64_MAX (no clock's: 292 years of ns)
// reads as absent and sets `out_of_range`, not wrapped to a negative time as an id is.
int64_t time_value(element v, bool& out_of_range) {
  if (int64_t i; !v.get_int64().get(i)) return i;
  if (uint64_t u; !v.get_uint64().get(u)) out_of_range = true;
  return kNull;
}
int64_t int_of(element e, std::string_view key, int64_t fallback = kNull) {
  element v;
  return e[key].get(v) ? fallback : int_value(v, fallback);
}
int64_t time_of(element e, std::string_view key, bool& out_of_range) {
  element v;
  return e[key].get(v) ? kNull : time_value(v, out_of_range);
}
// A `{"handle": N}` field (agent, queue, stream ids).
int64_t handle_of(element e, std::string_view key) {
  element v;
  return e[key].get(v) ? kNull : int_of(v, "handle");
}

// The members of an object named by `keys`, found in one walk of it (the first of a key wins, as
// simdjson's lookup by key does): a dispatch's dozen fields were a dozen walks of its members.
// Nothing is found in a value that is not an object.
template <size_t N>
class Members {
 public:
  Members() = default;  // none found
  Members(element e, const std::array<std::string_view, N>& keys) {
    object o;
    if (e.get_object().get(o)) return;
    for (auto [k, v] : o)
      for (size_t i = 0; i < N; ++i)
        if (k == keys[i]) {
          if (!has(i)) v_[i] = v, found_ |= 1u << i;
          break;
        }
  }
  bool has(size_t i) const { return found_ >> i & 1; }
  element operator[](size_t i) const { return v_[i]; }  // (when has(i))
  int64_t integer(size_t i, int64_t fallback = kNull) const { return has(i) ? int_value(v_[i], fallback) : fallback; }
  int64_t handle(size_t i) const { return has(i) ? int_of(v_[i], "handle") : kNull; }  // as handle_of
  int64_t time(size_t i, bool& out_of_range) const { return has(i) ? time_value(v_[i], out_of_range) : kNull; }

 private:
  std::array<element, N> v_{};
  uint32_t found_ = 0;
};

std::string_view text_of(element e, std::string_view key) {
  std::string_view s;
  return e[key].get_string().get(s) ? std::string_view() : s;
}

using kineto_text::escape;

struct Agent {
  int64_t device = kNull;  // the GPU's index (gpu_index, else its logical node among GPUs); kNull: a CPU
};
// A kernel_symbols entry's names (the rest of the entry is not read).
struct Symbol {
  std::string formatted, truncated, mangled;
  // Made once per symbol, not per dispatch (44k dispatches of ~300 kernels in the sample): the
  // truncated name as a JSON string, the key the parser interns the name by, and whether the
  // names are clean (event_records::Writer::clean; else each row checks them).
  std::string truncated_json;
  uint32_t key = 0;
  bool clean = false;
};

// The input's text read forward through its window (or, for a member held back, a copy in memory),
// with the window kept from `keep` on: the reader never holds more than one batch of records or
// one small table, whatever the file's size.
class Text {
 public:
  Text(InputSource& in, const std::string& path) : path(path), in_(&in) {}
  Text(const TextBuffer& mem, size_t origin) : mem_(&mem), origin_(origin) {}

  size_t base() const { return in_ ? in_->base() : 0; }
  size_t limit() const { return in_ ? in_->base() + in_->avail() : mem_->size(); }
  const char* ptr(size_t p) const { return (in_ ? in_->window() : mem_->data()) + (p - base()); }
  // Reads more, keeping the text from `keep` on (from q on, past which nothing is needed, when
  // `drop`); false at the end of the text.
  bool more(size_t q) {
    if (drop) keep = q;
    if (!in_ || !in_->refill(keep)) return false;
    // A few KB of gzip must not inflate to GBs scanned for nothing (a member skipped, or records
    // of a kind not read, make no rows for the pipeline's rows-per-byte guard to count).
    size_t text = in_->base() + in_->avail();
    if (in_->gzip() && text > (size_t{256} << 20) && text > in_->progress() * 200)
      throw LoadError(fmt::format("{}: at byte {}: {} bytes from {} compressed bytes: a gzip bomb, not a trace", path,
                                  text, text, in_->progress()));
    return true;
  }
  // The byte at p, or -1 past the end of the text.
  int at(size_t p) {
    while (p >= limit())
      if (!more(p)) return -1;
    return (unsigned char)*ptr(p);
  }
  size_t skip_ws(size_t p) {
    for (int c = at(p); c == ' ' || c == '\n' || c == '\r' || c == '\t'; c = at(++p)) {
    }
    return p;
  }
  size_t offset(size_t p) const { return origin_ + p; }  // p as a byte offset of the file's text

  std::string path;  // the file, for messages
  size_t keep = 0;
  bool drop = false;  // scanning a value not read: keep nothing behind the scan

 private:
  InputSource* in_ = nullptr;
  const TextBuffer* mem_ = nullptr;
  size_t origin_ = 0;
};

// What records name, read from the tables before them (metadata, agents, kernel_symbols,
// strings): filled by the scan, then read by every parse thread. A symbol's names are parsed on
// its first use (symbols_as_text), under `mu`; nothing else changes once records are cut.
struct Tables {
  int64_t pid = 0;
  std::unordered_map<int64_t, Agent> agents;
  std::unordered_map<int64_t, Symbol> symbols;
  // kernel_symbols entries no dispatch has used yet: their names as JSON text (symbols_as_text).
  std::unordered_map<int64_t, std::string> pending;
  std::vector<std::vector<std::string>> operations;  // strings.buffer_records[kind].operations
  std::unordered_map<int64_t, std::string> markers;
  // --kernel-rename: strings.correlation_id.external, the names of the roctx ranges that kernels
  // were launched in, keyed by the dispatch's external correlation id; read unless the result's
  // metadata.config.kernel_rename is false.
  std::unordered_map<int64_t, std::string> renames;
  bool rename = true;
  // metadata.config.group_by_queue (rocprofv3 --group-by-queue): the tool then attributes no record
  // to a HIP stream (every stream_id is 0), so dispatches are placed by their HSA queue.
  bool group_by_queue = false;
  uint32_t symbol_keys = 0;  // Symbol::key's last
  std::mutex mu;
  simdjson::dom::parser names_dom;

  // A symbol's names from its entry (or from the names symbols_as_text kept of it).
  void names(Symbol& s, element k) {
    s.formatted = text_of(k, "formatted_kernel_name");
    s.truncated = text_of(k, "truncated_kernel_name");
    s.mangled = text_of(k, "kernel_name");
    s.truncated_json.clear();
    if (!s.truncated.empty()) escape(s.truncated_json, s.truncated);
    s.key = ++symbol_keys;
    using W = event_records::Writer;
    s.clean = W::clean(s.formatted) && W::clean(s.truncated) && W::clean(s.mangled);
  }
  // The symbol of kernel_id `id`, its names parsed now if symbols_as_text kept them; null if none.
  // (Symbols are nodes of a map: a pointer stays valid while others are added.)
  const Symbol* symbol_of(int64_t id, const std::string& path) {
    std::lock_guard lock(mu);
    if (auto it = symbols.find(id); it != symbols.end()) return &it->second;
    auto it = pending.find(id);
    if (it == pending.end()) return nullptr;
    element k;
    if (auto e = names_dom.parse(it->second).get(k))  // (checked JSON, scalars: cannot fail)
      throw LoadError(fmt::format("{}: kernel_symbols entry {}: not JSON: {}", path, id, simdjson::error_message(e)));
    Symbol& s = symbols[id];
    names(s, k);
    pending.erase(it);
    return &s;
  }
  std::string_view operation(int64_t kind, int64_t op) const {
    if (kind < 0 || op < 0 || kind >= (int64_t)operations.size() || op >= (int64_t)operations[kind].size()) return {};
    return operations[kind][op];
  }
};

// A chunk of records: kHead bytes (the record kind), then the records' JSON text as an array,
// cut at record boundaries by the scan and checked by the parse thread (RecordParser::dom).
enum Kind : char { kKernel, kHip, kHsa, kRccl, kMarker, kCopy };
constexpr size_t kHead = 1;

// The error check_json found in text d[0, n) that is the file's text from `origin`, wrapped in "["
// "]" when `wrap` (a run of array entries: its byte k is the file's k - 1, at most the text's end).
LoadError invalid_json(const std::string& path, const JsonCheck& check, size_t origin, size_t n, bool wrap) {
  const size_t at = std::min(check.offset - (wrap && check.offset ? 1 : 0), n - (wrap ? 2 : 0));
  return LoadError(fmt::format("{}: at byte {}: {}", path, origin + at, check.message));
}

// Checked text d[0, n) (TextBuffer padding after it) parsed by `parser`: repaired into `repaired`
// first when the check said so (counted in `health`); `offset` its place in the file.
element parse_checked(simdjson::dom::parser& parser, const char* d, size_t n, JsonCheck::Result checked, size_t offset,
                      TextBuffer& repaired, Health& health, const std::string& path) {
  element doc;
  simdjson::error_code e;
  if (checked == JsonCheck::repairable) {
    repaired = repair_json(d, n, health);
    e = parser.parse(repaired.data(), repaired.size(), false).get(doc);
  } else {
    e = parser.parse(d, n, false).get(doc);
  }
  if (e) throw LoadError(fmt::format("{}: at byte {}: not JSON: {}", path, offset, simdjson::error_message(e)));
  return doc;
}

// Whether `d` holds an escape that simdjson takes as it is and check_json calls repairable
// (\u0000, a UTF-16 surrogate, lone or not: the check decides). (A "\\u0000" is taken for one
// too: the only cost is the check.)
bool escape_to_check(const char* d, size_t n) {
  for (const char* p = d; (p = static_cast<const char*>(std::memchr(p, '\\', (size_t)(d + n - p))));) {
    if ((size_t)(d + n - p) >= 6 && p[1] == 'u') {
      const char hi = (char)(p[3] | 0x20);  // (letters lower case; '8' and '9' stay)
      if (std::string_view(p + 2, 4) == "0000" ||
          ((p[2] | 0x20) == 'd' && (hi == '8' || hi == '9' || (hi >= 'a' && hi <= 'f'))))
        return true;
    }
    p += 2;
    if (p >= d + n) break;
  }
  return false;
}

// Whether simdjson's DOM parser takes the value `v` (checked JSON) as check_json did: each number
// in it an integer of at most 18 digits (a float may overflow, 19 digits may pass 2^63), nested
// at most 64 deep (simdjson's limit is 1024). (rocprofv3 writes each symbol's kernel_address as
// {"handle": N}: nested values are common, floats and deep nesting are not.)
bool dom_takes(std::string_view v) {
  int depth = 0;
  size_t digits = 0;  // of the number being read
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '"') {  // past the string (checked: it ends)
      for (++i; i < v.size() && v[i] != '"'; ++i) i += v[i] == '\\';
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      if (++digits > 18) return false;
    } else if (c == '.' || ((c == 'e' || c == 'E') && digits)) {
      return false;
    } else {
      digits = 0;
      if ((c == '{' || c == '[') && ++depth > 64) return false;
      if (c == '}' || c == ']') --depth;
    }
  }
  return true;
}

// One parse thread's: a chunk of records parsed (simdjson), each written as an event record
// (event_records::Writer) and the rows filled from those by event_records' parser.
class RecordParser : public ChunkParser {
 public:
  RecordParser(const RowSink& sink, const std::string& path, Tables& tables)
      : sink_(sink),
        path_(path),
        tab_(tables),
        inner_(event_records::parser(sink, path)),
        emit_([this](Chunk&& c) {
          if (done_ + c.rows > rows_)
            throw LoadError(fmt::format("{}: at byte {}: more events than records", path_, offset_));
          c.first_row = first_row_ + done_;
          done_ += c.rows;
          inner_->parse(c);
          spare_text_ = std::move(c.text);
          return true;
        }),
        spare_([this] { return std::move(spare_text_); }),
        out_(std::in_place, emit_, spare_, kRecordBytes) {
    health_ = &sink_.health;
    out_->encode_keys(&sink_.args.keys());
  }

  void parse(const Chunk& chunk) override {
    const element doc = dom(chunk);
    array batch;
    if (doc.get_array().get(batch))
      throw LoadError(fmt::format("{}: at byte {}: expected array entries", path_, chunk.source_offset));
    // A chunk that failed (its error is the load's) may have left records behind: start clean, as
    // the pipeline still parses the chunks queued before the error's.
    if (dirty_) out_.emplace(emit_, spare_, kRecordBytes), out_->encode_keys(&sink_.args.keys());
    dirty_ = true;
    first_row_ = chunk.first_row, rows_ = chunk.rows, done_ = 0, base_ = out_->rows(), offset_ = chunk.source_offset;
    static constexpr std::string_view kSections[] = {"", "hip_api", "hsa_api", "rccl_api"};
    const Kind kind = Kind(chunk.text.data()[0]);
    if (kind == kMarker) forward_ = {};  // a marker_api array is one chunk (Reader::cut)
    for (element r : batch) {
      switch (kind) {
        case kKernel: kernel(r); break;
        case kHip:
        case kHsa:
        case kRccl: api(r, kSections[kind]); break;
        case kMarker: marker(r); break;
        case kCopy: copy(r); break;
      }
    }
    out_->flush();
    if (done_ != rows_)
      throw LoadError(fmt::format("{}: at byte {}: fewer events than records", path_, chunk.source_offset));
    dirty_ = false;
  }

 private:
  // The chunk's records parsed. simdjson's DOM parser checks every byte (RFC 8259 and UTF-8)
  // as it builds the DOM, so check_json walks the text only where simdjson refuses it or it holds
  // an escape simdjson takes and the loader repairs (escape_to_check): then the check gives the
  // error's offset and message, as for every other input, or the text is repaired and counted.
  // (The scan used to check each chunk before a parse thread saw it: a second walk of every byte,
  // on the one thread.)
  element dom(const Chunk& chunk) {
    const char* d = chunk.text.data() + kHead;
    const size_t n = chunk.text.size() - kHead;
    element doc;
    if (!escape_to_check(d, n) && !dom_.parse(d, n, false).get(doc)) return doc;
    const JsonCheck check = check_json(d, n);  // (d is "[" + the records' text + "]")
    if (check.result == JsonCheck::invalid) throw invalid_json(path_, check, chunk.source_offset, n, true);
    return parse_checked(dom_, d, n, check.result, chunk.source_offset, repaired_, sink_.health, path_);
  }

  // Records of a chunk (Reader::kChunkBytes of JSON) make fewer bytes of event records: one chunk.
  static constexpr size_t kRecordBytes = 64 << 10;

  // The row the record being written will be (the trace's row index).
  int64_t row() const { return (int64_t)(first_row_ + out_->rows() - base_); }

  // The fields every record shares: phase, category, name, times (kineto_text's writer).
  // A mark (`ph` "i") is an instant: its zero length is no defect, not counted.
  void begin(element r, std::string_view cat, std::string_view name, uint32_t name_key = 0, std::string_view ph = "X") {
    bool out_of_range = false;
    const int64_t start = time_of(r, "start_timestamp", out_of_range), end = time_of(r, "end_timestamp", out_of_range);
    begin(start, end, out_of_range, cat, name, name_key, ph);
  }
  void begin(int64_t start, int64_t end, bool out_of_range, std::string_view cat, std::string_view name,
             uint32_t name_key, std::string_view ph = "X") {
    out_->begin(ph, cat, name, name_key);
    if (out_of_range)
      health_->add("rocprof_time_out_of_range", (int64_t)row(),
                   "records whose start_timestamp or end_timestamp is past 2^63 - 1 ns: that time read as absent");
    if (start != kNull) out_->ts(start);
    int64_t dur;
    if (start != kNull && end != kNull && !__builtin_sub_overflow(end, start, &dur)) {
      out_->dur(dur);
      if (dur == 0 && ph == "X")
        health_->add("rocprof_zero_duration", (int64_t)row(),
                     "records whose end_timestamp equals their start_timestamp: kept as zero-length events");
    }
  }
  // Args members that are absent (kNull, "") are left out.
  void int_arg(event_records::Writer::Literal k, int64_t v) {
    if (v != kNull) out_->arg(k, v);
  }
  void text_arg(event_records::Writer::Literal k, std::string_view v) {
    if (!v.empty()) out_->text_arg(k, v);
  }
  void correlation(element r, event_records::Writer::Literal k) {
    if (element c; !r["correlation_id"].get(c)) correlation_of(c, k);
  }
  void correlation_of(element c, event_records::Writer::Literal k) {
    int_arg(k, int_of(c, "internal"));
    if (int64_t ext = int_of(c, "external", 0); ext != 0) int_arg("external correlation", ext);
  }
  void thread(element r) {
    out_->pid(tab_.pid);
    if (int64_t t = int_of(r, "thread_id"); t != kNull) out_->tid(t);
  }
  // The device of a GPU agent; kNull (and counted) for a handle no agent has.
  int64_t device_of(int64_t handle, bool count) {
    auto it = tab_.agents.find(handle);
    if (it == tab_.agents.end() && count)
      health_->add("rocprof_unknown_agent", (int64_t)row(),
                   "records on an agent handle the agents list lacks: device NULL, pid is the handle");
    return it == tab_.agents.end() ? kNull : it->second.device;
  }
  bool object_or_count(element r) {
    if (r.is_object()) return true;
    health_->add("rocprof_bad_record", -1, "buffer records that are not objects: skipped (no row)");
    return false;
  }

  void kernel(element r) {
    if (!object_or_count(r)) return;
    enum { kInfo, kCorrelation, kStream, kStart, kEnd, kThread, kRenameVal };
    static constexpr std::array<std::string_view, 7> kRecord = {"dispatch_info",    "correlation_id", "stream_id",
                                                                "start_timestamp",  "end_timestamp",  "thread_id",
                                                                "kernel_rename_val"};
    enum { kKernel, kAgent, kQueue, kGrid, kBlock, kShared, kPrivate, kDispatch };
    static constexpr std::array<std::string_view, 8> kInfoKeys = {"kernel_id",
                                                                  "agent_id",
                                                                  "queue_id",
                                                                  "grid_size",
                                                                  "workgroup_size",
                                                                  "group_segment_size",
                                                                  "private_segment_size",
                                                                  "dispatch_id"};
    const Members rec(r, kRecord);
    const bool has_info = rec.has(kInfo) && rec[kInfo].is_object();
    const Members info = has_info ? Members(rec[kInfo], kInfoKeys) : Members<kInfoKeys.size()>();
    int64_t kid = info.integer(kKernel);
    std::string_view name, truncated;
    const Symbol* sym = kid == kNull ? nullptr : tab_.symbol_of(kid, path_);
    if (sym) {
      // formatted_kernel_name: demangled, without the " [clone .kd]" of demangled_kernel_name (the
      // form Kineto's ROCm traces name kernels by, so a diff across the two matches names);
      // truncated_kernel_name drops template arguments (TraceLens's key) and is kept in args. The
      // mangled name (kernel_name) names a kernel that has no other name, and is not kept on each
      // row otherwise: a third of a row's args (170 bytes a row in the sample) that no report
      // reads, and that neither rocprofv3's own kernel trace nor Nsight's reader keeps.
      name = sym->formatted;
      truncated = sym->truncated;
      if (name.empty()) name = !truncated.empty() ? truncated : std::string_view(sym->mangled);
    }
    // rocprofv3 --kernel-rename names a dispatch by the roctx range it was launched in (its external
    // correlation id keys the name; in rocprofiler-sdk builds whose dispatch records carry a
    // `kernel_rename_val`, that value does), as rocprofv3's own outputs do; the symbol's name
    // stays in args.
    std::string_view renamed;
    if (tab_.rename && !tab_.renames.empty()) {
      // (a rename value is a hash, any 64 bits; an external id counts only above 0)
      int64_t key = rec.integer(kRenameVal, 0);
      if (key == 0 && rec.has(kCorrelation)) key = std::max<int64_t>(int_of(rec[kCorrelation], "external", 0), 0);
      if (auto it = key != 0 ? tab_.renames.find(key) : tab_.renames.end();
          it != tab_.renames.end() && !it->second.empty())
        renamed = it->second;
    }
    std::string_view symbol_name = name;
    if (!renamed.empty()) name = renamed;
    std::string unknown;
    if (name.empty()) {
      unknown = fmt::format("unknown_kernel_{}", kid == kNull ? std::string("none") : std::to_string(kid));
      name = unknown;
      health_->add("rocprof_missing_symbol", (int64_t)row(),
                   "kernel dispatches whose kernel_id no kernel_symbols entry names: named unknown_kernel_ID");
    }
    int64_t agent = info.handle(kAgent);
    int64_t device = device_of(agent, true);
    int64_t queue = info.handle(kQueue);
    // One stream key for kernels and copies: the HIP stream the dispatch was launched on when the
    // record has one (`stream_id`, what a copy's stream is and what Kineto's ROCm traces call the
    // stream), else the HSA queue (kept in args: HIP maps several streams onto a few queues). With
    // the queue, a copy and the kernels of one stream looked like two streams (a false wait in `idle`).
    const int64_t hip_stream = tab_.group_by_queue ? kNull : rec.handle(kStream);
    const int64_t stream = hip_stream != kNull ? hip_stream : queue;
    bool out_of_range = false;
    const int64_t start = rec.time(kStart, out_of_range), end = rec.time(kEnd, out_of_range);
    begin(start, end, out_of_range, "kernel", name,
          sym && sym->clean && unknown.empty() && renamed.empty() ? sym->key : 0);
    // Kineto's GPU rows: pid the device, tid the stream.
    int64_t pid = device != kNull ? device : agent;
    if (pid != kNull) out_->pid(pid);
    if (stream != kNull) out_->tid(stream);
    out_->open_args();
    int_arg("device", device);
    int_arg("stream", stream);
    if (rec.has(kCorrelation)) correlation_of(rec[kCorrelation], "correlation");
    if (has_info) {
      auto dim3 = [&](int field, event_records::Writer::Literal as) {
        if (!info.has(field)) return;
        const element d = info[field];
        out_->dims_arg(as, int_of(d, "x", 1), int_of(d, "y", 1), int_of(d, "z", 1));
      };
      // grid_size counts work-items, as HIP's and Kineto's ROCm "grid" do; workgroup_size is the block.
      dim3(kGrid, "grid");
      dim3(kBlock, "block");
      int_arg("shared memory", info.integer(kShared));
      int_arg("private segment size", info.integer(kPrivate));
      int_arg("dispatch id", info.integer(kDispatch));
      int_arg("kernel id", kid);
    }
    int_arg("queue", queue);
    int_arg("hip stream", hip_stream);
    int_arg("agent", agent);
    if (!renamed.empty()) text_arg("kernel name", symbol_name);
    if (sym && sym->clean && !truncated.empty())
      out_->json_arg("truncated name", sym->truncated_json, true);
    else
      text_arg("truncated name", truncated);
    int_arg("thread", rec.integer(kThread));
    out_->end();
  }

  void api(element r, std::string_view section) {
    if (!object_or_count(r)) return;
    int64_t op = int_of(r, "operation", -1);
    std::string_view name = tab_.operation(int_of(r, "kind", -1), op);
    std::string fallback;
    if (name.empty()) fallback = fmt::format("{} operation {}", section, op), name = fallback;
    // HIP calls are the runtime calls that launch GPU work (the correlation id links them); HSA and
    // RCCL calls keep their own categories (kind 'other').
    begin(r, section == "hip_api" ? "cuda_runtime" : section, name);
    thread(r);
    out_->open_args();
    correlation(r, "correlation");
    out_->end();
  }

  void marker(element r) {
    if (!object_or_count(r)) return;
    element c;
    int64_t id = !r["correlation_id"].get(c) ? int_of(c, "internal") : kNull;
    std::string_view op_name = tab_.operation(int_of(r, "kind", -1), int_of(r, "operation", -1));
    // roctx ranges and marks are named by their message (strings.marker_api, keyed by correlation id).
    auto it = tab_.markers.find(id);
    std::string_view name = it != tab_.markers.end() && !it->second.empty() ? it->second : op_name;
    // roctxMarkA is an instant, as Nsight's NVTX marks are (rocprofv3 gives it end = start).
    const bool mark = op_name.starts_with("roctxMark");
    // Under emit_nvtx a roctx range's message is an op range (PyTorch's getNvtxStr on ROCm): a
    // cpu_op as the Nsight reader makes it (src/readers/emit_nvtx.h).
    std::optional<emit_nvtx::OpRange> op = mark ? std::nullopt : emit_nvtx::op_range(name);
    if (op && !op->user)
      begin(r, "cpu_op", op->name);
    else
      begin(r, "user_annotation", op ? op->name : name.empty() ? std::string_view("roctx") : name, 0, mark ? "i" : "X");
    thread(r);
    out_->open_args();
    if (op) emit_nvtx::write_args(*out_, *op, forward_.fwd_tid(*op, tab_.pid, int_of(r, "thread_id")), name);
    text_arg("operation", op_name);
    int_arg("marker correlation", id);
    out_->end();
  }

  void copy(element r) {
    if (!object_or_count(r)) return;
    int64_t op = int_of(r, "operation", -1);
    std::string_view name = tab_.operation(int_of(r, "kind", -1), op);
    std::string fallback;
    if (name.empty()) fallback = fmt::format("MEMORY_COPY operation {}", op), name = fallback;
    int64_t dst = handle_of(r, "dst_agent_id"), src = handle_of(r, "src_agent_id");
    // A copy belongs to the GPU it writes to, else to the GPU it reads from (device to host).
    int64_t device = device_of(dst, false);
    if (device == kNull) device = device_of(src, false);
    if (!tab_.agents.count(dst) && !tab_.agents.count(src)) device_of(dst, true);
    int64_t stream = handle_of(r, "stream_id");
    begin(r, "gpu_memcpy", name);
    if (device != kNull) out_->pid(device);
    if (stream != kNull) out_->tid(stream);
    out_->open_args();
    int_arg("device", device);
    int_arg("stream", stream);
    correlation(r, "correlation");
    int_arg("bytes", int_of(r, "bytes"));
    int_arg("src agent", src);
    int_arg("dst agent", dst);
    out_->end();
  }

  RowSink sink_;
  std::string path_;
  Tables& tab_;
  Health* health_ = nullptr;
  std::unique_ptr<ChunkParser> inner_;                                  // event_records' parser, fed out_'s chunks
  size_t first_row_ = 0, rows_ = 0, done_ = 0, base_ = 0, offset_ = 0;  // the chunk's
  TextBuffer spare_text_, repaired_;
  std::function<bool(Chunk&&)> emit_;
  std::function<TextBuffer()> spare_;
  std::optional<event_records::Writer> out_;
  bool dirty_ = false;  // a chunk's parse began and did not end
  simdjson::dom::parser dom_;
  emit_nvtx::ForwardThreads forward_;  // a backward op range's forward thread (this marker chunk's)
};

class Reader : public TraceReader {
 public:
  Reader(InputSource& in, const std::string& path, size_t chunk_bytes)
      : in_(in), path_(path), chunk_bytes_(chunk_bytes) {
    // The scan keeps at most a batch of entries or a chunk of records behind it (one small table
    // held whole is the exception, and grows the window as it must): 8 MiB read ahead, not a
    // 64 MiB window that was a third of a load's peak memory.
    in_.read_ahead(8u << 20);
  }

  // The document is walked member by member without a DOM of the whole: the tables rocprofv3 writes
  // first (metadata, agents, strings, kernel_symbols) are parsed one value or one batch of entries
  // at a time and kept as the few fields records need; buffer_records' arrays are parsed in batches
  // of about kChunkBytes on the parse threads. Each piece of text parsed is checked whole by
  // check_json (invalid: an error with the file's offset; repairable: repaired and counted).
  void scan(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare,
            Health& health) override {
    emit_ = &emit, spare_ = &spare;
    health_ = &health;
    try {
      scan_text();
    } catch (const Cancelled&) {
    }
  }

  void use_threads(size_t threads) override { threads_ = std::max<size_t>(1, threads); }

  std::unique_ptr<ChunkParser> parser(const RowSink& sink) override {
    return std::make_unique<RecordParser>(sink, path_, tables_);
  }

  void finish(LoadedTrace& trace, Health& health) override {
    trace.metadata = std::move(metadata_);
    if (trace.rows.empty()) health.add("no_events", -1, "the rocprofv3 result holds no records tlsql reads");
  }

 private:
  struct Cancelled {};

  void scan_text() {
    Text t(in_, path_);
    size_t p = t.skip_ws(0);
    if (t.at(p) == 0xEF && t.at(p + 1) == 0xBB && t.at(p + 2) == 0xBF) p = t.skip_ws(p + 3);  // a UTF-8 BOM
    expect(t, p, '{', "'{'");
    p = t.skip_ws(p + 1);
    bool tool_seen = false;
    while (t.at(p) != '}') {
      auto [key, value] = member(t, p);
      if (key == "rocprofiler-sdk-tool" && !tool_seen) {
        tool_seen = true;
        p = tools(t, value);
      } else {
        p = skip(t, value);
      }
      p = next_member(t, p);
    }
    if (size_t end = t.skip_ws(p + 1); t.at(end) != -1)
      fail(t, end, "expected the end of the text after the top-level object");
    if (!tool_seen) not_a_tool();
    if (!records_seen_)
      health_->add("rocprof_no_buffer_records", -1, "no buffer_records object: no kernels, API calls or copies");
    if (held_) {
      // buffer_records came before the tables its records name: read from the copy kept, now.
      Text mem(*held_, held_origin_);
      records(mem, 0);
    }
    metadata_ = "{\"profiler\":\"rocprofv3\",\"rocprofv3\":" + (meta_.empty() ? std::string("{}") : meta_) +
                ",\"deviceProperties\":[" + devices_ + "]}";
    if (records_seen_ && tables_seen_ != 7) {
      // Older or trimmed layouts: records load all the same, named and placed by what is there.
      std::string missing;
      for (auto [bit, name] :
           {std::pair{1, "agents (devices unknown)"}, std::pair{2, "kernel_symbols (kernels named unknown_kernel_ID)"},
            std::pair{4,
                      "strings (API calls named by kind and operation number, roctx "
                      "ranges without their messages)"}})
        if (!(tables_seen_ & bit)) missing += (missing.empty() ? "" : ", ") + std::string(name);
      health_->add("rocprof_tables_missing", -1, "the result has no " + missing);
    }
    if (!skipped_.empty())
      health_->add("rocprof_records_not_read", -1,
                   fmt::format("records of kinds tlsql does not map to events, not loaded: {}", skipped_));
  }

  static constexpr size_t kBatchBytes = 1 << 20;
  // A chunk of records for the parse threads: each thread's DOM and chunk buffers are sized by
  // it (measured on the rocprofv3 x5 copy, peak RSS of `-o` against the .db's size: 1 MB chunks
  // 1.24x, 256 KB 1.08x, 128 KB 1.04x; 1.02x when the scan parsed the records).
  static constexpr size_t kChunkBytes = 128 << 10;

  [[noreturn]] void fail(Text& t, size_t p, std::string_view what) {
    throw LoadError(fmt::format("{}: at byte {}: {}", path_, t.offset(p),
                                t.at(p) == -1 ? fmt::format("the text ends; {}", what) : std::string(what)));
  }
  void expect(Text& t, size_t p, char c, std::string_view what) {
    if (t.at(p) != (unsigned char)c) fail(t, p, fmt::format("expected {}", what));
  }
  [[noreturn]] void not_a_tool() {
    throw NotATrace(
        fmt::format("{}: not a trace: \"rocprofiler-sdk-tool\" is not an array holding an object "
                    "(a rocprofv3 JSON result holds one per process)",
                    path_));
  }

  // Past the string that starts at p (a '"'). A byte loop, not memchr: the strings of records are
  // short keys ("start_timestamp"), where a call per string cost more than the search.
  size_t end_of_string(Text& t, size_t p) {
    size_t q = p + 1;
    for (;;) {
      for (size_t lim = t.limit(); q < lim;) {
        const char* w = t.ptr(q);
        size_t n = lim - q, i = 0;
        while (i < n && w[i] != '"' && w[i] != '\\') ++i;
        if (i == n) {
          q = lim;
        } else if (w[i] == '"') {
          return q + i + 1;
        } else {
          q += i + 2;  // past the escaped byte
        }
      }
      if (!t.more(q)) fail(t, q, "expected the '\"' that ends a string");
    }
  }
  // From q (outside strings, at `depth` > 0 inside brackets), whole 64-byte blocks of w[0, lim - q)
  // read a block at a time as simdjson's first stage does: masks of the quotes and brackets, the
  // bytes inside strings by a prefix XOR of the quotes, the brackets outside them walked in order.
  // Returns past the bracket that closes the value (`ended`), or where the byte loop goes on,
  // outside any string (the opening quote of a string a block ended in), with `depth` there: before
  // a block with a backslash (an escape: the byte loop reads it), or q when no block was read.
  static size_t skip_blocks(const char* w, size_t q, size_t lim, size_t& depth, bool& ended) {
#if defined(__SSE2__)
    size_t resume = q, depth_there = depth;
    bool in_string = false;
    for (; lim - q >= 64; q += 64, w += 64) {
      uint64_t quote = 0, backslash = 0, open = 0, close = 0;
      for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16 * k));
        const __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));  // '[' -> '{', ']' -> '}'
        auto mask = [&](__m128i a, char c) {
          return uint64_t(uint16_t(_mm_movemask_epi8(_mm_cmpeq_epi8(a, _mm_set1_epi8(c))))) << (16 * k);
        };
        quote |= mask(v, '"'), backslash |= mask(v, '\\'), open |= mask(low, '{'), close |= mask(low, '}');
      }
      if (backslash) break;
      uint64_t inside = quote;  // bit i: an odd number of quotes at or before i (the opening quote on)
      for (int shift = 1; shift < 64; shift *= 2) inside ^= inside << shift;
      if (in_string) inside = ~inside;
      open &= ~inside, close &= ~inside;
      for (uint64_t b = open | close; b; b &= b - 1) {
        const int i = __builtin_ctzll(b);
        if (open >> i & 1) {
          ++depth;
        } else if (--depth == 0) {
          ended = true;
          return q + (size_t)i + 1;
        }
      }
      in_string = inside >> 63;
      if (!in_string) {
        resume = q + 64, depth_there = depth;
      } else if (uint64_t opening = quote & inside) {
        resume = q + 63 - (size_t)__builtin_clzll(opening), depth_there = depth;
      }  // (else the string opened in an earlier block: resume stays at its quote)
    }
    depth = depth_there;
    return resume;
#else
    (void)w, (void)lim, (void)depth, (void)ended;
    return q;
#endif
  }
  // Past the value that starts at p (its first byte): strings and brackets matched, nothing else
  // checked (check_json does that on what is parsed). Inside brackets only quotes and brackets
  // matter: whole blocks are read by skip_blocks, the bytes between them skipped by a table,
  // through a pointer into the window.
  size_t end_of_value(Text& t, size_t p) {
    static constexpr auto kBracketOrQuote = [] {
      std::array<bool, 256> a{};
      for (unsigned char c : {'"', '{', '}', '[', ']'}) a[c] = true;
      return a;
    }();
    size_t q = p, depth = 0, blocks_from = p;  // (after a block skip_blocks left, the byte loop reads it)
    for (;;) {
      for (size_t lim = t.limit(); q < lim;) {
        const char* w = t.ptr(q);
        size_t n = lim - q, i = 0;
        if (depth > 0 && q >= blocks_from) {
          bool ended = false;
          if (size_t r = skip_blocks(w, q, lim, depth, ended); ended) {
            return r;
          } else if (r != q) {
            q = r;
            continue;
          }
          blocks_from = q + 64;
        }
        if (depth > 0)
          while (i < n && !kBracketOrQuote[(unsigned char)w[i]]) ++i;
        if (i == n) {
          q = lim;
          break;
        }
        q += i;
        char c = w[i];
        if (c == '"') {
          q = end_of_string(t, q);
          if (depth == 0) return q;
          lim = t.limit();
          continue;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (depth == 0) return q;
          if (--depth == 0) return q + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
          return q;
        }
        ++q;
      }
      if (!t.more(q)) {
        if (depth == 0 && q > p) return q;  // a number or literal at the end of the text
        fail(t, q, depth ? "expected the end of an object or array" : "expected a value");
      }
    }
  }
  // A member "key": value at p; returns the key (raw, as written) and the value's first byte.
  std::pair<std::string, size_t> member(Text& t, size_t p) {
    expect(t, p, '"', "a member name");
    t.keep = p;
    size_t e = end_of_string(t, p);
    std::string key(t.ptr(p + 1), e - p - 2);
    size_t v = t.skip_ws(e);
    expect(t, v, ':', "':'");
    v = t.skip_ws(v + 1);
    if (t.at(v) == -1) fail(t, v, "expected a value");
    return {std::move(key), v};
  }
  // Past a value not read: scanned for its end (strings and brackets only) without keeping it.
  size_t skip(Text& t, size_t v) {
    t.keep = v;
    t.drop = true;
    size_t e = end_of_value(t, v);
    t.drop = false;
    t.keep = e;
    return e;
  }
  // A scan error met while cutting entries: a defect in the entries [start, end) walked whole before
  // it, which check_json would have found once they were cut, is first in the file and is the one
  // reported. (The scan walks strings and brackets only; the entry it failed in is not checked: a
  // cut text reads as broken where it ends.)
  void defect_before(Text& t, size_t start, size_t end) {
    if (end <= start) return;
    check(t, start, end, true);  // (throws the defect)
  }
  // After a member at p: past the ',' and white space to the next member, or at the '}'.
  size_t next_member(Text& t, size_t p) {
    p = t.skip_ws(p);
    if (t.at(p) == '}') return p;
    expect(t, p, ',', "',' or '}'");
    return t.skip_ws(p + 1);
  }

  // Parses text [from, to) of t (wrapped in "[" "]" when `wrap`: a run of array entries) after
  // check_json; the DOM lives until the next call.
  element parse(Text& t, size_t from, size_t to, bool wrap) { return dom(t, from, check(t, from, to, wrap)); }
  // The first half of parse(): the text copied into piece_ (piece_n_ bytes) and checked (invalid:
  // an error with the file's offset).
  JsonCheck::Result check(Text& t, size_t from, size_t to, bool wrap) {
    size_t n = piece_n_ = to - from + (wrap ? 2 : 0);
    if (piece_.size() < n) piece_.resize(n);
    char* d = piece_.data();
    if (wrap) d[0] = '[', d[n - 1] = ']';
    std::memcpy(d + (wrap ? 1 : 0), t.ptr(from), to - from);
    JsonCheck check = check_json(d, n);
    if (check.result == JsonCheck::invalid) throw invalid_json(path_, check, t.offset(from), n, wrap);
    return check.result;
  }
  // The second half: piece_ (repaired first when `checked` says so) parsed; `from` for messages.
  element dom(Text& t, size_t from, JsonCheck::Result checked) {
    return dom_of(piece_.data(), piece_n_, checked, t.offset(from));
  }
  // Checked text d[0, n) (TextBuffer padding after it) parsed; `offset` its place in the file.
  element dom_of(const char* d, size_t n, JsonCheck::Result checked, size_t offset) {
    return parse_checked(dom_, d, n, checked, offset, repaired_, *health_, path_);
  }
  // A whole (small) value at v, parsed; past it in `end`.
  element value(Text& t, size_t v, size_t& end) {
    t.keep = v;
    end = end_of_value(t, v);
    return parse(t, v, end, false);
  }
  // The entries of the array at v, parsed in batches and given to `f` one by one (with `f` null,
  // only counted). Returns past the array and the number of entries in `count`.
  size_t entries(Text& t, size_t v, const std::function<void(element)>& f, size_t& count) {
    count = 0;
    size_t q = t.skip_ws(v + 1);
    if (t.at(q) == ']') return q + 1;
    for (;;) {
      const Run r = run_of(t, q, kBatchBytes, !f);
      count += r.entries;
      if (f) {
        array batch;
        if (dom(t, r.start, check(t, r.start, r.stop, true)).get_array().get(batch))
          fail(t, r.start, "expected array entries");
        for (element e : batch) f(e);
      }
      if (r.last) return q + 1;
    }
  }

  // One run of an array's entries from q (at an entry), walked until it holds `bytes` of text or
  // the array ends, its text kept in the window (nothing kept when only `counting`). q moves past
  // the ',' after the run, or to the ']' that ends the array. A scan error met on the way is
  // thrown after `before` (for runs cut earlier and not yet checked: they come first in the file)
  // and defect_before over the entries walked whole (entries only counted are not checked).
  struct Run {
    size_t start = 0, stop = 0, entries = 0, objects = 0;
    bool last = false;
  };
  Run run_of(Text& t, size_t& q, size_t bytes, bool counting, const std::function<void()>& before = nullptr) {
    Run r;
    r.start = r.stop = q;
    size_t walked = q;
    t.keep = q;
    try {
      for (;;) {
        r.objects += t.at(q) == '{';
        r.stop = end_of_value(t, q);
        if (r.stop == q) fail(t, q, "expected a value");
        walked = r.stop;
        ++r.entries;
        q = t.skip_ws(r.stop);
        const int c = t.at(q);
        if (c != ',' && c != ']') fail(t, q, "expected ',' or ']' in an array");
        r.last = c == ']';
        if (!r.last) q = t.skip_ws(q + 1);
        if (r.last || q - r.start >= bytes) return r;
        if (counting) t.keep = q;
      }
    } catch (const LoadError&) {
      if (before) before();
      if (!counting) defect_before(t, r.start, walked);
      throw;
    }
  }

  // The records of the array at v cut into chunks of about kBatchBytes of text at record
  // boundaries (the text is checked by the parse thread: RecordParser::dom) and handed to the
  // parse threads with its row count: an object is one row, anything else none (the parser
  // counts it). Returns past the array; throws Cancelled when emit says the load is cancelled (a
  // parse thread's error is the load's: the rest of the file is not read).
  size_t cut(Text& t, size_t v, Kind kind) {
    size_t q = t.skip_ws(v + 1);
    if (t.at(q) == ']') return q + 1;
    for (;;) {
      // A marker_api array stays one chunk: a backward op range finds its forward range's thread
      // by seq among the ranges before it (emit_nvtx::ForwardThreads), in record order, on one
      // thread. (roctx ranges are far fewer than dispatches.)
      const Run r = run_of(t, q, kind == kMarker ? SIZE_MAX : kChunkBytes, false);
      const size_t n = r.stop - r.start + 2;
      Chunk c{(*spare_)(), t.offset(r.start), r.objects};
      c.text.resize(kHead + n);
      char* d = c.text.data() + kHead;
      d[0] = '[', d[n - 1] = ']';
      std::memcpy(d + 1, t.ptr(r.start), r.stop - r.start);
      c.text.data()[0] = kind;
      cut_ = true;
      if (!(*emit_)(std::move(c))) throw Cancelled();
      if (r.last) return q + 1;
    }
  }

  // The callback_records object at v: its arrays' entries counted, not read (counter collection,
  // --pmc, writes its dispatches there: `rocprof_records_not_read` says so rather than nothing).
  size_t callbacks(Text& t, size_t v) {
    size_t p = t.skip_ws(v + 1);
    for (;; p = next_member(t, p)) {
      if (t.at(p) == '}') return p + 1;
      auto [key, at] = member(t, p);
      if (t.at(at) != '[') {
        p = skip(t, at);
        continue;
      }
      t.keep = at;
      p = count_unread(t, at, fmt::format("callback_records.{}", key));
    }
  }

  // The array at v passed over, its entries counted in `skipped_` under `label` (what
  // `rocprof_records_not_read` lists); returns past it.
  size_t count_unread(Text& t, size_t v, std::string_view label) {
    size_t count = 0;
    const size_t p = entries(t, v, nullptr, count);
    if (count > 0) skipped_ += fmt::format("{}{} {}", skipped_.empty() ? "" : ", ", count, label);
    return p;
  }

  // The "rocprofiler-sdk-tool" array at v: the first process's object is read, the others counted.
  size_t tools(Text& t, size_t v) {
    if (t.at(v) != '[') {
      skip(t, v);
      not_a_tool();
    }
    size_t q = t.skip_ws(v + 1);
    if (t.at(q) == -1) fail(t, q, "expected an object");
    if (t.at(q) != '{') not_a_tool();
    q = t.skip_ws(tool(t, q));
    size_t others = 0;
    if (t.at(q) == ',') {
      t.keep = q;
      q = entries(t, q, nullptr, others);
    } else {
      expect(t, q, ']', "',' or ']'");
      ++q;
    }
    if (others)
      health_->add(
          "rocprof_processes_skipped", -1,
          fmt::format("the file holds {} processes (rocprofiler-sdk-tool entries): the first is read", others + 1));
    return q;
  }

  // One process's object at v; returns past it.
  size_t tool(Text& t, size_t v) {
    size_t p = t.skip_ws(v + 1);
    for (;; p = next_member(t, p)) {
      if (t.at(p) == '}') return p + 1;
      auto [key, at] = member(t, p);
      size_t count = 0;
      if (key == "metadata") {
        element meta = value(t, at, p);
        if (meta.is_object()) {
          tw().pid = int_of(meta, "pid", 0);
          bool on;
          if (!meta["config"]["kernel_rename"].get_bool().get(on)) tw().rename = on;
          if (!meta["config"]["group_by_queue"].get_bool().get(on)) tw().group_by_queue = on;
          meta_ = simdjson::minify(meta);
        }
      } else if (key == "agents" && t.at(at) == '[') {
        tables_seen_ |= 1;
        p = entries(
            t, at, [&](element a) { read_agent(a); }, count);
      } else if (key == "kernel_symbols" && t.at(at) == '[') {
        tables_seen_ |= 2;
        p = symbol_table(t, at);
      } else if (key == "strings") {
        tables_seen_ |= 4;
        strings(value(t, at, p));
      } else if (key == "callback_records" && t.at(at) == '{') {
        p = callbacks(t, at);
      } else if (key == "buffer_records" && t.at(at) == '{' && !records_seen_) {
        records_seen_ = true;
        if (tables_seen_ == 7) {
          p = records(t, at);
        } else {
          // Records before the tables that name them (not rocprofv3's order): kept to read last.
          t.keep = at;
          p = end_of_value(t, at);
          held_.emplace(p - at);
          std::memcpy(held_->data(), t.ptr(at), p - at);
          held_origin_ = t.offset(at);
        }
      } else {
        p = skip(t, at);
      }
    }
  }

  void read_agent(element a) {
    int64_t handle = handle_of(a, "id");
    if (handle == kNull) return;
    Agent& agent = tw().agents[handle];
    if (int_of(a, "type") != 2) return;  // HSA_DEVICE_TYPE_GPU
    int64_t index = int_of(a, "gpu_index", -1);
    agent.device = index >= 0 ? index : gpus_;
    ++gpus_;
    std::string_view product = text_of(a, "product_name");
    std::string& devices = devices_;  // deviceProperties entries: GPU names (gpu_spec peaks), CU counts, wave size
    if (!devices.empty()) devices += ',';
    devices += "{\"id\":" + std::to_string(agent.device) + ",\"name\":";
    escape(devices, product.empty() ? text_of(a, "name") : product);
    devices += ",\"gfx\":";
    escape(devices, text_of(a, "name"));
    int64_t gfx = int_of(a, "gfx_target_version", 0);  // 90500: gfx950
    fmt::format_to(std::back_inserter(devices),
                   ",\"numSms\":{},\"warpSize\":{},\"computeMajor\":{},\"computeMinor\":{},\"agent\":{}}}",
                   int_of(a, "cu_count", 0), int_of(a, "wave_front_size", 0), gfx / 10000, gfx / 100 % 100, handle);
  }
  void symbol(element k) {
    int64_t id = int_of(k, "kernel_id");
    if (id == kNull) return;
    Tables& tab = tw();
    note_symbol(tab, id);
    tab.pending.erase(id);  // (a later entry for the same id replaces an earlier one)
    tab.names(tab.symbols[id], k);
  }
  // An id an earlier entry gave: the later names its dispatches, and that is counted.
  void note_symbol(const Tables& tab, int64_t id) {
    if (tab.symbols.count(id) || tab.pending.count(id))
      health_->add("rocprof_duplicate_symbol", -1,
                   "kernel_symbols entries whose kernel_id an earlier entry has: the later one names its dispatches");
  }
  // kernel_symbols is half of a rocprofv3 result (the sample: 17.5 MB, 9,889 symbols of which
  // dispatches use 80), so its entries are cut into batches of about kBatchBytes, each checked
  // (check_json) and walked as text (symbol_texts: each entry's kernel_id read and its three names'
  // JSON text kept, to be parsed on the first dispatch that names the id: symbol_of) on up to the
  // load's threads at once, the parse threads having nothing to do before the records. Batches are
  // then taken in file order: the first error in the file is the one reported, a later entry for
  // an id replaces an earlier one, and a batch the text walk does not take (below) or that must be
  // repaired is parsed here, entry by entry (symbol). Returns past the array.
  size_t symbol_table(Text& t, size_t v) {
    struct Batch {
      TextBuffer text;    // the entries in "[" "]"
      size_t origin = 0;  // the entries' offset in the file
      JsonCheck check;
      std::optional<SymbolTexts> found;
    };
    std::vector<Batch> batches;
    auto take = [&] {
      for_row_ranges(split_rows(batches.size(), threads_, 1), [&](size_t, size_t from, size_t to) {
        for (size_t i = from; i < to; ++i) {
          Batch& b = batches[i];
          b.check = check_json(b.text.data(), b.text.size());
          if (b.check.result == JsonCheck::ok) b.found = symbol_texts({b.text.data(), b.text.size()});
        }
      });
      Tables& tab = tw();
      for (Batch& b : batches) {
        const size_t n = b.text.size();
        if (b.check.result == JsonCheck::invalid) throw invalid_json(path_, b.check, b.origin, n, true);
        if (b.found) {
          for (auto& [id, text] : *b.found) {
            note_symbol(tab, id);
            tab.symbols.erase(id);
            tab.pending[id] = std::move(text);
          }
          continue;
        }
        array entries;
        if (dom_of(b.text.data(), n, b.check.result, b.origin).get_array().get(entries))
          throw LoadError(fmt::format("{}: at byte {}: expected array entries", path_, b.origin));
        for (element k : entries) symbol(k);
      }
      batches.clear();
    };
    size_t q = t.skip_ws(v + 1);
    if (t.at(q) == ']') return q + 1;
    for (;;) {
      const Run r = run_of(t, q, kBatchBytes, false, take);
      Batch& b = batches.emplace_back();
      const size_t n = r.stop - r.start + 2;
      b.text.resize(n);
      b.text.data()[0] = '[', b.text.data()[n - 1] = ']';
      std::memcpy(b.text.data() + 1, t.ptr(r.start), r.stop - r.start);
      b.origin = t.offset(r.start);
      if (r.last || batches.size() >= threads_) take();
      if (r.last) return q + 1;
    }
  }

  using SymbolTexts = std::vector<std::pair<int64_t, std::string>>;  // kernel_id, its names' JSON
  static std::optional<SymbolTexts> symbol_texts(std::string_view batch) {
    const char* d = batch.data();
    const size_t n = batch.size();
    SymbolTexts found;
    static constexpr std::string_view kNames[] = {"formatted_kernel_name", "truncated_kernel_name", "kernel_name"};
    for (size_t p = json_scan::skip_ws(d, n, 1); p < n && d[p] != ']';) {
      const size_t e = json_scan::skip_value(d, n, p);
      if (e == json_scan::npos) return std::nullopt;
      std::string_view id;
      std::string_view name[3];
      bool plain = true;
      const bool object = json_scan::for_each_member({d + p, e - p}, [&](std::string_view k, std::string_view v) {
        if (k.find('\\') != std::string_view::npos || (v[0] != '"' && !dom_takes(v)))  // (strings: checked)
          plain = false;
        else if (k == "kernel_id" && id.empty())
          id = v;
        for (int i = 0; i < 3; ++i)
          if (k == kNames[i] && name[i].empty()) name[i] = v;
      });
      if (!plain || !object) return std::nullopt;
      if (!id.empty() && (id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))) {
        // (true / false / null / a string: not an integer, the entry skipped as int_of skips it)
        int64_t v = 0;
        for (char c : id.substr(id[0] == '-')) v = v * 10 + (c - '0');
        std::string text = "{";
        for (int i = 0; i < 3; ++i)
          if (!name[i].empty())
            text.append(text.size() > 1 ? ",\"" : "\"").append(kNames[i]).append("\":").append(name[i]);
        found.emplace_back(id[0] == '-' ? -v : v, text + "}");
      }
      p = json_scan::skip_ws(d, n, e);
      if (p < n && d[p] == ',') p = json_scan::skip_ws(d, n, p + 1);
    }
    return found;
  }
  void strings(element strings) {
    array list;
    if (!strings["buffer_records"].get_array().get(list))
      for (element kind : list) {
        auto& ops = tw().operations.emplace_back();
        array names;
        if (!kind["operations"].get_array().get(names))
          for (element n : names) ops.emplace_back(n.is_string() ? std::string_view(n) : std::string_view());
      }
    if (!strings["marker_api"].get_array().get(list))
      for (element m : list) tw().markers[int_of(m, "key")] = text_of(m, "value");
    if (!strings["correlation_id"]["external"].get_array().get(list))
      for (element m : list) tw().renames[int_of(m, "key")] = text_of(m, "value");
  }

  // The buffer_records object at v, each kind's array in document order; returns past it.
  size_t records(Text& t, size_t v) {
    size_t p = t.skip_ws(v + 1);
    for (;; p = next_member(t, p)) {
      if (t.at(p) == '}') return p + 1;
      auto [key, at] = member(t, p);
      if (t.at(at) != '[') {
        p = skip(t, at);
      } else if (key == "kernel_dispatch") {
        p = cut(t, at, kKernel);
      } else if (key == "hip_api" || key == "hsa_api" || key == "rccl_api") {
        p = cut(t, at, key == "hip_api" ? kHip : key == "hsa_api" ? kHsa : kRccl);
      } else if (key == "marker_api") {
        p = cut(t, at, kMarker);
      } else if (key == "memory_copy") {
        p = cut(t, at, kCopy);
      } else {
        p = count_unread(t, at, key);
      }
    }
  }

  InputSource& in_;
  std::string path_;
  size_t chunk_bytes_;
  Health* health_ = nullptr;
  simdjson::dom::parser dom_;
  TextBuffer piece_, repaired_;  // the text parsed now (a value, or a batch of entries in "[" "]")
  size_t piece_n_ = 0;           // its size (piece_ only grows)
  // buffer_records met before the tables its records name (not rocprofv3's order): its text, read
  // last; held_origin_ its offset in the file.
  std::optional<TextBuffer> held_;
  size_t held_origin_ = 0;
  int tables_seen_ = 0;  // 1 agents, 2 kernel_symbols, 4 strings
  size_t threads_ = 1;   // the load's (use_threads)
  bool records_seen_ = false;
  int64_t gpus_ = 0;
  // The tables records read (shared with the parsers); once records are cut, a table met later
  // (a second "agents": not rocprofv3's) is read into `late_`, for its errors and the trace's
  // metadata only, as before the parse threads (records already read were named by the first).
  Tables tables_, late_;
  bool cut_ = false;  // record chunks emitted
  Tables& tw() { return cut_ ? late_ : tables_; }
  const std::function<bool(Chunk&&)>* emit_ = nullptr;
  const std::function<TextBuffer()>* spare_ = nullptr;
  std::string meta_, devices_, skipped_, metadata_;
};

std::unique_ptr<TraceReader> open(InputSource& in, const std::string& path, size_t chunk_bytes) {
  return std::make_unique<Reader>(in, path, chunk_bytes);
}

}  // namespace

bool claims(std::string_view head) {
  size_t p = json_scan::text_start(head);
  if (p >= head.size() || head[p] != '{') return false;
  p = json_scan::skip_ws(head.data(), head.size(), p + 1);
  return head.substr(p).starts_with("\"rocprofiler-sdk-tool\"");
}

constinit const ReaderFormat format = {"rocprof_json", claims, open};

}  // namespace tlsql::rocprof_json
