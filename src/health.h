// Everything the loader repairs, skips or cannot link is counted here and lands in the
// `health` table (check, count, example uid, detail): import problems are data, not log lines.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tlsql {

// end_overflow's detail, one wording for the reader (X events) and the tree builder (B/E pairs):
// Health keeps the detail of the row whose example comes first.
inline constexpr const char* kEndOverflow =
    "ts + dur (or a 'B' / 'E' pair's span) beyond the int64 range of nanoseconds: end is NULL, not in the tree";

class Health {
 public:
  struct Row {
    int64_t count = 0;
    int64_t example = -1;  // index of one affected event, -1 if none
    std::string detail;
    // How many GPU events (kernels, memcpys, memsets) the problem leaves unlinked or misplaced:
    // the row's impact (health.gpu_events_affected). -1: not assessed (NULL).
    int64_t gpu_events = -1;
  };
  void add(const std::string& check, int64_t example_index, const std::string& detail, int64_t n = 1) {
    Row& r = rows_[check];
    if (r.count == 0 || (example_index >= 0 && example_index < r.example)) {
      r.example = example_index;
      r.detail = detail;
    }
    r.count += n;
  }
  void set_detail(const std::string& check, const std::string& detail) { rows_[check].detail = detail; }
  // Sets a counted row's impact (no row is made for a check that found nothing).
  void set_gpu_events(const std::string& check, int64_t n) {
    if (auto it = rows_.find(check); it != rows_.end()) it->second.gpu_events = n;
  }
  // Adds another Health's rows (a stage that counted on its own thread), impacts summed.
  // `example_offset` is added to its examples: rows it counted by their index in a part read
  // before its place among the trace's rows was known (a speculative chunk's staged rows).
  void merge(const Health& other, int64_t example_offset = 0) {
    for (const auto& [check, row] : other.rows()) {
      const bool had = rows_.count(check) && rows_[check].count > 0;
      const int64_t mine = had ? rows_[check].gpu_events : -1;
      add(check, row.example < 0 ? -1 : row.example + example_offset, row.detail, row.count);
      Row& r = rows_[check];
      r.gpu_events = row.gpu_events < 0 ? mine : mine < 0 ? row.gpu_events : mine + row.gpu_events;
    }
  }
  const std::map<std::string, Row>& rows() const { return rows_; }
  int64_t count(const std::string& check) const {
    auto it = rows_.find(check);
    return it == rows_.end() ? 0 : it->second.count;
  }

 private:
  std::map<std::string, Row> rows_;
};

}  // namespace tlsql
