// FLOPs and bytes of an op from its recorded shapes, one entry per op family (TraceLens's
// PerfModel formulas, and inductor's kernel_flop / kernel_num_gb where a trace carries them).
// Data-shaped: the family table in perf_model.cpp maps op names to a category and a model.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/kind.h"
#include "src/serving_step.h"

namespace tlsql {

struct OpPerf {
  std::optional<double> flops, bytes;
  bool matrix = false;  // runs on matrix units (GEMM, conv, attention) rather than vector ALUs
  std::string dtype;    // the op's compute dtype as the trace spells it (e.g. c10::BFloat16)
};

// The category of an op or kernel name: GEMM, CONV_fwd, CONV_bwd, SDPA_fwd, SDPA_bwd, NORM_fwd,
// NORM_bwd, elementwise, reduce, comm, memcpy or other (static text: reports call it per row).
const char* op_category(std::string_view name);

// Whether `name` has a model (flops/bytes are computed for it when it is the innermost modeled op).
bool has_perf_model(std::string_view name);

// Whether the model of `name` also needs the lengths of the serving step the op ran in
// (StepLengths: the serving engines' attention ops, whose shapes give heads and head sizes but not
// the requests' query and context lengths).
bool model_needs_step(std::string_view name);

// The model of one op, given its name and args JSON text (and, for a model_needs_step name, the
// lengths its step annotation records; without them it has no model). nullopt when the family has
// no model or the args lack what it needs.
std::optional<OpPerf> model_op(std::string_view name, std::string_view args_json, const StepLengths* step = nullptr);

// Why an op of this name has no model on these args, when the trace lacks what its family's model
// reads: "Input Dims missing" (recorded without record_shapes), "Concrete Inputs missing" (a
// convolution's stride, padding and dilation: PyTorch records them from 1.13 on; any CONV op,
// modeled or not, since its FLOPs cannot be known without them). nullptr when it has a model, its
// family has none, or the reason is another (shapes that do not fit the model).
const char* model_gap(std::string_view name, std::string_view args_json);

// model_op for a pass over many ops: an op's model depends only on its family and the "Input Dims",
// "Input type" and "Concrete Inputs" members of its args, and a trace repeats those every step and
// layer, so each distinct combination is parsed and modeled once (up to kMaxEntries of them, so
// that a trace of all-different shapes costs no more memory than that). One per thread.
class OpModelMemo {
 public:
  std::optional<OpPerf> model(std::string_view name, std::string_view args_json, const StepLengths* step = nullptr);
  // The same, for a caller that found the three members itself (args_text::last_members on a
  // store's encoded text, where decoding the whole text to scan it was most of the perf pass's
  // args work): their values as the args text has them, "" for one it lacks. No serving step's
  // lengths: for the names whose model does not read them (model_needs_step).
  std::optional<OpPerf> model_of_members(std::string_view name, std::string_view dims, std::string_view types,
                                         std::string_view concrete);

 private:
  static constexpr size_t kMaxEntries = 1 << 16;
  std::unordered_map<std::string, std::optional<OpPerf>> seen_;
  std::string key_;
};

// Whether a memcpy GPU event moves its bytes over a link rather than within the GPU's memory
// (host <-> device, peer to peer), by its name's direction (gpu_class.h copy_direction: Kineto's
// "Memcpy DtoH (Device -> Pageable)", Nsight's and rocprofv3's names alike): such
// bytes are not HBM traffic, so an op whose GPU work is only such copies gets no model (it is
// left out of the roofline and the achieved %, not measured against HBM bandwidth).
bool memcpy_over_link(std::string_view name);

// One operand of an op as the trace records it: its "Input type", whether its "Input Dims" has
// dimensions (a 0-dim tensor has none), and its "Concrete Inputs" value (for a Python scalar).
struct Operand {
  std::string type;
  bool has_dims = false;
  std::string value;
};
// PyTorch's result type of the operands (c10 result_type): dimensioned tensors decide; 0-dim
// tensors, then Python scalars ("Scalar"), only raise the category (bool < integral < floating <
// complex). Empty when no operand has a known dtype.
std::string result_dtype(const std::vector<Operand>& operands);

// Bytes per element of a dtype as traces spell it ("float", "c10::BFloat16", "long int", ...), or
// as torch ("bfloat16", "int64") and the collectives' dtype arg ("Float", "BFloat16") do; 0 if
// unknown. The one dtype-size table (perf models, SQL dtype_bytes, the collectives report).
int dtype_bytes(std::string_view dtype);
// Whether a GEMM / convolution kernel runs fp32 data on tensor cores as TF32, by its name: cuBLAS
// and cuDNN say tf32 (sm80_xmma_gemm_f32f32_tf32f32_..., ..._tf32f32_...), CUTLASS names fp32
// tensor-op kernels tensorop_s (cutlass_80_tensorop_s1688gemm_...). Its fp32 op is read against
// the tf32 peak: the CUDA-core fp32 peak would put it at 200-500%.
bool tf32_kernel(std::string_view name);
// The gpu_spec dtype key of a trace dtype: fp64, fp32, fp16, bf16, fp8, int8, and "tf32" (the
// compute dtype tlsql gives an fp32 op whose kernel is tf32_kernel); empty if none.
std::string spec_dtype(std::string_view dtype);

}  // namespace tlsql
