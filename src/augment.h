// Copies of a trace with additions. `tlsql trace.json --augment out.json`: the trace written back
// with inductor's kernel_flop and kernel_num_gb in the args of every kernel and op tlsql has
// numbers for (the format profile_analysis.py --augment_trace writes, which Perfetto's UI shows);
// `--overlay out.json`: the critical path marked (docs/reports.md). Everything else is copied byte
// for byte, so uids stay the same.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tlsql {

struct Augment {
  double flops = -1, bytes = -1;  // -1: unknown
};

// Writes `in_path` (plain or gzip, `in_bytes` of JSON text as loaded: trace.bytes) to `out_path`
// (plain JSON), adding `numbers[i]` to the args of traceEvents element i. Atomic (temp file +
// rename). Throws LoadError, also when `in_path` is not a regular file of exactly `in_bytes`.
void write_augmented(const std::string& in_path, size_t in_bytes, const std::string& out_path,
                     const std::map<int64_t, Augment>& numbers);

// What a copy of a trace adds (the one writer under --augment and --overlay): `members[i]` (JSON
// object members, `"critical": 1`) into the args of traceEvents element i, unless its args already
// name one of `unless` (a copy of a copy gets no duplicate keys); `events` (JSON objects, comma
// separated) at the end of traceEvents.
struct TraceAdditions {
  std::map<int64_t, std::string> members;
  std::vector<std::string> unless;
  std::string events;
};
void write_trace_copy(const std::string& in_path, size_t in_bytes, const std::string& out_path,
                      const TraceAdditions& add, const char* what);  // what: the verb errors use ("augment")

}  // namespace tlsql
