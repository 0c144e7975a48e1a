#include "src/readers/kineto_json/json_reader.h"

namespace tlsql {

ReadStatus read_event_chunk(const char* text, size_t size, size_t capacity, ChunkSink& sink) {
  static const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul");
  return avx2 ? reader_avx2::read_event_chunk(text, size, capacity, sink)
              : reader_generic::read_event_chunk(text, size, capacity, sink);
}

}  // namespace tlsql
