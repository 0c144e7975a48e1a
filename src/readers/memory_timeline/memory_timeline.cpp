#include "src/readers/memory_timeline/memory_timeline.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <cstring>
#include <string_view>
#include <vector>

#include "src/json_check.h"
#include "src/json_scan.h"
#include "src/readers/kineto_json/kineto_json.h"
#include "src/readers/kineto_text.h"

namespace tlsql::memory_timeline {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;

// torch.profiler._memory_profiler's _CATEGORY_TO_INDEX order (None, a tensor no rule placed, is 7).
constexpr std::array<std::string_view, 8> kCategories = {"Parameter",  "Optimizer state", "Input",    "Temporary",
                                                         "Activation", "Gradient",        "Autograd", "Unknown"};
// torch's Action enum values (_ACTION_TO_INDEX): 1..4.
constexpr std::array<std::string_view, 5> kActions = {"", "PREEXISTING", "CREATE", "INCREMENT_VERSION", "DESTROY"};

// An integer JSON number (torch writes ints; a float with no fraction is taken too).
bool integer(element e, int64_t& out) {
  if (!e.get_int64().get(out)) return true;
  double d;
  if (!e.get_double().get(d) && d == (double)(int64_t)d) return out = (int64_t)d, true;
  return false;
}

struct Row {
  int64_t ts, action, bytes, category;
};

class Reader : public TraceReader {
 public:
  Reader(InputSource& in, const std::string& path, size_t chunk_bytes)
      : in_(in), path_(path), chunk_bytes_(chunk_bytes) {}

  void scan(const std::function<bool(Chunk&&)>& emit, const std::function<TextBuffer()>& spare,
            Health& health) override {
    kineto_text::ChunkWriter out(emit, spare, chunk_bytes_);
    TextBuffer text = read_all();
    JsonCheck check = check_json(text.data(), text.size());
    if (check.result == JsonCheck::invalid)
      throw LoadError(fmt::format("{}: at byte {}: {}", path_, check.offset, check.message));
    if (check.result == JsonCheck::repairable) text = repair_json(text.data(), text.size(), health);
    simdjson::dom::parser parser;
    element doc;
    if (auto e = parser.parse(text.data(), text.size(), false).get(doc))
      throw LoadError(fmt::format("{}: not JSON: {}", path_, simdjson::error_message(e)));
    array top;
    if (doc.get_array().get(top)) throw NotATrace(fmt::format("{}: not a memory timeline: not a JSON array", path_));
    std::vector<Row> rows;
    // The plot layout, [times, sizes]: two elements, the second an array of arrays (a raw file's
    // second element is a row of numbers).
    array times, sizes;
    element second;
    if (top.size() == 2 && !top.at(0).get_array().get(times) && !top.at(1).get_array().get(sizes) &&
        !sizes.at(0).get(second) && second.is_array()) {
      layout_ = "timeline";
      read_plot_layout(times, sizes, rows, health);
    } else {
      layout_ = "raw";
      read_raw_layout(top, rows, health);
    }
    // Memory that existed before profiling (ts -1) is placed at the first real time, as torch's
    // and HTA's plots place it.
    int64_t t_min = -1;
    for (const Row& r : rows)
      if (r.ts >= 0 && (t_min < 0 || r.ts < t_min)) t_min = r.ts;
    if (t_min < 0) t_min = 0;
    for (const Row& r : rows) {
      out.begin("i", "memory_timeline", kCategories[r.category]);
      out.time("ts", r.ts < 0 ? t_min : r.ts);
      out.field("pid", 0);
      out.field("tid", 0);
      out.raw() += ",\"s\":\"t\"";
      out.open_args();
      if (r.action) out.text_arg("action", kActions[r.action]);  // the plot layout has no action
      out.arg("bytes", r.bytes);
      out.arg("category_index", r.category);
      if (r.ts < 0) out.arg("preexisting", 1);
      out.end();
      if (out.stopped()) return;
    }
    out.flush();
    rows_ = rows.size();
  }

  std::unique_ptr<ChunkParser> parser(const RowSink& sink) override { return kineto_json::event_parser(sink, path_); }

  void finish(LoadedTrace& trace, Health& health) override {
    std::string metadata = "{\"profiler\":\"memory_timeline\",\"layout\":";
    kineto_text::escape(metadata, layout_);
    trace.metadata = metadata + "}";
    if (trace.rows.empty()) health.add("no_events", -1, "the memory timeline holds no rows");
  }

 private:
  // [ts, action, bytes, category] rows; a row of another shape is skipped and counted.
  void read_raw_layout(array top, std::vector<Row>& rows, Health& health) {
    size_t i = 0;
    for (element e : top) {
      array a;
      Row r{};
      element c;
      bool ok = !e.get_array().get(a) && a.size() == 4 && integer(a.at(0).value_unsafe(), r.ts) &&
                integer(a.at(1).value_unsafe(), r.action) && integer(a.at(2).value_unsafe(), r.bytes) &&
                !a.at(3).get(c);
      if (ok) {
        if (c.is_null()) {
          r.category = 7;  // torch: None (no category) is Unknown
        } else if (!integer(c, r.category) || r.category < 0 || r.category > 7) {
          ok = false;
        }
      }
      if (ok && (r.action < 1 || r.action > 4)) ok = false;
      if (!ok) {
        health.add("memory_timeline_bad_row", -1,
                   fmt::format("rows that are not [ts, action 1..4, bytes, category 0..7] integers: skipped "
                               "(the first: element {})",
                               i));
      } else {
        rows.push_back(r);
      }
      ++i;
    }
  }

  // [times, sizes]: per time the bytes of each category; a row per category whose bytes change.
  void read_plot_layout(array times, array sizes, std::vector<Row>& rows, Health& health) {
    if (times.size() != sizes.size())
      throw LoadError(fmt::format("{}: a memory timeline [times, sizes] with {} times and {} sizes: expected as many",
                                  path_, times.size(), sizes.size()));
    std::array<int64_t, 8> held{};
    auto t = times.begin();
    size_t i = 0;
    for (element s : sizes) {
      int64_t ts;
      array per;
      bool ok = integer(*t, ts) && !s.get_array().get(per) && per.size() <= 8;
      std::array<int64_t, 8> now{};
      size_t k = 0;
      if (ok)
        for (element v : per) ok = ok && integer(v, now[k++]);
      if (!ok) {
        health.add("memory_timeline_bad_row", -1,
                   fmt::format("times that are not integers, or sizes that are not up to 8 integers: skipped "
                               "(the first: time {})",
                               i));
      } else {
        for (size_t c = 0; c < 8; ++c)
          if (now[c] != held[c]) rows.push_back({ts, 0, now[c] - held[c], (int64_t)c}), held[c] = now[c];
      }
      ++t, ++i;
    }
  }

  TextBuffer read_all() {
    TextBuffer all;
    size_t size = 0;
    for (;;) {
      size_t n = in_.avail();
      if (all.size() < size + n) all.resize(std::max(size + n, all.size() * 2));
      std::memcpy(all.data() + size, in_.window(), n);
      size += n;
      // A few KB of gzip must not inflate to GBs held here (the pipeline's guard counts rows).
      if (in_.gzip() && size > (size_t{256} << 20) && size > in_.progress() * 200)
        throw LoadError(fmt::format("{}: at byte {}: {} bytes from {} compressed bytes: a gzip bomb, not a trace",
                                    path_, size, size, in_.progress()));
      if (!in_.refill(in_.base() + in_.avail())) break;
    }
    all.resize(size);
    return all;
  }

  InputSource& in_;
  std::string path_;
  size_t chunk_bytes_;
  std::string layout_ = "raw";
  size_t rows_ = 0;
};

std::unique_ptr<TraceReader> open(InputSource& in, const std::string& path, size_t chunk_bytes) {
  return std::make_unique<Reader>(in, path, chunk_bytes);
}

}  // namespace

bool claims(std::string_view head) {
  size_t p = json_scan::text_start(head);
  if (p >= head.size() || head[p] != '[') return false;
  p = json_scan::skip_ws(head.data(), head.size(), p + 1);
  return p < head.size() && head[p] == '[';
}

constinit const ReaderFormat format = {"memory_timeline", claims, open};

}  // namespace tlsql::memory_timeline
