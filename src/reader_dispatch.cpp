#include "json_reader.h"

namespace tlsql {

ReadStatus read_trace_json(const char* text, size_t size, size_t capacity, ParsedTrace& out, Health& health) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
                           __builtin_cpu_supports("pclmul");
  return avx2 ? reader_avx2::read_trace_json(text, size, capacity, out, health)
              : reader_generic::read_trace_json(text, size, capacity, out, health);
}

}  // namespace tlsql
