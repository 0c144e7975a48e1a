// The perf numbers of every event of a schema, computed in one bulk pass the first time a query
// needs them, then read by the scalar functions (flops, bytes, gpu_time, perf, counted, ...) and
// through them by the reports: no tree walk and no SQL statement per call.
//
// The pass reads either the loader's in-memory store or, for a saved database, one scan of its
// event and launch_link tables, and applies the same rules to both:
//   - an op's model is its own (perf_model.h) when it launches GPU work itself or no op of the
//     same family below it is modeled (the op doing the work carries the numbers, so sums count
//     each FLOP once);
//   - a kernel takes the model of the nearest op at or above its launcher that has a model and
//     launched no other kernel (memcpys and memsets beside it, gpu_class.h, do not count: cuBLAS's
//     workspace Memset beside every GEMM);
//   - inductor-augmented events (kernel_flop / kernel_num_gb args) carry their own numbers;
//   - gpu_ns: an event's own interval for GPU work, else the union of the GPU work below it;
//   - counted: modeled and kernel-launching ops, and runtime calls launching with no op above
//     them, with no modeled or counted op above them
//     (counted_op: each GPU nanosecond once);
//   - an op, python frame or annotation without numbers of its own reports the sum of the
//     numbers beneath it (inclusive), which counted_op never adds.
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "src/trace_model.h"
#include "udf/gpu_class.h"

namespace tlsql {

struct SchemaIdentity;  // src/event_table.h

// Per trace, what the summary report shows: its events per kind and, over the events with a
// start, the first start, the last end and the ProfilerSteps they fall in. Gathered by the same
// pass (it reads every row anyway).
struct TraceStats {
  std::array<int64_t, kKindCount> kinds{};  // by Kind
  bool timed = false;                       // some event has a start
  int64_t first_start = INT64_MAX;
  std::optional<int64_t> last_end;
  std::set<int64_t> steps;             // of the events with a start
  std::optional<int64_t> recent_step;  // the step add() put in steps last (a memo, not part of the stats)
  void add(Kind k, std::optional<int64_t> ts, std::optional<int64_t> end, std::optional<int64_t> step);
  void merge(const TraceStats& o);
};

struct PerfTable {
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Model {
    double flops = 0, bytes = 0;
    bool has_flops = false, has_bytes = false, matrix = false;
    uint16_t dtype = 0;  // index in dtypes
  };
  // counted: counted_op counts it; looped: the parent links above it loop (a hand-edited
  // database); how a row got its numbers: from_launcher (a GPU event, its op's), augmented
  // (inductor's kernel_flop / kernel_num_gb), inclusive (the sum of its children's); none of
  // these: the op's own model.
  enum Flag : uint8_t { counted = 1, looped = 2, from_launcher = 4, augmented = 8, inclusive = 16 };

  // Row of `uid`, or -1 when no event has it.
  int64_t row(int64_t uid) const;
  const Model* model_of(int64_t r) const { return model[(size_t)r] == kNone ? nullptr : &models[model[(size_t)r]]; }
  // The uid of row `r` (row's inverse).
  int64_t uid_of(size_t r) const { return uids.empty() ? first_uid + (int64_t)r : uids[r]; }

  size_t rows = 0;
  int64_t first_uid = 0;      // rows are uid - first_uid when `uids` is empty
  std::vector<int64_t> uids;  // else the sorted uid of each row (a saved database's uids need not be dense)
  std::vector<int64_t> gpu_ns;
  std::vector<uint32_t> model;  // index in models, or kNone
  std::vector<Model> models;
  std::vector<std::string> dtypes{""};
  std::vector<uint8_t> flags;  // Flag bits
  // Each row's trace, as runs of rows: (first row, trace), first rows ascending from 0. Rows come
  // in uid order and a trace's uids are one range (a store's) or nearly so (a saved database's):
  // a few runs where a column was 4 bytes a row of every table a session keeps.
  using TraceRuns = std::vector<std::pair<uint64_t, int32_t>>;
  TraceRuns trace_runs;
  int32_t trace_of(size_t r) const;
  std::vector<int32_t> device;  // -1 when the event has none
  // The GpuClass of each row under each GpuRule (gpu_class.h): 3 bits per rule, none for events
  // that are not GPU work.
  std::vector<uint16_t> gpu_classes;
  GpuClass gpu_class(size_t r, GpuRule rule) const {
    return static_cast<GpuClass>((gpu_classes[r] >> (3 * static_cast<int>(rule))) & 7);
  }
  // The nearest ancestor named "## ... ##" (FX / record_function markers), or kNone; empty when no
  // event has such a name (most traces: 4 bytes a row of a save's peak for nothing).
  std::vector<uint32_t> marker;
  uint32_t marker_of(size_t r) const { return marker.empty() ? kNone : marker[r]; }
  std::vector<int64_t> loop_uid;         // for looped rows: a uid on the loop (by row; empty when no row loops)
  std::map<int64_t, TraceStats> traces;  // by trace id
};

// The table for `schema` on `db`: computed on first use and kept until the connection closes or
// the schema holds another database. nullptr with `error` set when the schema has no tlsql tables.
// `known`: the schema's identity taken in this call (schema_identity's).
std::shared_ptr<const PerfTable> perf_table(sqlite3* db, const std::string& schema, std::string& error,
                                            const SchemaIdentity* known = nullptr);

// perf_table in two halves, for a caller that computes the table on another thread while it uses
// the connection itself (a save, the HTML report): what needs the connection happens in this call;
// the job it returns only reads the loaded store and computes (no SQLite). The table it makes is
// cached for the connection's later queries when `keep` (the HTML report), not otherwise (a save,
// which would hold it to the end); the cached one, when there is one, is what it returns. The
// connection must stay open until the job has run. No job (empty function) for a saved database
// or with the user's models, whose pass reads through SQL: call perf_table.
std::function<std::shared_ptr<const PerfTable>()> perf_table_job(sqlite3* db, const std::string& schema,
                                                                 bool keep = false);

// Several schemas' tables made at once (a diff's two sides), kept as perf_table keeps them: each
// loaded trace's by its job (perf_table_job) on a thread of its own from construction; get()
// makes the others on the calling thread meanwhile (a saved database, the user's models: through
// SQL), then waits for the jobs. Destroying it waits for jobs still running (they read the stores).
class PerfTablesAtOnce {
 public:
  PerfTablesAtOnce(sqlite3* db, std::vector<std::string> schemas);
  // The tables in the schemas' order; nullptr, with errors[k] set, for one that has none.
  std::vector<std::shared_ptr<const PerfTable>> get(std::vector<std::string>& errors);

 private:
  sqlite3* db_;
  std::vector<std::string> schemas_;
  std::vector<std::future<std::shared_ptr<const PerfTable>>> jobs_;  // per schema; none: made by get()
};

// For a scalar function taking (uid [, schema]): the schema's table, and the row of uid. nullptr
// when the function's result is already set: NULL for a NULL uid, else an error naming `fn`
// (not an integer, no such uid, no tlsql tables, parent links that loop).
// `schema`, when given, receives the schema the arguments name, `identity` its schema_identity.
// The last call's table is kept for the next, checked against the schema's identity.
std::shared_ptr<const PerfTable> perf_row(sqlite3_context* ctx, int argc, sqlite3_value** argv, const char* fn,
                                          int64_t& uid, int64_t& row, std::string* schema = nullptr,
                                          SchemaIdentity* identity = nullptr);

// Gives `to` the tables `from` has computed (a second connection onto the same stores,
// Session::twin): `to` then answers from them instead of making its own.
void share_perf_tables(sqlite3* from, sqlite3* to);

}  // namespace tlsql
