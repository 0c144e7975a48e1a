// kernel_totals([schema]): the kernels per (trace, device, stream, class, name) with their count
// and summed duration, i.e. `SELECT trace, device, stream, gpu_class(uid) AS class, name, count(*)
// AS kernels, sum(dur) AS dur, sum(max(dur, 0)) AS positive_dur FROM event WHERE kind = 'kernel'
// GROUP BY 1, 2, 3, 4, 5`, in that order (positive_dur: 0 where no kernel has a dur above 0; the
// loader keeps a negative dur as recorded, `health` negative_dur, and the GPU time counts it as 0).
// A sum past int64 is clamped at its limit (hostile durations), where sum() stops with an error:
// the note reading it must still be said. The streams' notes
// read it (about_report.sql: which stream's kernels no rule names): in SQL they scanned every kernel once per stream
// beside the busiest and called gpu_class per kernel, 0.1-0.2 s on 200 MB traces with 40-70 k kernels, where one pass
// here takes milliseconds. One path for both sources (EventSource): a loaded trace's store read in place, a saved
// database's event table through one statement; each kernel classed as gpu_class classes it
// (SchemaGpuClasses::of_view, tlsql's rule: the schema's kernel rules, then what launched it).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/kind.h"
#include "src/trace_model.h"
#include "udf/gpu_class_schema.h"
#include "udf/table_function.h"
#include "udf/tree/tree_access.h"

namespace tlsql {
namespace {

struct KernelTotals {
  struct Row {
    int64_t trace;
    std::optional<int64_t> device, stream;
    const char* cls;
    const std::string* name;  // nullptr: NULL
    int64_t kernels;
    std::optional<int64_t> dur;
    int64_t positive_dur;
  };
  static constexpr TableArgument arguments[] = {{"arg_schema", "schema"}};
  static auto columns() {
    return std::to_array<TableColumn<KernelTotals, Row>>({
        {"trace", "INTEGER", field<&Row::trace>},
        {"device", "INTEGER", field<&Row::device>},
        {"stream", "INTEGER", field<&Row::stream>},
        {"class", "TEXT", field<&Row::cls>},
        {"name", "TEXT",
         [](sqlite3_context* c, KernelTotals&, const Row& r) { r.name ? result(c, *r.name) : sqlite3_result_null(c); }},
        {"kernels", "INTEGER", field<&Row::kernels>},
        {"dur", "INTEGER", field<&Row::dur>},
        {"positive_dur", "INTEGER", field<&Row::positive_dur>},
    });
  }

  std::vector<Row> rows(const TableCall& call) {
    std::unique_ptr<EventSource> own;
    EventSource& events = event_source(call.db, call.arg(0), own);
    const std::shared_ptr<SchemaGpuClasses> classes = gpu_classes_for(call.db, events.schema());
    struct Key {
      int64_t trace, device, stream;
      uint32_t name;
      GpuClass cls;
      bool operator==(const Key&) const = default;
    };
    struct KeyHash {
      size_t operator()(const Key& k) const {
        uint64_t h = (uint64_t)k.trace * 0x9E3779B97F4A7C15ull;
        for (uint64_t v : {(uint64_t)k.device, (uint64_t)k.stream, (uint64_t)k.name << 8 | (uint64_t)k.cls})
          h = (h ^ v) * 0xBF58476D1CE4E5B9ull, h ^= h >> 31;
        return (size_t)h;
      }
    };
    // Names by their text (a saved database's views live only while its row does, and a name may
    // sit in more than one place of a store), the last one remembered: kernels come in runs.
    constexpr uint32_t kNoName = UINT32_MAX;
    std::unordered_map<std::string_view, uint32_t> name_id;
    std::string_view last_view;
    uint32_t last_id = kNoName;
    std::unordered_map<Key, size_t, KeyHash> group;  // -> index in out
    std::vector<Row> out;
    EventScan kernels;
    kernels.kinds = {Kind::kernel};
    kernels.any_order = true;  // (grouped: the order read does not matter)
    events.scan(kernels, [&](const EventView& e) {
      uint32_t id = kNoName;
      if (e.name.data()) {
        if (e.name.data() == last_view.data() && e.name.size() == last_view.size()) {
          id = last_id;
        } else {
          auto it = name_id.find(e.name);
          if (it == name_id.end()) {
            names_.emplace_back(e.name);
            it = name_id.emplace(names_.back(), (uint32_t)(names_.size() - 1)).first;
          }
          id = it->second;
          // (a saved database's view dies with its row: only a store's is kept to compare)
          last_view = events.store() ? e.name : std::string_view(), last_id = id;
        }
      }
      const GpuClass c = classes->of_view(events, e, GpuRule::tlsql);
      auto [it, added] = group.try_emplace(Key{e.trace, e.device, e.stream, id, c}, out.size());
      if (added) {
        Row r{e.trace,
              std::nullopt,
              std::nullopt,
              gpu_class_name(c),
              id == kNoName ? nullptr : &names_[id],
              0,
              std::nullopt,
              0};
        if (e.device != EventView::none) r.device = e.device;
        if (e.stream != EventView::none) r.stream = e.stream;
        out.push_back(r);
      }
      Row& r = out[it->second];
      ++r.kernels;
      if (e.dur != EventView::none) r.dur = sat_add(r.dur.value_or(0), e.dur);
      if (e.dur > 0) r.positive_dur = sat_add(r.positive_dur, e.dur);
    });
    // GROUP BY's order: a NULL first, texts as bytes.
    std::sort(out.begin(), out.end(), [](const Row& a, const Row& b) {
      if (a.trace != b.trace) return a.trace < b.trace;
      if (a.device != b.device) return a.device < b.device;
      if (a.stream != b.stream) return a.stream < b.stream;
      if (int c = std::string_view(a.cls).compare(b.cls)) return c < 0;
      if (!a.name || !b.name) return !a.name && b.name;
      return *a.name < *b.name;
    });
    return out;
  }

 private:
  std::deque<std::string> names_;  // the rows' names (a deque: a name's place never moves)
};

}  // namespace

std::vector<SqlFunction> kernel_total_functions() {
  return {table_function<KernelTotals>(
      "kernel_totals",
      "table: kernels and summed dur per (trace, device, stream, class, name): gpu_class grouped, from one pass")};
}
TLSQL_FUNCTIONS(kernel_total_functions);

}  // namespace tlsql
