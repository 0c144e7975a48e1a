// `tlsql trace.json --augment out.json`: the trace written back with inductor's kernel_flop and
// kernel_num_gb in the args of every kernel and op tlsql has numbers for (the format
// profile_analysis.py --augment_trace writes, which Perfetto's UI shows). Everything else is
// copied byte for byte, so uids stay the same.
#pragma once

#include <map>
#include <string>

namespace tlsql {

struct Augment {
  double flops = -1, bytes = -1;  // -1: unknown
};

// Writes `in_path` (plain or gzip) to `out_path` (plain JSON), adding `numbers[i]` to the args of
// traceEvents element i. Atomic (temp file + rename). Throws LoadError.
void write_augmented(const std::string& in_path, const std::string& out_path,
                     const std::map<int64_t, Augment>& numbers);

}  // namespace tlsql
