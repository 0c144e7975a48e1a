// A duration summed as SQL's sum() sums it, for the functions that total events in C++ where a
// GROUP BY would sort them (name_totals, kernel_totals): the durations present added, NULL when
// none is, and a sum past 64 bits an error, as sum()'s.
#pragma once

#include <cstdint>
#include <optional>

#include "src/trace_model.h"
#include "udf/sql_function.h"

namespace tlsql {

inline void add_dur(std::optional<int64_t>& sum, int64_t dur) {
  if (dur == kNull) return;
  if (!sum)
    sum = dur;
  else if (__builtin_add_overflow(*sum, dur, &*sum))
    throw FunctionError("integer overflow in a summed duration");
}

}  // namespace tlsql
