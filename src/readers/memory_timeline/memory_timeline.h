// torch.profiler's memory timeline (profile.export_memory_timeline; HTA's MemoryAnalysis reads it):
// a JSON array, `.json` or `.json.gz`, in one of the two layouts torch writes. The raw one
// (a `.raw.json.gz` path) is one row per memory event, [ts (ns; -1 for memory that existed before
// profiling), action (1 PREEXISTING, 2 CREATE, 3 INCREMENT_VERSION, 4 DESTROY), bytes (negative
// for what leaves the category), category (torch's index: 0 Parameter, 1 Optimizer state, 2 Input,
// 3 Temporary, 4 Activation, 5 Gradient, 6 Autograd, 7 Unknown)]. The plot one (a `.json` path) is
// [times, sizes]: the times, and per time the bytes held in each category. Each row (the plot
// layout: each category whose bytes change at a time) becomes an instant event of category
// memory_timeline named by its memory category, args {action, bytes, category_index}; the view
// memory_timeline reads them and `.plot memory` draws them (docs/formats.md).
#pragma once

#include "src/readers/reader.h"

namespace tlsql::memory_timeline {

// Claims a JSON array whose first element is an array ("[[").
bool claims(std::string_view head);

extern const ReaderFormat format;

}  // namespace tlsql::memory_timeline
