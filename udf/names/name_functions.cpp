// SQL functions over names alone, with no event or perf table behind them: the diff's name keys
// (normalize_name, short_name: event_names.h), the runtime-call rules of src/kind.h
// (is_graph_launch, is_gpu_wait), a serving step read from a name (serving_step), the one spelling
// of a collective (collective_name).
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "src/kind.h"
#include "src/serving_step.h"
#include "udf/gpu_class.h"
#include "udf/names/event_names.h"
#include "udf/registry.h"

namespace tlsql {

namespace {

// A rule on a call's name (src/kind.h) as a SQL function: 1 or 0, NULL for NULL.
template <bool (*Rule)(std::string_view)>
void name_rule_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return sqlite3_result_null(ctx);
  const auto* t = sqlite3_value_text(argv[0]);
  sqlite3_result_int(ctx, Rule({(const char*)t, (size_t)sqlite3_value_bytes(argv[0])}) ? 1 : 0);
}

void serving_step_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return sqlite3_result_null(ctx);
  auto text = [&](int i) {
    const auto* t = sqlite3_value_text(argv[i]);
    return std::string_view((const char*)t, (size_t)sqlite3_value_bytes(argv[i]));
  };
  auto st = serving_step(kind_from_name(text(0)), text(1));
  if (!st) return sqlite3_result_null(ctx);
  std::string json = fmt::format("{{\"source\":\"{}\"", st->annotation ? "annotation" : "frame");
  for (auto [key, v] : {std::pair{"tokens", st->tokens}, {"prefill", st->prefill}, {"decode", st->decode}})
    if (v) json += fmt::format(",\"{}\":{}", key, *v);
  if (const char* phase = st->phase()) json += fmt::format(",\"phase\":\"{}\"", phase);
  if (const auto& l = st->lengths)
    json += fmt::format(
        ",\"c_sq\":{},\"c_sk\":{},\"c_sqsq\":{},\"c_sqsk\":{},\"g_sq\":{},\"g_sk\":{},\"g_sqsq\":{},\"g_sqsk\":{}",
        l->c_sq, l->c_sk, l->c_sqsq, l->c_sqsk, l->g_sq, l->g_sk, l->g_sqsq, l->g_sqsk);
  json += "}";
  sqlite3_result_text(ctx, json.c_str(), (int)json.size(), SQLITE_TRANSIENT);
}

void normalize_name_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  // Most names have neither an address nor a python location: returned as they are, uncopied
  // (the diff calls this for every event of both traces).
  const std::string_view v(reinterpret_cast<const char*>(n), (size_t)sqlite3_value_bytes(argv[0]));
  if (v.find("0x") == std::string_view::npos && v.find("0X") == std::string_view::npos &&
      v.find(".py(") == std::string_view::npos)
    return sqlite3_result_value(ctx, argv[0]);
  std::string s = normalize_name(v);
  sqlite3_result_text(ctx, s.c_str(), -1, SQLITE_TRANSIENT);
}

// (Both are called once per row of the reports and pictures: a name that stays whole is handed
// back as it came, and a built-in category is static text, with no copy either way.)
void short_name_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  const std::string_view v(reinterpret_cast<const char*>(n), (size_t)sqlite3_value_bytes(argv[0]));
  if (v.find_first_of("<(") == std::string_view::npos) return sqlite3_result_value(ctx, argv[0]);
  std::string s = short_name(std::string(v));
  sqlite3_result_text(ctx, s.c_str(), -1, SQLITE_TRANSIENT);
}

// collective_name(name): gpu_class.h's one spelling of the collective a name says, else NULL.
void collective_name_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  const std::string c = collective_name(reinterpret_cast<const char*>(n));
  if (c.empty()) return sqlite3_result_null(ctx);
  sqlite3_result_text(ctx, c.c_str(), -1, SQLITE_TRANSIENT);
}

// copy_direction(name): gpu_class.h's direction of a copy, HtoD / DtoH / ..., else NULL.
void copy_direction_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  const std::string d = copy_direction({reinterpret_cast<const char*>(n), (size_t)sqlite3_value_bytes(argv[0])});
  if (d.empty()) return sqlite3_result_null(ctx);
  sqlite3_result_text(ctx, d.c_str(), -1, SQLITE_TRANSIENT);
}

// kernel_family(name): event_names.h's family of a kernel name, GEMM / SDPA / CONV, else NULL.
void kernel_family_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* n = sqlite3_value_text(argv[0]);
  if (!n) return sqlite3_result_null(ctx);
  const std::string_view f = kernel_family({reinterpret_cast<const char*>(n), (size_t)sqlite3_value_bytes(argv[0])});
  if (f.empty()) return sqlite3_result_null(ctx);
  sqlite3_result_text(ctx, f.data(), (int)f.size(), SQLITE_STATIC);
}

}  // namespace

std::vector<SqlFunction> name_functions() {
  std::vector<SqlFunction> v;
  auto pure = [&](const char* name, const char* args, const char* help,
                  void (*fn)(sqlite3_context*, int, sqlite3_value**)) {
    SqlFunction f{name, args, help};
    f.flags |= SQLITE_DETERMINISTIC, f.fn = fn;
    v.push_back(f);
  };
  pure("short_name", "(name)", "name without template / argument lists (HTA's use_short_name)", short_name_fn);
  pure("normalize_name", "(name)",
       "name with addresses (0x7cc1...) and python line numbers (.py(1501)) taken out: how diff keys names",
       normalize_name_fn);
  pure("is_graph_launch", "(name)",
       "1 if a runtime call of that name launches a CUDA / HIP graph (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch, "
       "..._ptsz), else 0",
       name_rule_fn<is_graph_launch>);
  pure("is_gpu_wait", "(name)",
       "1 if a runtime call of that name only waits for the GPU (cudaStreamSynchronize, cudaDeviceSynchronize, "
       "cudaEventSynchronize; hip*, _ptsz), else 0",
       name_rule_fn<gpu_wait_call>);
  SqlFunction step{"serving_step", "(kind, name)",
                   "an engine step of a serving loop, as JSON {source, tokens, prefill, decode, phase, and the "
                   "c_sq .. g_sqsk aggregates where given}, from a vLLM / SGLang / ATOM step annotation or a "
                   "worker's per-step frame; else NULL"};
  step.min_args = step.max_args = 2, step.fn = serving_step_fn;
  step.flags |= SQLITE_DETERMINISTIC;
  v.push_back(step);
  pure("collective_name", "(name)",
       "the collective a kernel name, \"Collective name\" arg or op name says, one spelling for all (AllReduce, "
       "AllGather, ReduceScatter, AllToAll, AllToAllv, Broadcast, Reduce, SendRecv, Send, Recv, Gather, Scatter, "
       "Barrier: _allgather_base -> AllGather); NULL when it says none (RCCL's ncclDevKernel_Generic)",
       collective_name_fn);
  pure("copy_direction", "(name)",
       "the direction of a copy by its name as Kineto, Nsight Systems or rocprofv3 write it, in Kineto's letters: "
       "HtoD, DtoH, DtoD, HtoH, PtoP, HtoA, AtoH, AtoA, AtoD, DtoA ('Memcpy Host-to-Device', "
       "'MEMORY_COPY_HOST_TO_DEVICE' -> HtoD); NULL when the name says none",
       copy_direction_fn);
  pure("kernel_family", "(name)",
       "the family a kernel name says: GEMM (cuBLAS, CUTLASS, nvjet, Cijk_, fp8_gemm, grouped_gemm), SDPA (flash, "
       "fmha, attention), CONV (cuDNN, MIOpen convolutions), else NULL; what the gemm / sdpa / conv sheets use "
       "for kernels under ops that say nothing",
       kernel_family_fn);
  return v;
}
TLSQL_FUNCTIONS(name_functions);

}  // namespace tlsql
