// The load pipeline's reading half, shared by every format: open the input, pick the format by
// its first bytes, scan into chunks on one thread while the others parse them, gather the rows.
#pragma once

#include <memory>
#include <string>

#include "src/event_store.h"
#include "src/health.h"
#include "src/loader.h"

namespace tlsql {

// Reads `path` into a new trace of `store` (rows, strings, args; not yet in store.traces) with
// the format of opt.formats that claims it, counting what is repaired into `health` and the
// stages' times and sizes into `st`. Throws LoadError (NotATrace) naming the file.
// Threads a load uses (the scanner's included) when LoadOptions::threads is 0: what
// set_load_threads() set (`tlsql --threads N`), else the CPUs this process may run on.
size_t load_threads();
// For the whole process (0: back to the machine's count).
void set_load_threads(size_t n);

// The chunk size a load uses: `asked` (LoadOptions::chunk_bytes), smaller for a text of
// `text_bytes` (0: unknown, a pipe) too small to give `threads` threads four chunks each.
size_t chunk_size(size_t asked, size_t text_bytes, size_t threads);

std::unique_ptr<LoadedTrace> read_trace(EventStore& store, const std::string& path, const LoadOptions& opt,
                                        Health& health, LoadStats& st);

}  // namespace tlsql
