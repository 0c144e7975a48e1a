// The one list of input formats, and the one place that names a file no format reads. Adding a
// format: its folder src/readers/NAME/ and one line here (docs/extending.md, "An input format";
// docs/formats.md).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "src/ascii_case.h"
#include "src/readers/kineto_json/kineto_json.h"
#include "src/readers/memory_timeline/memory_timeline.h"
#include "src/readers/nsys_sqlite/nsys_sqlite.h"
#include "src/readers/reader.h"
#include "src/readers/rocprof_json/rocprof_json.h"
#include "src/sqlite_util.h"

namespace tlsql {

std::span<const ReaderFormat> builtin_formats() {
  static const ReaderFormat formats[] = {
      rocprof_json::format,     // {"rocprofiler-sdk-tool": ...
      memory_timeline::format,  // [[ ... torch.profiler export_memory_timeline
      nsys_sqlite::format,      // a SQLite file with CUPTI_ACTIVITY_KIND_KERNEL
      kineto_json::format,      // last: it reads what no other format claims (and says why it is no trace)
  };
  return formats;
}

const ReaderFormat& choose_format(std::span<const ReaderFormat> formats, std::string_view head) {
  for (const ReaderFormat& f : formats)
    if (f.claims(head)) return f;
  return formats.back();
}

namespace {

constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

bool ends_with(const std::string& path, std::string_view end) {
  return lowercase(std::filesystem::path(path).filename().string()).ends_with(end);
}

// Bytes that no text format (JSON, CSV) holds: a binary file.
bool binary(std::string_view head) {
  return std::any_of(head.begin(), head.end(), [](char c) {
    unsigned char u = (unsigned char)c;
    return u < 0x20 && u != '\n' && u != '\r' && u != '\t';
  });
}

}  // namespace

std::set<std::string> database_tables(const std::string& path, std::string& error) {
  std::set<std::string> names;
  sqlite3* db = open_foreign_database(path, error);
  if (!db) return names;
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')", -1, &q, nullptr) ==
      SQLITE_OK) {
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
      if (const unsigned char* n = sqlite3_column_text(q, 0)) names.insert((const char*)n);
    if (rc != SQLITE_DONE) error = sqlite3_errmsg(db);
  } else {
    error = sqlite3_errmsg(db);
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return names;
}

std::string database_format_hint(const std::set<std::string>& tables) {
  auto has_prefix = [&](std::string_view prefix) {
    auto it = tables.lower_bound(std::string(prefix));
    return it != tables.end() && it->starts_with(prefix);
  };
  if (has_prefix("rocpd_"))
    return "a rocpd database (rocprofv3 --output-format rocpd), which tlsql does not read: record the run "
           "with rocprofv3 --output-format json, or convert it to JSON with rocprofiler-sdk's tools";
  if (tables.count("CUPTI_ACTIVITY_KIND_KERNEL"))  // (only when a load asks for other formats than tlsql's)
    return "an Nsight Systems SQLite export, which no format of this load reads";
  // (An export's other tables: its session, NVTX ranges, CUPTI's other activity kinds, its own
  // metadata, the GPUs; any of them beside StringIds.)
  if (tables.count("TARGET_INFO_SESSION_START_TIME") ||
      (tables.count("StringIds") && (has_prefix("NVTX_") || has_prefix("CUPTI_ACTIVITY_KIND_") ||
                                     tables.count("META_DATA_EXPORT") || has_prefix("TARGET_INFO_"))))
    return "an Nsight Systems SQLite export without a CUPTI_ACTIVITY_KIND_KERNEL table (no GPU kernels were "
           "recorded): profile with nsys profile --trace=cuda,nvtx";
  if (tables.count("event") && tables.count("trace"))
    return "a database tlsql saved: open it on its own (tlsql FILE.db), or .attach it";
  if (tables.empty()) return "an empty SQLite database";
  return fmt::format("a SQLite database ({} tables, such as '{}') of no format tlsql reads", tables.size(),
                     *tables.begin());
}

std::string other_format_hint(std::string_view head, const std::string& path) {
  if (head.starts_with(kSqliteMagic)) {
    std::string error;
    std::set<std::string> tables = database_tables(path, error);
    if (!error.empty()) return fmt::format("a SQLite database SQLite cannot read ({})", error);
    return database_format_hint(tables);
  }
  if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep"))
    return "an Nsight Systems report, which only nsys reads: export it with nsys export --type sqlite "
           "--output FILE.sqlite FILE.nsys-rep";
  if (ends_with(path, ".pftrace") || ends_with(path, ".perfetto-trace") ||
      (binary(head) && !head.empty() && head[0] == '\x0a'))  // field 1 of Trace, a TracePacket
    return "a Perfetto protobuf trace (rocprofv3 --output-format pftrace, or a Perfetto recording), which "
           "tlsql does not read: open it in ui.perfetto.dev, or record rocprofv3 --output-format json or a "
           "Kineto trace (torch.profiler's export_chrome_trace)";
  // Text: a JSON document whose first keys say what it is.
  const bool json = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF") != std::string_view::npos &&
                    head[head.find_first_not_of(" \t\r\n\xEF\xBB\xBF")] == '{';
  if (json && head.find("\"traceEvents\"") == std::string_view::npos) {
    if (head.find("\"nodes\"") != std::string_view::npos &&
        (head.find("\"schema\"") != std::string_view::npos || head.find("chakra") != std::string_view::npos))
      return "a PyTorch execution trace (ExecutionTraceObserver / Chakra: ops and their inputs, no times), "
             "not a profiler trace: load the Kineto trace recorded beside it (torch.profiler's "
             "export_chrome_trace)";
  }
  if (head.starts_with("\"Kind\",\"Agent_Id\"") || head.starts_with("\"Guid\",\"Kind\"") ||
      head.starts_with("Kind,Agent_Id"))
    return "a rocprofv3 CSV result, which tlsql does not read: record the run with rocprofv3 "
           "--output-format json";
  return "";
}

const ReaderFormat* database_format(std::span<const ReaderFormat> formats, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return nullptr;
  char magic[16] = {};
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    size_t n = std::fread(magic, 1, sizeof magic, f);
    std::fclose(f);
    if (n != sizeof magic || std::string_view(magic, sizeof magic) != kSqliteMagic) return nullptr;
  } else {
    return nullptr;
  }
  std::string error;
  std::set<std::string> tables = database_tables(path, error);
  if (!error.empty()) return nullptr;
  for (const ReaderFormat& f : formats)
    if (f.claims_database && f.claims_database(tables)) return &f;
  return nullptr;
}

const ReaderFormat& choose_format(std::span<const ReaderFormat> formats, std::string_view head,
                                  const std::string& path) {
  // The last format reads what no other claims (Kineto's claims every JSON document): the files
  // that look like another profiler's are named before it gets them.
  for (const ReaderFormat& f : formats.first(formats.size() - 1))
    if (f.claims(head)) return f;
  if (head.starts_with(kSqliteMagic))
    if (const ReaderFormat* f = database_format(formats, path)) return *f;
  if (std::string hint = other_format_hint(head, path); !hint.empty())
    throw NotATrace(fmt::format("{}: not a trace: {}", path, hint));
  return formats.back();
}

}  // namespace tlsql
