#include "src/readers/nsys_sqlite/nsys_sqlite.h"

#include <fmt/format.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/json_check.h"
#include "src/readers/emit_nvtx.h"
#include "src/readers/event_records.h"
#include "src/readers/kineto_text.h"
#include "src/sql_names.h"
#include "src/sqlite_util.h"

namespace tlsql::nsys_sqlite {

namespace {

using event_records::Writer;

constexpr std::string_view kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
// nsys --cuda-graph-trace=graph (its default): one row per graph launch, the graph's kernels not
// recorded one by one.
constexpr std::string_view kGraphTable = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";

// The tables the reader maps to events.
bool read_table(const std::string& t) {
  return t == kKernelTable || t == kGraphTable || t == "CUPTI_ACTIVITY_KIND_MEMCPY" ||
         t == "CUPTI_ACTIVITY_KIND_MEMSET" || t == "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" ||
         t == "CUPTI_ACTIVITY_KIND_RUNTIME" || t == "NVTX_EVENTS";
}
// Tables that describe the session, the strings, threads, processes and GPUs, or the profiler
// itself (its overhead and diagnostics), not events of the program: never named as not read.
// Every other table is (cuBLAS / cuDNN / OS runtime / OpenMP / GPU metrics / NVVIDEO / ... events).
bool metadata_table(const std::string& t) {
  static const std::set<std::string> names = {
      "StringIds",         "ThreadNames",      "ProcessStreams",       "PROCESSES",
      "ANALYSIS_FILE",     "ANALYSIS_DETAILS", "NVTX_PAYLOAD_SCHEMAS", "NVTX_PAYLOAD_SCHEMA_ENTRIES",
      "PROFILER_OVERHEAD", "DIAGNOSTIC_EVENT", "UnwindMethodType"};
  return names.count(t) || t.starts_with("ENUM_") || t.starts_with("TARGET_INFO_") || t.starts_with("META_DATA_") ||
         t.starts_with("sqlite_");
}

// One table's rows with its columns found by name: an export of another schema version may lack a
// column (it reads as NULL) or add some (never read).
//
// read_ahead(): SQLite's stepping and column decoding were a third of the scan's work, and the
// scan is an export's serial part (77% of its load on two threads): a table read ahead is stepped
// on a thread of its own, which copies each row's values into batches the scan then reads. The
// thread starts at the first step() and is joined by the destructor; the connection
// (SQLITE_OPEN_NOMUTEX) is the thread's alone in between, so the scan makes no other SQLite call
// while such a table is open (an enum table read inside the loop would have to be read before it).
class Rows {
 public:
  // With `wanted`, only those of its columns the table has are read (a kernel table has ~40 columns
  // and tlsql reads ~20: half the per-row work of the scan); else all of them.
  Rows(sqlite3* db, const std::string& table, const std::string& path, std::initializer_list<const char*> wanted = {})
      : db_(db), table_(table), path_(path) {
    // (The table names are tlsql's own literals, quoted all the same.)
    // NOT INDEXED: the table's stored order, the order SELECT * reads (a covering index could
    // reorder a narrower select); a view takes no NOT INDEXED and is read as it is.
    std::string from = " FROM " + quote_identifier(table);
    if (sqlite3_prepare_v2(db, ("SELECT *" + from + " NOT INDEXED").c_str(), -1, &q_, nullptr) == SQLITE_OK)
      from += " NOT INDEXED";
    else if (sqlite3_prepare_v2(db, ("SELECT *" + from).c_str(), -1, &q_, nullptr) != SQLITE_OK)
      fail(sqlite3_errmsg(db_));
    for (int i = 0; i < sqlite3_column_count(q_); ++i) columns_[sqlite3_column_name(q_, i)] = i;
    if (wanted.size() > 0) {
      std::string list;
      std::map<std::string, int> chosen;
      for (const char* c : wanted)
        if (columns_.count(c) && !chosen.count(c)) {
          list += (list.empty() ? "" : ", ") + quote_identifier(c);
          chosen.emplace(c, (int)chosen.size());
        }
      sqlite3_finalize(q_);
      q_ = nullptr;
      columns_ = std::move(chosen);
      if (sqlite3_prepare_v2(db, ("SELECT " + (list.empty() ? std::string("NULL") : list) + from).c_str(), -1, &q_,
                             nullptr) != SQLITE_OK)
        fail(sqlite3_errmsg(db_));
    }
    width_ = (size_t)sqlite3_column_count(q_);
    numbers_.resize(width_);
  }
  ~Rows() {
    if (ahead_.joinable()) {
      {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
      }
      moved_.notify_all();
      ahead_.join();
    }
    sqlite3_finalize(q_);
  }
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;

  // Steps on a thread of its own from the first step() on (above). Call before stepping.
  void read_ahead() { ahead_wanted_ = true; }

  int column(const std::string& name) const {
    auto it = columns_.find(name);
    return it == columns_.end() ? -1 : it->second;
  }
  bool has(const std::string& name) const { return column(name) >= 0; }
  bool step() {
    if (ahead_wanted_ && !ahead_.joinable()) start_ahead();
    if (!ahead_wanted_) {
      int rc = sqlite3_step(q_);
      if (rc == SQLITE_ROW) return ++row_, true;
      if (rc != SQLITE_DONE) fail(sqlite3_errmsg(db_));
      return false;
    }
    if (cur_ && ++at_ < cur_->rows) return ++row_, true;
    return next_batch();
  }
  // kNull for a NULL, a column the table lacks, or a value that is not an integer.
  int64_t i(int col) const {
    if (col < 0) return kNull;
    if (!cur_) return sqlite3_column_type(q_, col) != SQLITE_INTEGER ? kNull : sqlite3_column_int64(q_, col);
    const Cell& c = cur_->cells[at_ * width_ + (size_t)col];
    return c.type == SQLITE_INTEGER ? c.i : kNull;
  }
  // A value as text (a number as SQLite writes it); empty for a NULL or a column the table lacks.
  // Valid until the next step().
  std::string_view s(int col) const {
    if (col < 0) return {};
    if (!cur_) {
      if (sqlite3_column_type(q_, col) == SQLITE_NULL) return {};
      const char* t = (const char*)sqlite3_column_text(q_, col);
      return t ? std::string_view(t, sqlite3_column_bytes(q_, col)) : std::string_view();
    }
    const Cell& c = cur_->cells[at_ * width_ + (size_t)col];
    if (c.type == SQLITE_NULL) return {};
    if (c.type == SQLITE_INTEGER) return numbers_[(size_t)col] = std::to_string(c.i);  // (SQLite's text of it)
    return std::string_view(cur_->bytes).substr(c.at, c.len);
  }

 private:
  // A run of rows read ahead: per row and column its type, and its integer or where its text is in
  // `bytes` (a real's or a blob's as SQLite gives it as text: what s() returns for it).
  struct Cell {
    int64_t i = 0;
    uint32_t at = 0, len = 0;
    int type = SQLITE_NULL;
  };
  struct Batch {
    std::vector<Cell> cells;
    std::string bytes;
    size_t rows = 0;
    bool last = false;    // the table's end (or its error) follows these rows (a batch short of
                          // kBatchRows that is not last ended at kBatchBytes)
    bool failed = false;  // reading failed after these rows, for `error`
    std::string error;
  };
  // A batch ends at 2,048 rows or once its texts pass 4 MB (NVTX texts can be long): three batches
  // are what the read-ahead holds.
  static constexpr size_t kBatchRows = 2048, kBatchBytes = 4u << 20;

  [[noreturn]] void fail(const std::string& why) const {
    throw LoadError(fmt::format("{}: table {}, row {}: cannot read: {}", path_, table_, row_ + 1, why));
  }

  void fill(Batch& b) {
    b.rows = 0;
    b.last = b.failed = false;
    b.error.clear();
    b.bytes.clear();
    b.cells.resize(kBatchRows * width_);
    while (b.rows < kBatchRows && b.bytes.size() < kBatchBytes) {
      const int rc = sqlite3_step(q_);
      if (rc == SQLITE_DONE) {
        b.last = true;
        return;
      }
      if (rc != SQLITE_ROW) {
        b.last = b.failed = true;
        b.error = sqlite3_errmsg(db_);
        return;
      }
      Cell* row = &b.cells[b.rows * width_];
      for (size_t c = 0; c < width_; ++c) {
        Cell& cell = row[c];
        // One sqlite3_column_value per cell, read through the value's accessors: each
        // sqlite3_column_* call finds the column and checks for a failed allocation on its own
        // (the two calls a cell and their checks were about a third of this thread's samples).
        sqlite3_value* v = sqlite3_column_value(q_, (int)c);
        cell.type = sqlite3_value_type(v);
        if (cell.type == SQLITE_NULL) continue;
        if (cell.type == SQLITE_INTEGER) {
          cell.i = sqlite3_value_int64(v);
          continue;
        }
        const char* t = (const char*)sqlite3_value_text(v);
        const size_t len = t ? (size_t)sqlite3_value_bytes(v) : 0;
        if (b.bytes.size() + len > UINT32_MAX) {  // (offsets are 32-bit: a row's texts past 4 GB)
          b.last = b.failed = true;
          b.error = "a row's texts over 4 GB";
          return;
        }
        cell.at = (uint32_t)b.bytes.size(), cell.len = (uint32_t)len;
        b.bytes.append(t ? t : "", len);
      }
      ++b.rows;
    }
  }

  // The reading thread; where the system refuses a thread, the scan steps the table itself.
  void start_ahead() {
    free_.reserve(std::size(batches_)), ready_.reserve(std::size(batches_));
    for (Batch& b : batches_) free_.push_back(&b);
    try {
      ahead_ = std::thread([this] {
        for (;;) {
          Batch* b;
          {
            std::unique_lock<std::mutex> l(mu_);
            moved_.wait(l, [&] { return stop_ || !free_.empty(); });
            if (stop_) return;
            b = free_.back();
            free_.pop_back();
          }
          try {
            fill(*b);
          } catch (const std::exception& e) {  // (bad_alloc: the scan reports it, not std::terminate)
            b->last = b->failed = true;
            try {
              b->error = e.what();
            } catch (...) {
            }
          }
          {
            std::lock_guard<std::mutex> l(mu_);
            ready_.push_back(b);  // (reserved for every batch: no allocation)
          }
          moved_.notify_all();
          if (b->last) return;
        }
      });
    } catch (const std::system_error&) {
      ahead_wanted_ = false;
    }
  }

  bool next_batch() {
    if (cur_ && cur_->last) {
      if (cur_->failed) fail(cur_->error.empty() ? "out of memory" : cur_->error);
      return false;
    }
    std::unique_lock<std::mutex> l(mu_);
    if (cur_) free_.push_back(cur_);
    moved_.notify_all();
    moved_.wait(l, [&] { return !ready_.empty(); });
    cur_ = ready_.front();
    ready_.erase(ready_.begin());
    l.unlock();
    at_ = 0;
    if (cur_->rows > 0) return ++row_, true;
    return next_batch();  // (an empty batch is the last: once)
  }

  sqlite3* db_;
  std::string table_, path_;
  sqlite3_stmt* q_ = nullptr;
  std::map<std::string, int> columns_;
  size_t width_ = 0;
  int64_t row_ = 0;
  // Read ahead (above): three batches, one read here, one waiting, one being filled.
  bool ahead_wanted_ = false;
  Batch batches_[3];
  Batch* cur_ = nullptr;
  size_t at_ = 0;                             // cur_'s row
  mutable std::vector<std::string> numbers_;  // s() of an integer read ahead, per column
  std::mutex mu_;
  std::condition_variable moved_;
  std::vector<Batch*> free_;
  std::vector<Batch*> ready_;  // in the order filled
  bool stop_ = false;
  std::thread ahead_;
};

// nsys's serialized global thread id: (pid << 24 | tid) above a hardware id in bits 48 and up.
int64_t pid_of(int64_t global) { return global == kNull ? kNull : (global >> 24) & 0xFFFFFF; }
int64_t tid_of(int64_t global) { return global == kNull ? kNull : global & 0xFFFFFF; }

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the name CUPTI's API tables and Kineto give the
// call, so launch rules (graph launches) and a diff against a Kineto trace match names.
std::string_view api_name(std::string_view s) {
  size_t v = s.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= s.size()) return s;
  for (size_t i = v + 2; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return s;
  return s.substr(0, v);
}

// CUPTI's memcpy kinds and synchronization types as nsys labels them (ENUM_CUDA_MEMCPY_OPER,
// ENUM_CUPTI_SYNC_TYPE in schema 3.x), for exports that lack those tables.
const std::map<int64_t, std::string>& builtin_labels(std::string_view table) {
  static const std::map<int64_t, std::string> copy = {{0, "Unknown"},
                                                      {1, "Host-to-Device"},
                                                      {2, "Device-to-Host"},
                                                      {3, "Host-to-Array"},
                                                      {4, "Array-to-Host"},
                                                      {5, "Array-to-Array"},
                                                      {6, "Array-to-Device"},
                                                      {7, "Device-to-Array"},
                                                      {8, "Device-to-Device"},
                                                      {9, "Host-to-Host"},
                                                      {10, "Peer-to-Peer"},
                                                      {11, "Unified Host-to-Device"},
                                                      {12, "Unified Device-to-Host"},
                                                      {13, "Unified Device-to-Device"}};
  static const std::map<int64_t, std::string> sync = {
      {0, "Unknown"}, {1, "Event sync"}, {2, "Stream wait sync"}, {3, "Stream sync"}, {4, "Context sync"}};
  static const std::map<int64_t, std::string> none;
  return table == "ENUM_CUDA_MEMCPY_OPER" ? copy : table == "ENUM_CUPTI_SYNC_TYPE" ? sync : none;
}

class Reader : public TraceReader {
 public:
  Reader(const std::string& path, size_t chunk_bytes) : path_(path), chunk_bytes_(chunk_bytes) {}
  ~Reader() override { sqlite3_close(db_); }

  void scan(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare,
            Health& health) override {
    std::string error;
    db_ = open_foreign_database(path_, error);
    if (!db_) throw LoadError(fmt::format("{}: cannot open the Nsight Systems export: {}", path_, error));
    {
      Statement q(db_, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')");
      while (q.step()) tables_.insert((const char*)sqlite3_column_text(q.get(), 0));
    }
    if (!claims_database(tables_))
      throw NotATrace(fmt::format("{}: not a trace: an Nsight Systems export without a {} table", path_, kKernelTable));
    health_ = &health;
    Writer out(emit, spare, chunk_bytes_);
    out.encode_keys(keys_);
    out_ = &out;
    read_strings();
    read_metadata();
    std::string not_read;
    for (const std::string& t : tables_)
      if (!read_table(t) && !metadata_table(t)) not_read += (not_read.empty() ? "" : ", ") + t;
    count_processes();
    if (tables_.count(std::string(kKernelTable))) gpu_table(std::string(kKernelTable), "kernel");
    if (tables_.count(std::string(kGraphTable))) gpu_table(std::string(kGraphTable), "kernel");
    for (const char* t :
         {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"})
      if (tables_.count(t))
        gpu_table(t, t == std::string("CUPTI_ACTIVITY_KIND_MEMCPY")   ? "gpu_memcpy"
                     : t == std::string("CUPTI_ACTIVITY_KIND_MEMSET") ? "gpu_memset"
                                                                      : "cuda_sync");
    if (tables_.count("CUPTI_ACTIVITY_KIND_RUNTIME")) runtime();
    if (tables_.count("NVTX_EVENTS")) nvtx();
    out.flush();
    if (!not_read.empty())
      health.add("nsys_tables_not_read", -1, "tables of the export tlsql does not map to events: " + not_read);
    if (!missing_.empty())
      health.add("nsys_columns_missing", -1,
                 "columns the export lacks (read as NULL; another schema version): " + missing_);
  }

  // With two threads or more, the big tables are read ahead (Rows::read_ahead): one thread more
  // than the load's while a table is read (docs/usage.md, --threads).
  void use_threads(size_t threads) override { read_ahead_ = threads > 1; }
  // The rows' args are written keyed as the scan makes them (the parse threads copy them).
  void use_keys(StringPool::Cache* keys) override { keys_ = keys; }

  std::unique_ptr<ChunkParser> parser(const RowSink& sink) override { return event_records::parser(sink, path_); }

  void finish(LoadedTrace& trace, Health& health) override {
    trace.metadata = std::move(metadata_);
    if (trace.rows.empty()) health.add("no_events", -1, "the Nsight Systems export holds no rows tlsql reads");
  }

 private:
  void note_missing(const Rows& rows, const std::string& table, std::initializer_list<const char*> columns) {
    for (const char* c : columns)
      if (!rows.has(c)) missing_ += fmt::format("{}{}.{}", missing_.empty() ? "" : ", ", table, c);
  }

  void read_strings() {
    if (!tables_.count("StringIds")) return;
    Rows r(db_, "StringIds", path_);
    if (read_ahead_) r.read_ahead();
    int id = r.column("id"), value = r.column("value");
    while (r.step())
      if (int64_t i = r.i(id); i != kNull) strings_[i] = std::string(r.s(value));
  }
  std::string_view string(int64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }
  // The key the parser interns the name of StringIds id `id` by (event_records::Writer::begin):
  // once per name, not once per row (a kernel's name runs to hundreds of bytes, checked and
  // hashed on every row before); 0 for a name that is not clean (checked on each row).
  // `keys`: name_keys_ for names as StringIds gives them, api_keys_ for api_name()'s cut of them
  // (one id, two names: each key names one).
  uint32_t name_key(std::unordered_map<int64_t, uint32_t>& keys, int64_t id, std::string_view name) {
    auto [it, added] = keys.try_emplace(id, 0);
    if (added && Writer::clean(name)) it->second = ++last_key_;
    return it->second;
  }
  // An enum table's label (ENUM_CUDA_MEMCPY_OPER: 1 -> "Host-to-Device").
  std::map<int64_t, std::string> enum_labels(const std::string& table) {
    std::map<int64_t, std::string> out;
    if (!tables_.count(table)) return builtin_labels(table);
    Rows r(db_, table, path_);
    int id = r.column("id"), label = r.has("label") ? r.column("label") : r.column("name");
    while (r.step()) out[r.i(id)] = std::string(r.s(label));
    return out;
  }

  void read_metadata() {
    std::string meta = "{\"profiler\":\"nsys\",\"nsys\":{";
    bool first = true;
    if (tables_.count("META_DATA_EXPORT")) {
      Rows r(db_, "META_DATA_EXPORT", path_);
      int name = r.column("name"), value = r.column("value");
      while (r.step()) {
        if (r.s(name).empty()) continue;
        if (!first) meta += ',';
        first = false;
        kineto_text::escape(meta, r.s(name));
        meta += ':';
        kineto_text::escape(meta, r.s(value));
        if (r.s(name) == "EXPORT_SCHEMA_VERSION") schema_ = r.s(value);
      }
    }
    meta += "},\"deviceProperties\":[";
    read_cuda_devices();
    // The GPUs: TARGET_INFO_GPU, keyed by id; exports of early 2021 have TARGET_INFO_CUDA_GPU instead,
    // keyed by the deviceId the GPU tables write, its columns named as CUDA's device properties.
    const std::string gpus = tables_.count("TARGET_INFO_GPU")        ? "TARGET_INFO_GPU"
                             : tables_.count("TARGET_INFO_CUDA_GPU") ? "TARGET_INFO_CUDA_GPU"
                                                                     : "";
    if (!gpus.empty()) {
      Rows r(db_, gpus, path_);
      const int id_column = gpus == "TARGET_INFO_CUDA_GPU" && r.has("deviceId") ? r.column("deviceId") : r.column("id");
      std::set<int64_t> seen;
      bool first_gpu = true;
      while (r.step()) {
        int64_t id = r.i(id_column);
        if (id == kNull || !seen.insert(id).second) continue;  // one row per GPU (per VM in some versions)
        if (!first_gpu) meta += ',';
        first_gpu = false;
        fmt::format_to(std::back_inserter(meta), "{{\"id\":{},\"name\":", id);
        kineto_text::escape(meta, r.s(r.column("name")));
        // The table's columns under the deviceProperties names the device table reads (each name
        // once: the first column of the two tables' spellings that the export has).
        static constexpr std::pair<const char*, const char*> kFields[] = {
            {"totalMemory", "totalGlobalMem"},          {"smCount", "numSms"},
            {"numMultiprocessors", "numSms"},           {"computeMajor", "computeMajor"},
            {"computeCapabilityMajor", "computeMajor"}, {"computeMinor", "computeMinor"},
            {"computeCapabilityMinor", "computeMinor"}, {"threadsPerWarp", "warpSize"},
            {"numThreadsPerWarp", "warpSize"},          {"maxThreadsPerBlock", "maxThreadsPerBlock"},
            {"maxShmemPerBlock", "sharedMemPerBlock"},  {"maxRegistersPerBlock", "regsPerBlock"}};
        std::set<std::string_view> written;
        for (auto [from, to] : kFields)
          if (int64_t v = r.i(r.column(from)); v != kNull && written.insert(to).second) {
            meta += ',';
            kineto_text::escape(meta, to);
            fmt::format_to(std::back_inserter(meta), ":{}", v);
          }
        meta += '}';
      }
    } else {
      health_->add("nsys_no_gpu_info", -1,
                   "no TARGET_INFO_GPU (or TARGET_INFO_CUDA_GPU) table: devices have no names, so no gpu_spec peaks "
                   "apply");
    }
    meta += "]}";
    metadata_ = std::move(meta);
    if (!schema_.empty() && !schema_.starts_with("3."))
      health_->add("nsys_schema_unknown", -1,
                   fmt::format("export schema {} (tlsql knows 3.x): loaded what the tables it knows give", schema_));
  }

  // CUPTI's deviceId is the CUDA device as its process numbered it, after CUDA_VISIBLE_DEVICES: two
  // ranks given one GPU each both write 0. TARGET_INFO_CUDA_DEVICE maps a process's CUDA device
  // (pid, cudaId) to the GPU (gpuId, TARGET_INFO_GPU's id), which is the row's device. Without
  // that table (older exports, the shared ones) deviceId is the device, as before.
  void read_cuda_devices() {
    if (!tables_.count("TARGET_INFO_CUDA_DEVICE")) return;
    Rows r(db_, "TARGET_INFO_CUDA_DEVICE", path_, {"gpuId", "cudaId", "pid"});
    const int gpu = r.column("gpuId"), cuda = r.column("cudaId"), pid = r.column("pid");
    if (gpu < 0 || cuda < 0) return;
    by_process_ = pid >= 0;
    while (r.step()) {
      const int64_t g = r.i(gpu), c = r.i(cuda), p = pid < 0 ? kNull : r.i(pid);
      if (c == kNull) continue;
      auto [it, added] = gpu_of_cuda_.try_emplace({p, c}, g);
      // Per process, the entry that names a GPU (the last). Without a pid column, a CUDA device
      // the table maps to one GPU is that GPU; one mapped two ways, or to no GPU, is not mapped.
      if (by_process_) {
        if (g != kNull) it->second = g;
      } else if (!added && it->second != g) {
        it->second = kNull;
      }
    }
  }
  // The GPU of a row's CUDA device; `global` its globalPid.
  int64_t gpu_of(int64_t cuda, int64_t global) {
    if (cuda == kNull || gpu_of_cuda_.empty()) return cuda;
    // Per process: a row of a process the table does not list (or of none) is not mapped.
    if (auto it = gpu_of_cuda_.find({by_process_ ? pid_of(global) : kNull, cuda});
        it != gpu_of_cuda_.end() && it->second != kNull)
      return it->second;
    health_->add("nsys_device_unmapped", (int64_t)out_->rows(),
                 "GPU rows whose process and CUDA device TARGET_INFO_CUDA_DEVICE does not map to a GPU: device "
                 "kept as the process numbered it (processes given different GPUs may then share a number)");
    return cuda;
  }

  // Kernels, memcpys, memsets, synchronizations: pid the device, tid the stream (Kineto's GPU rows).
  void gpu_table(const std::string& table, std::string_view cat) {
    Rows r(db_, table, path_,
           {"start",
            "end",
            "deviceId",
            "streamId",
            "correlationId",
            "contextId",
            "demangledName",
            "shortName",
            "mangledName",
            "bytes",
            "gridX",
            "gridY",
            "gridZ",
            "blockX",
            "blockY",
            "blockZ",
            "registersPerThread",
            "staticSharedMemory",
            "dynamicSharedMemory",
            "copyKind",
            "syncType",
            "graphId",
            "graphExecId",
            "globalPid"});
    if (!r.has("start") || !r.has("end")) {
      health_->add("nsys_table_skipped", -1, table + " has no start / end columns: not read");
      return;
    }
    note_missing(r, table, {"deviceId", "streamId", "correlationId"});
    const int start = r.column("start"), end = r.column("end"), device = r.column("deviceId"),
              stream = r.column("streamId"), corr = r.column("correlationId"), context = r.column("contextId"),
              process = r.column("globalPid");
    const int demangled = r.column("demangledName"), shortname = r.column("shortName"),
              mangled = r.column("mangledName"), bytes = r.column("bytes");
    const int gx = r.column("gridX"), gy = r.column("gridY"), gz = r.column("gridZ"), bx = r.column("blockX"),
              by = r.column("blockY"), bz = r.column("blockZ"), regs = r.column("registersPerThread"),
              shm_s = r.column("staticSharedMemory"), shm_d = r.column("dynamicSharedMemory"),
              copy_kind = r.column("copyKind"), sync_type = r.column("syncType"), graph = r.column("graphId"),
              graph_exec = r.column("graphExecId");
    const bool graph_trace = table == kGraphTable;
    const bool kernel = cat == "kernel" && !graph_trace;
    if (kernel && demangled < 0 && shortname < 0 && mangled < 0)
      missing_ += (missing_.empty() ? "" : ", ") + table + ".demangledName";
    std::map<int64_t, std::string> labels = cat == "gpu_memcpy"  ? enum_labels("ENUM_CUDA_MEMCPY_OPER")
                                            : cat == "cuda_sync" ? enum_labels("ENUM_CUPTI_SYNC_TYPE")
                                                                 : std::map<int64_t, std::string>();
    std::string buf;  // a name made here
    std::string_view name;
    const int64_t first_row = (int64_t)out_->rows();
    if (read_ahead_) r.read_ahead();
    while (r.step() && !out_->stopped()) {
      uint32_t key = 0;
      if (graph_trace) {
        // A whole graph launch on its stream: GPU work as a kernel is (busy time, timelines,
        // summary), named so that it reads as a graph, linked to its cudaGraphLaunch.
        name = buf = r.i(graph) != kNull ? fmt::format("CUDA graph {}", r.i(graph)) : std::string("CUDA graph");
      } else if (kernel) {
        name = {};
        bool passed = false;  // a name column the export has gave this row no name
        for (int column : {demangled, shortname, mangled}) {
          if (column < 0) continue;
          const int64_t id = r.i(column);
          if ((name = string(id)).empty()) {
            passed = true;
            continue;
          }
          key = name_key(name_keys_, id, name);
          break;
        }
        if (name.empty()) {
          name = "unknown_kernel";
          health_->add("nsys_missing_name", (int64_t)out_->rows(),
                       "kernels whose name id StringIds lacks: named unknown_kernel");
        } else if (passed) {
          health_->add("nsys_name_fallback", (int64_t)out_->rows(),
                       "kernels whose demangledName (or shortName) is NULL or an id StringIds lacks: named by "
                       "the next of demangledName, shortName, mangledName that StringIds has");
        }
      } else if (cat == "gpu_memcpy") {
        auto it = labels.find(r.i(copy_kind));
        name = buf = "Memcpy " + (it != labels.end() ? it->second : std::string("Unknown"));
      } else if (cat == "gpu_memset") {
        name = "Memset";
      } else {
        auto it = labels.find(r.i(sync_type));
        name = buf = it != labels.end() ? it->second : std::string("Synchronization");
      }
      out_->begin("X", cat, name, key);
      times(r, start, end);
      const int64_t cuda = r.i(device), dev = gpu_of(cuda, r.i(process));
      int64_t str = r.i(stream);
      // CUPTI's "no stream" (a context or device synchronization) is 0xFFFFFFFF in nsys's unsigned
      // column: -1, as Kineto writes it (CUPTI's value read as int32).
      if (str == 0xFFFFFFFFLL) str = -1;
      if (dev != kNull) out_->pid(dev);
      if (str != kNull) out_->tid(str);
      out_->open_args();
      if (dev != kNull) out_->arg("device", dev);
      if (dev != cuda) out_->arg("cuda device", cuda);  // (the process's number for it)
      if (str != kNull) out_->arg("stream", str);
      if (int64_t c = r.i(corr); c != kNull) out_->arg("correlation", correlation(c, r.i(process)));
      if (int64_t c = r.i(context); c != kNull) out_->arg("context", c);
      if (kernel) {
        // (y and z 1 when NULL, as Kineto writes a 1-D grid)
        auto or1 = [&](int c) { return r.i(c) == kNull ? 1 : r.i(c); };
        if (r.i(gx) != kNull) out_->dims_arg("grid", r.i(gx), or1(gy), or1(gz));
        if (r.i(bx) != kNull) out_->dims_arg("block", r.i(bx), or1(by), or1(bz));
        if (int64_t v = r.i(regs); v != kNull) out_->arg("registers per thread", v);
        if (r.i(shm_s) != kNull || r.i(shm_d) != kNull)
          out_->arg("shared memory", (r.i(shm_s) == kNull ? 0 : r.i(shm_s)) + (r.i(shm_d) == kNull ? 0 : r.i(shm_d)));
        if (std::string_view s = string(r.i(shortname)); !s.empty()) out_->text_arg("short name", s);
        if (int64_t g = r.i(graph); g != kNull) out_->arg("graph id", g);
      }
      if (graph_trace) {
        if (int64_t g = r.i(graph); g != kNull) out_->arg("graph id", g);
        if (int64_t g = r.i(graph_exec); g != kNull) out_->arg("graph exec id", g);
      }
      if (int64_t b = r.i(bytes); b != kNull) out_->arg("bytes", b);
      out_->end();
    }
    if (graph_trace && (int64_t)out_->rows() > first_row)
      health_->add("nsys_graph_level_trace", first_row,
                   "CUDA graphs traced at graph level (nsys's --cuda-graph-trace=graph): each graph launch is one "
                   "kernel row \"CUDA graph N\" spanning its kernels, which the export does not hold; profile "
                   "with `nsys profile --cuda-graph-trace=node` for the kernels",
                   (int64_t)out_->rows() - first_row);
  }

  // CUPTI numbers correlation ids per process: in an export of several processes the same id
  // links a launch of one process to a kernel of another (the shared 2-GPU exports: 294 kernels
  // matched runtime calls of both processes). There ids are scoped by the process: pid * 10^10 +
  // id (CUPTI's ids are 32-bit; the pid reads as the leading digits); with one process they are
  // kept as nsys wrote them. Ids are scoped only when both sides can be: a GPU table without a
  // globalPid column (older exports) leaves every id as written, else no launch would link.
  void count_processes() {
    if (!tables_.count("CUPTI_ACTIVITY_KIND_RUNTIME")) return;
    Rows r(db_, "CUPTI_ACTIVITY_KIND_RUNTIME", path_, {"globalTid"});
    std::set<int64_t> pids;
    const int tid = r.column("globalTid");
    while (r.step() && pids.size() < 2)
      if (int64_t t = r.i(tid); t != kNull) pids.insert(pid_of(t));
    if (pids.size() < 2) return;
    std::string unscoped;
    for (std::string_view t :
         {kKernelTable, kGraphTable, std::string_view("CUPTI_ACTIVITY_KIND_MEMCPY"),
          std::string_view("CUPTI_ACTIVITY_KIND_MEMSET"), std::string_view("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")})
      if (tables_.count(std::string(t)) && !Rows(db_, std::string(t), path_, {"globalPid"}).has("globalPid"))
        unscoped += (unscoped.empty() ? "" : ", ") + std::string(t);
    scoped_ = unscoped.empty();
    if (!scoped_)
      health_->add("nsys_correlation_unscoped", -1,
                   "a several-process export whose GPU tables lack globalPid (" + unscoped +
                       "): correlation ids kept as written, so a launch may link a call of one process to GPU "
                       "work of another");
  }
  // `global`: the row's globalPid or globalTid (the process in bits 24-47).
  int64_t correlation(int64_t id, int64_t global) {
    if (!scoped_ || id < 0 || id >= kCorrelationScope) return id;
    if (global == kNull) {
      health_->add("nsys_correlation_unscoped", (int64_t)out_->rows(),
                   "rows of a several-process export with no globalPid / globalTid: correlation id kept as "
                   "written (it may match a call of another process)");
      return id;
    }
    return pid_of(global) * kCorrelationScope + id;
  }

  // A row's start and duration; a start without a usable end (NULL, or end - start past int64)
  // leaves dur NULL, counted (a missing start is the row checks' missing_ts).
  void times(const Rows& r, int start, int end) {
    int64_t s = r.i(start), e = r.i(end), dur;
    if (s != kNull) out_->ts(s);
    if (s != kNull && e != kNull && !__builtin_sub_overflow(e, s, &dur))
      out_->dur(dur);
    else if (s != kNull)
      health_->add("nsys_no_end", (int64_t)out_->rows(),
                   "rows with a start but no end (NULL, or too far from the start): dur NULL, so they count in "
                   "no busy time and nest as instants");
  }

  // CUDA runtime and driver API calls on CPU threads; correlationId links each to its GPU work.
  void runtime() {
    const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
    Rows r(db_, table, path_, {"start", "end", "globalTid", "correlationId", "nameId"});
    note_missing(r, table, {"start", "end", "globalTid", "correlationId", "nameId"});
    const int start = r.column("start"), end = r.column("end"), tid = r.column("globalTid"),
              corr = r.column("correlationId"), name_id = r.column("nameId");
    if (read_ahead_) r.read_ahead();
    while (r.step() && !out_->stopped()) {
      const int64_t id = r.i(name_id);
      std::string_view full = string(id);
      std::string_view name = api_name(full);
      // cu* calls are the driver API (cuLaunchKernelEx for Triton kernels), as Kineto files them.
      const bool driver = name.starts_with("cu") && !name.starts_with("cuda");
      if (name.empty())
        out_->begin("X", driver ? "cuda_driver" : "cuda_runtime", "unknown_api");
      else  // (keyed by the full name's id: api_name() cuts the same name from it on every row)
        out_->begin("X", driver ? "cuda_driver" : "cuda_runtime", name, name_key(api_keys_, id, name));
      times(r, start, end);
      thread(r.i(tid));
      out_->open_args();
      if (int64_t c = r.i(corr); c != kNull) out_->arg("correlation", correlation(c, r.i(tid)));
      if (full != name) out_->text_arg("nsys name", full);
      out_->end();
    }
  }

  void thread(int64_t global) {
    if (global == kNull) return;
    out_->pid(pid_of(global));
    out_->tid(tid_of(global));
  }

  // NVTX ranges: emit_nvtx's op ranges become cpu_op events (the call tree, perf models, `ops`);
  // other ranges annotations; marks instants. Ranges never closed have no end: not loaded.
  void nvtx() {
    const std::string table = "NVTX_EVENTS";
    Rows r(db_, table, path_, {"start", "end", "eventType", "text", "textId", "globalTid", "domainId"});
    note_missing(r, table, {"start", "end", "eventType", "text", "globalTid"});
    std::map<int64_t, std::string> types = enum_labels("ENUM_NSYS_EVENT_TYPE");
    const int start = r.column("start"), end = r.column("end"), type = r.column("eventType"), text = r.column("text"),
              text_id = r.column("textId"), tid = r.column("globalTid"), domain = r.column("domainId");
    int64_t open = 0;
    std::map<std::string, int64_t> other;  // records of other types: label -> count
    // NvtxDomainCreate: (process, domainId) -> name (each process numbers its domains from 1).
    std::map<std::pair<int64_t, int64_t>, std::string> domains;
    emit_nvtx::ForwardThreads forward;  // a backward op range's forward thread
    if (read_ahead_) r.read_ahead();    // (the enum table read above: no SQLite call in the loop)
    // What a record of each eventType is, worked out once per type (not by its label's text on
    // every row).
    enum class Is { range, mark, domain, named, other };
    std::unordered_map<int64_t, std::pair<Is, std::string>> kinds;
    auto kind_of = [&](int64_t t) -> const std::pair<Is, std::string>& {
      auto [k, added] = kinds.try_emplace(t);
      if (!added) return k->second;
      auto it = types.find(t);
      // Without the enum table: the ids of schema 3.x (34 mark, 35-38 push, pop, start, end records
      // of their own, 59 push/pop, 60 start/end, 65 NVTXT mark, 70 / 71 NVTXT ranges, 75 domain).
      std::string_view label = it != types.end() ? std::string_view(it->second)
                               : t == 34         ? "NvtxMark"
                               : t == 35         ? "NvtxPushRange"
                               : t == 36         ? "NvtxPopRange"
                               : t == 37         ? "NvtxStartRange"
                               : t == 38         ? "NvtxEndRange"
                               : t == 59         ? "NvtxPushPopRange"
                               : t == 60         ? "NvtxStartEndRange"
                               : t == 65         ? "NvtxtMark"
                               : t == 70         ? "NvtxtPushPopRange"
                               : t == 71         ? "NvtxtStartEndRange"
                               : t == 75         ? "NvtxDomainCreate"
                                                 : "";
      Is is = Is::other;
      if (label == "NvtxPushPopRange" || label == "NvtxStartEndRange" || label == "NvtxtPushPopRange" ||
          label == "NvtxtStartEndRange")
        is = Is::range;
      else if (label == "NvtxMark" || label == "NvtxtMark")
        is = Is::mark;
      else if (label == "NvtxDomainCreate")
        is = Is::domain;
      // Category, naming and thread records name things and are no event; others (push and pop
      // records of their own, types of later schemas) are counted.
      else if (label.starts_with("NvtxCategory") || label.starts_with("NvtxtCategory") ||
               label.starts_with("NvtxName") || label.starts_with("NvtxtMeta") || label == "NvtxThread" ||
               label == "NvtxDomainDestroy")
        is = Is::named;
      k->second = {is, !label.empty() ? std::string(label)
                       : t == kNull   ? std::string("without an eventType")
                                      : "eventType " + std::to_string(t)};
      return k->second;
    };
    while (r.step() && !out_->stopped()) {
      const auto& [is, label] = kind_of(r.i(type));
      const bool range = is == Is::range, mark = is == Is::mark;
      if (is == Is::domain) {
        std::string_view s = r.s(text);
        domains[{pid_of(r.i(tid)), r.i(domain)}] = std::string(s.empty() ? string(r.i(text_id)) : s);
        continue;
      }
      if (!range && !mark) {
        if (is == Is::other) ++other[label];
        continue;
      }
      if (range && r.i(end) == kNull) {
        ++open;
        continue;
      }
      std::string_view s = r.s(text);
      if (s.empty()) s = string(r.i(text_id));
      std::optional<emit_nvtx::OpRange> op = range ? emit_nvtx::op_range(s) : std::nullopt;
      const int64_t global = r.i(tid);
      const int64_t fwd_tid = op ? forward.fwd_tid(*op, pid_of(global), tid_of(global)) : kNull;
      if (op && !op->user)
        out_->begin("X", "cpu_op", op->name, 0, s);
      else  // a record_function range keeps its name without emit_nvtx's fields
        out_->begin(mark ? "i" : "X", "user_annotation",
                    op          ? op->name
                    : s.empty() ? std::string_view("nvtx")
                                : s,
                    0, s);
      times(r, start, range ? end : start);
      thread(global);
      out_->open_args();
      if (op) emit_nvtx::write_args(*out_, *op, fwd_tid, s);
      // The range's NVTX domain by the name its NvtxDomainCreate record gave (an id with no such
      // record names nothing a user could tell apart: left out).
      if (int64_t d = r.i(domain); d != kNull && d != 0)
        if (auto dn = domains.find({pid_of(global), d}); dn != domains.end() && !dn->second.empty())
          out_->text_arg("domain", dn->second);
      out_->end();
    }
    if (open)
      health_->add("nsys_nvtx_unclosed", -1,
                   fmt::format("{} NVTX ranges with no end (never popped or ended): not loaded", open));
    if (!other.empty()) {
      std::string list;
      for (auto& [label, n] : other) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, label);
      health_->add("nsys_nvtx_not_read", -1, "NVTX records of types tlsql does not map to events: " + list);
    }
  }

  std::string path_;
  size_t chunk_bytes_;
  sqlite3* db_ = nullptr;
  Health* health_ = nullptr;
  Writer* out_ = nullptr;
  std::set<std::string> tables_;
  std::unordered_map<int64_t, std::string> strings_;
  std::unordered_map<int64_t, uint32_t> name_keys_, api_keys_;  // name_key
  uint32_t last_key_ = 0;
  std::string metadata_, schema_, missing_;
  bool read_ahead_ = false;            // use_threads
  StringPool::Cache* keys_ = nullptr;  // use_keys
  bool scoped_ = false;                // several processes: correlation ids scoped by process (correlation())
  // (pid, cudaId) -> gpuId, kNull where none (read_cuda_devices); pid kNull without a pid column
  std::map<std::pair<int64_t, int64_t>, int64_t> gpu_of_cuda_;
  bool by_process_ = false;  // TARGET_INFO_CUDA_DEVICE has a pid column
  static constexpr int64_t kCorrelationScope = 10'000'000'000;
};

std::unique_ptr<TraceReader> open(InputSource&, const std::string& path, size_t chunk_bytes) {
  return std::make_unique<Reader>(path, chunk_bytes);
}

bool no_text(std::string_view) { return false; }

}  // namespace

// An export with GPU kernels: eager ones, or only CUDA graphs traced whole (nsys creates a table only
// for records it has: a capture of graph replays alone has GRAPH_TRACE and no KERNEL table).
bool claims_database(const std::set<std::string>& tables) {
  return tables.count(std::string(kKernelTable)) > 0 || tables.count(std::string(kGraphTable)) > 0;
}

constinit const ReaderFormat format = {"nsys_sqlite", no_text, open, claims_database};

}  // namespace tlsql::nsys_sqlite
