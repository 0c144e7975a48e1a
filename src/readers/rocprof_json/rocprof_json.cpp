#include "src/readers/rocprof_json/rocprof_json.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cstring>
#include <iterator>
#include <optional>
#include <unordered_map>
#include <vector>

#include "src/json_check.h"
#include "src/json_scan.h"
#include "src/readers/kineto_json/kineto_json.h"
#include "src/readers/kineto_text.h"

namespace tlsql::rocprof_json {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// rocprofv3 writes every integer field, but a hand-edited or foreign file may not: a field that is
// absent or not an integer reads as `fallback`.
int64_t int_of(element e, std::string_view key, int64_t fallback = kNull) {
  element v;
  if (e[key].get(v)) return fallback;
  if (int64_t i; !v.get_int64().get(i)) return i;
  if (uint64_t u; !v.get_uint64().get(u)) return (int64_t)u;  // ids past 2^63: their two's complement
  return fallback;
}
// A `{"handle": N}` field (agent, queue, stream ids).
int64_t handle_of(element e, std::string_view key) {
  element v;
  return e[key].get(v) ? kNull : int_of(v, "handle");
}
std::string_view text_of(element e, std::string_view key) {
  std::string_view s;
  return e[key].get_string().get(s) ? std::string_view() : s;
}

using kineto_text::escape;

struct Agent {
  int64_t device = kNull;  // the GPU's index (gpu_index, else its logical node among GPUs); kNull: a CPU
};

class Reader : public TraceReader {
 public:
  Reader(InputSource& in, const std::string& path, size_t chunk_bytes)
      : in_(in), path_(path), chunk_bytes_(chunk_bytes) {}

  void scan(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare,
            Health& health) override {
    out_.emplace(emit, spare, chunk_bytes_);
    health_ = &health;
    TextBuffer text = read_all();
    JsonCheck check = check_json(text.data(), text.size());
    if (check.result == JsonCheck::invalid)
      throw LoadError(fmt::format("{}: at byte {}: {}", path_, check.offset, check.message));
    if (check.result == JsonCheck::repairable) text = repair_json(text.data(), text.size(), health);
    simdjson::dom::parser parser;
    element doc;
    if (auto e = parser.parse(text.data(), text.size(), false).get(doc))
      throw LoadError(fmt::format("{}: not JSON: {}", path_, simdjson::error_message(e)));
    array tools;
    element tool;
    if (doc["rocprofiler-sdk-tool"].get_array().get(tools) || tools.at(0).get(tool) || !tool.is_object())
      throw NotATrace(
          fmt::format("{}: not a trace: \"rocprofiler-sdk-tool\" is not an array holding an object "
                      "(a rocprofv3 JSON result holds one per process)",
                      path_));
    if (tools.size() > 1)
      health.add(
          "rocprof_processes_skipped", -1,
          fmt::format("the file holds {} processes (rocprofiler-sdk-tool entries): the first is read", tools.size()));
    read_tables(tool);
    read_records(tool);
    out_->flush();
  }

  std::unique_ptr<ChunkParser> parser(const RowSink& sink) override { return kineto_json::event_parser(sink, path_); }

  void finish(LoadedTrace& trace, Health& health) override {
    trace.metadata = std::move(metadata_);
    if (trace.rows.empty()) health.add("no_events", -1, "the rocprofv3 result holds no records tlsql reads");
  }

 private:
  TextBuffer read_all() {
    // Copied out of the input's window as it moves: the window would refuse one value this long.
    TextBuffer all;
    size_t size = 0;
    for (;;) {
      size_t n = in_.avail();
      if (all.size() < size + n) all.resize(std::max(size + n, all.size() * 2));
      std::memcpy(all.data() + size, in_.window(), n);
      size += n;
      // A few KB of gzip must not inflate to GBs held here (the pipeline's guard counts rows, which
      // come only after the whole text is read).
      if (in_.gzip() && size > (size_t{256} << 20) && size > in_.progress() * 200)
        throw LoadError(fmt::format("{}: at byte {}: {} bytes from {} compressed bytes: a gzip bomb, not a trace",
                                    path_, size, size, in_.progress()));
      if (!in_.refill(in_.base() + in_.avail())) break;
    }
    all.resize(size);
    return all;
  }

  void read_tables(element tool) {
    element meta;
    const bool has_meta = !tool["metadata"].get(meta) && meta.is_object();
    if (has_meta) pid_ = int_of(meta, "pid", 0);
    array list;
    std::string devices;  // deviceProperties entries: GPU names (gpu_spec peaks), CU counts, wave size
    int64_t gpus = 0;
    if (!tool["agents"].get_array().get(list))
      for (element a : list) {
        int64_t handle = handle_of(a, "id");
        if (handle == kNull) continue;
        Agent& agent = agents_[handle];
        if (int_of(a, "type") != 2) continue;  // HSA_DEVICE_TYPE_GPU
        int64_t index = int_of(a, "gpu_index", -1);
        agent.device = index >= 0 ? index : gpus;
        ++gpus;
        std::string_view product = text_of(a, "product_name");
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
    if (!tool["kernel_symbols"].get_array().get(list))
      for (element k : list) {
        int64_t id = int_of(k, "kernel_id");
        if (id != kNull) symbols_[id] = k;
      }
    element strings;
    if (!tool["strings"].get(strings)) {
      if (!strings["buffer_records"].get_array().get(list))
        for (element kind : list) {
          auto& ops = operations_.emplace_back();
          array names;
          if (!kind["operations"].get_array().get(names))
            for (element n : names) ops.push_back(n.is_string() ? std::string_view(n) : std::string_view());
        }
      if (!strings["marker_api"].get_array().get(list))
        for (element m : list) markers_[int_of(m, "key")] = text_of(m, "value");
    }
    // The trace row: which profiler made the file, its own metadata (command, node, times), devices.
    metadata_ = "{\"profiler\":\"rocprofv3\",\"rocprofv3\":" + (has_meta ? simdjson::minify(meta) : "{}") +
                ",\"deviceProperties\":[" + devices + "]}";
  }

  std::string_view operation(int64_t kind, int64_t op) const {
    if (kind < 0 || op < 0 || kind >= (int64_t)operations_.size() || op >= (int64_t)operations_[kind].size()) return {};
    return operations_[kind][op];
  }

  void read_records(element tool) {
    object records;
    if (tool["buffer_records"].get_object().get(records)) {
      health_->add("rocprof_no_buffer_records", -1, "no buffer_records object: no kernels, API calls or copies");
      return;
    }
    std::string skipped;
    for (auto [key, value] : records) {
      array list;
      if (value.get_array().get(list)) continue;
      if (key == "kernel_dispatch") {
        for (element r : list) kernel(r);
      } else if (key == "hip_api" || key == "hsa_api" || key == "rccl_api") {
        for (element r : list) api(r, key);
      } else if (key == "marker_api") {
        for (element r : list) marker(r);
      } else if (key == "memory_copy") {
        for (element r : list) copy(r);
      } else if (list.size() > 0) {
        skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", list.size(), key);
      }
    }
    if (!skipped.empty())
      health_->add("rocprof_records_not_read", -1,
                   fmt::format("buffer records of kinds tlsql does not map to events, not loaded: {}", skipped));
  }

  // The fields every record shares: phase, category, name, times (kineto_text's writer).
  void begin(element r, std::string_view cat, std::string_view name) {
    out_->begin("X", cat, name);
    int64_t start = int_of(r, "start_timestamp"), end = int_of(r, "end_timestamp");
    if (start != kNull) out_->time("ts", start);
    int64_t dur;
    if (start != kNull && end != kNull && !__builtin_sub_overflow(end, start, &dur)) {
      out_->time("dur", dur);
      if (dur == 0)
        health_->add("rocprof_zero_duration", (int64_t)out_->rows(),
                     "records whose end_timestamp equals their start_timestamp: kept as zero-length events");
    }
  }
  // Args members that are absent (kNull, "") are left out.
  void int_arg(std::string_view k, int64_t v) {
    if (v != kNull) out_->arg(k, v);
  }
  void text_arg(std::string_view k, std::string_view v) {
    if (!v.empty()) out_->text_arg(k, v);
  }
  void correlation(element r, std::string_view k) {
    element c;
    if (r["correlation_id"].get(c)) return;
    int_arg(k, int_of(c, "internal"));
    if (int64_t ext = int_of(c, "external", 0); ext != 0) int_arg("external correlation", ext);
  }
  void thread(element r) {
    out_->field("pid", pid_);
    if (int64_t t = int_of(r, "thread_id"); t != kNull) out_->field("tid", t);
  }
  // The device of a GPU agent; kNull (and counted) for a handle no agent has.
  int64_t device_of(int64_t handle, bool count) {
    auto it = agents_.find(handle);
    if (it == agents_.end() && count)
      health_->add("rocprof_unknown_agent", (int64_t)out_->rows(),
                   "records on an agent handle the agents list lacks: device NULL, pid is the handle");
    return it == agents_.end() ? kNull : it->second.device;
  }
  bool object_or_count(element r) {
    if (r.is_object()) return true;
    health_->add("rocprof_bad_record", -1, "buffer records that are not objects: skipped (no row)");
    return false;
  }

  void kernel(element r) {
    if (!object_or_count(r)) return;
    element info;
    const bool has_info = !r["dispatch_info"].get(info) && info.is_object();
    int64_t kid = has_info ? int_of(info, "kernel_id") : kNull;
    std::string_view name, truncated, mangled;
    if (auto it = symbols_.find(kid); it != symbols_.end()) {
      // formatted_kernel_name: demangled, without the " [clone .kd]" of demangled_kernel_name (the
      // form Kineto's ROCm traces name kernels by, so a diff across the two matches names);
      // truncated_kernel_name drops template arguments (TraceLens's key) and is kept in args.
      name = text_of(it->second, "formatted_kernel_name");
      truncated = text_of(it->second, "truncated_kernel_name");
      mangled = text_of(it->second, "kernel_name");
      if (name.empty()) name = !truncated.empty() ? truncated : mangled;
    }
    std::string unknown;
    if (name.empty()) {
      unknown = fmt::format("unknown_kernel_{}", kid == kNull ? std::string("none") : std::to_string(kid));
      name = unknown;
      health_->add("rocprof_missing_symbol", (int64_t)out_->rows(),
                   "kernel dispatches whose kernel_id no kernel_symbols entry names: named unknown_kernel_ID");
    }
    int64_t agent = has_info ? handle_of(info, "agent_id") : kNull;
    int64_t device = device_of(agent, true);
    int64_t queue = has_info ? handle_of(info, "queue_id") : kNull;
    begin(r, "kernel", name);
    // Kineto's GPU rows: pid the device, tid the stream (here the HSA queue the kernel ran on).
    int64_t pid = device != kNull ? device : agent;
    if (pid != kNull) out_->field("pid", pid);
    if (queue != kNull) out_->field("tid", queue);
    out_->open_args();
    int_arg("device", device);
    int_arg("stream", queue);
    correlation(r, "correlation");
    if (has_info) {
      auto dim3 = [&](std::string_view field, std::string_view as) {
        element d;
        if (info[field].get(d)) return;
        out_->key(as);
        fmt::format_to(std::back_inserter(out_->raw()), "[{},{},{}]", int_of(d, "x", 1), int_of(d, "y", 1),
                       int_of(d, "z", 1));
      };
      // grid_size counts work-items, as HIP's and Kineto's ROCm "grid" do; workgroup_size is the block.
      dim3("grid_size", "grid");
      dim3("workgroup_size", "block");
      int_arg("shared memory", int_of(info, "group_segment_size"));
      int_arg("private segment size", int_of(info, "private_segment_size"));
      int_arg("dispatch id", int_of(info, "dispatch_id"));
      int_arg("kernel id", kid);
    }
    int_arg("queue", queue);
    int_arg("hip stream", handle_of(r, "stream_id"));
    int_arg("agent", agent);
    text_arg("truncated name", truncated);
    text_arg("mangled name", mangled);
    int_arg("thread", int_of(r, "thread_id"));
    out_->end();
  }

  void api(element r, std::string_view section) {
    if (!object_or_count(r)) return;
    int64_t op = int_of(r, "operation", -1);
    std::string_view name = operation(int_of(r, "kind", -1), op);
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
    std::string_view op_name = operation(int_of(r, "kind", -1), int_of(r, "operation", -1));
    // roctx ranges and marks are named by their message (strings.marker_api, keyed by correlation id).
    auto it = markers_.find(id);
    std::string_view name = it != markers_.end() && !it->second.empty() ? it->second : op_name;
    begin(r, "user_annotation", name.empty() ? std::string_view("roctx") : name);
    thread(r);
    out_->open_args();
    text_arg("operation", op_name);
    int_arg("marker correlation", id);
    out_->end();
  }

  void copy(element r) {
    if (!object_or_count(r)) return;
    int64_t op = int_of(r, "operation", -1);
    std::string_view name = operation(int_of(r, "kind", -1), op);
    std::string fallback;
    if (name.empty()) fallback = fmt::format("MEMORY_COPY operation {}", op), name = fallback;
    int64_t dst = handle_of(r, "dst_agent_id"), src = handle_of(r, "src_agent_id");
    // A copy belongs to the GPU it writes to, else to the GPU it reads from (device to host).
    int64_t device = device_of(dst, false);
    if (device == kNull) device = device_of(src, false);
    if (!agents_.count(dst) && !agents_.count(src)) device_of(dst, true);
    int64_t stream = handle_of(r, "stream_id");
    begin(r, "gpu_memcpy", name);
    if (device != kNull) out_->field("pid", device);
    if (stream != kNull) out_->field("tid", stream);
    out_->open_args();
    int_arg("device", device);
    int_arg("stream", stream);
    correlation(r, "correlation");
    int_arg("bytes", int_of(r, "bytes"));
    int_arg("src agent", src);
    int_arg("dst agent", dst);
    out_->end();
  }

  InputSource& in_;
  std::string path_;
  size_t chunk_bytes_;
  Health* health_ = nullptr;
  int64_t pid_ = 0;
  std::unordered_map<int64_t, Agent> agents_;
  std::unordered_map<int64_t, element> symbols_;
  std::vector<std::vector<std::string_view>> operations_;  // strings.buffer_records[kind].operations
  std::unordered_map<int64_t, std::string_view> markers_;
  std::string metadata_;
  std::optional<kineto_text::ChunkWriter> out_;  // the events, as Kineto text, in chunks
};

std::unique_ptr<TraceReader> open(InputSource& in, const std::string& path, size_t chunk_bytes) {
  return std::make_unique<Reader>(in, path, chunk_bytes);
}

}  // namespace

bool claims(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  size_t p = json_scan::skip_ws(head.data(), head.size(), 0);
  if (p >= head.size() || head[p] != '{') return false;
  p = json_scan::skip_ws(head.data(), head.size(), p + 1);
  return head.substr(p).starts_with("\"rocprofiler-sdk-tool\"");
}

constinit const ReaderFormat format = {"rocprof_json", claims, open};

}  // namespace tlsql::rocprof_json
