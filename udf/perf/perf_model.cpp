#include "udf/perf/perf_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string_view>
#include <vector>

#include "args/op_args.h"
#include "src/ascii_case.h"
#include "src/json_scan.h"
#include "udf/gpu_class.h"
#include "udf/perf/name_memo.h"

namespace tlsql {

namespace {

using json = nlohmann::json;
using Shape = std::vector<int64_t>;

// What a model reads of an op's args. dims[i] is empty both for scalars and absent tensors;
// `tensor[i]` tells a real (possibly 0-d) tensor from "no tensor here" (an empty Input Dims
// entry with an empty Input type).
struct Args {
  std::vector<Shape> dims;
  std::vector<std::vector<Shape>> lists;  // per argument: the shapes of a TensorList (else empty)
  std::vector<std::string> types, concrete;
  const StepLengths* step = nullptr;  // the op's serving step, for a Family::per_step model
  bool valid = true;                  // args::InputDims::valid: false, no model
  bool has(size_t i) const { return i < dims.size() && !dims[i].empty(); }
  const Shape& dim(size_t i) const {
    static const Shape none;
    return i < dims.size() ? dims[i] : none;
  }
  std::string type(size_t i) const { return i < types.size() ? types[i] : std::string(); }
  std::string conc(size_t i) const { return i < concrete.size() ? concrete[i] : std::string(); }
};

double numel(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), 1.0, [](double a, int64_t b) { return a * (double)b; });
}

// Whether operand i is a tensor, 0-dim included (a per-tensor scale is one: its Input Dims are []
// like a Python scalar's, but its Input type is a dtype, not "Scalar").
bool is_tensor(const Args& a, size_t i) { return i < a.dims.size() && dtype_bytes(a.type(i)) > 0; }

// "[16, 16]" / "16" / "" -> ints (args::ints); `n` broadcasts a single value to n dims (PyTorch's
// int[2] args), and fills in `fallback` when nothing was recorded.
std::vector<int64_t> int_list(const std::string& s, size_t n, int64_t fallback) {
  std::vector<int64_t> v = args::ints(s);
  if (v.empty()) v.assign(n, fallback);
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  return v;
}

// An output dimension computed in doubles: its count, if it is one a tensor can have (non-negative,
// and small enough for a double to hold exactly); nullopt for what only a hostile trace makes.
std::optional<int64_t> extent(double v) {
  if (!(v >= 0 && v < 9.0e15)) return std::nullopt;
  return (int64_t)v;
}

using Model = std::function<std::optional<OpPerf>(const Args&)>;

// ---- GEMM: 2·M·N·K (+M·N for a bias / beta term), bytes (MK + KN + MN (+N)) · bpe, × batch ----
OpPerf gemm(double B, double M, double N, double K, bool bias, const std::string& dtype, int out_bpe = 0) {
  int bpe = dtype_bytes(dtype);
  OpPerf p;
  p.matrix = true;
  p.dtype = dtype;
  p.flops = B * (2 * M * N * K + (bias ? M * N : 0));
  if (bpe) p.bytes = B * ((M * K + K * N + (bias ? N : 0)) * bpe + M * N * (out_bpe ? out_bpe : bpe));
  return p;
}

std::optional<OpPerf> mm(const Args& a) {  // (self [M,K], mat2 [K,N])
  if (a.dim(0).size() != 2 || a.dim(1).size() != 2) return std::nullopt;
  return gemm(1, a.dim(0)[0], a.dim(1)[1], a.dim(0)[1], false, a.type(0));
}
std::optional<OpPerf> addmm(const Args& a) {  // (self, mat1 [M,K], mat2 [K,N], beta, alpha)
  if (a.dim(1).size() != 2 || a.dim(2).size() != 2) return std::nullopt;
  return gemm(1, a.dim(1)[0], a.dim(2)[1], a.dim(1)[1], true, a.type(1));
}
std::optional<OpPerf> bmm(const Args& a) {  // (self [B,M,K], mat2 [B,K,N])
  if (a.dim(0).size() != 3 || a.dim(1).size() != 3) return std::nullopt;
  return gemm(a.dim(0)[0], a.dim(0)[1], a.dim(1)[2], a.dim(0)[2], false, a.type(0));
}
std::optional<OpPerf> baddbmm(const Args& a) {  // (self, batch1 [B,M,K], batch2 [B,K,N], beta, alpha)
  if (a.dim(1).size() != 3 || a.dim(2).size() != 3) return std::nullopt;
  return gemm(a.dim(1)[0], a.dim(1)[1], a.dim(2)[2], a.dim(1)[2], true, a.type(1));
}
std::optional<OpPerf> scaled_mm(
    const Args& a) {  // (self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype, ...)
  if (a.dim(0).size() != 2 || a.dim(1).size() != 2) return std::nullopt;
  int bpe = dtype_bytes(a.type(0));
  return gemm(1, a.dim(0)[0], a.dim(1)[1], a.dim(0)[1], a.has(4), a.type(0), bpe == 1 ? 2 : 0);
}
// aten::linear(input [..., K], weight [N, K], bias?) / aten::matmul: used when no GEMM op below
// them carries the model (e.g. on CPU or through a fused path).
std::optional<OpPerf> linear(const Args& a) {
  const Shape &x = a.dim(0), &w = a.dim(1);
  if (x.empty() || w.size() != 2) return std::nullopt;
  return gemm(1, numel(x) / x.back(), w[0], x.back(), a.has(2), a.type(0));
}
std::optional<OpPerf> matmul(const Args& a) {
  const Shape &x = a.dim(0), &y = a.dim(1);
  if (x.size() < 2 || y.size() < 2) return std::nullopt;
  double batch = numel(Shape(x.begin(), x.end() - 2));
  return gemm(std::max(batch, numel(Shape(y.begin(), y.end() - 2))), x[x.size() - 2], y.back(), x.back(), false,
              a.type(0));
}

// ---- Convolution (TraceLens / torch.utils.flop_counter) ----
struct Conv {
  Shape x, w, out;
  bool bias, transposed;
};
// The output shape; nullopt when the arguments make no output (a stride or dilation below 1, a
// negative padding, a kernel larger than the padded input: a hostile trace, never a real op).
// (In doubles: a trace's integers may be as large as int64 allows, whose products overflow it.)
std::optional<Shape> conv_out(const Conv& c, const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                              const std::vector<int64_t>& dil, const std::vector<int64_t>& outpad, int64_t groups) {
  int64_t channels = c.w[0];
  if (c.transposed && __builtin_mul_overflow(c.w[1], groups, &channels)) return std::nullopt;
  Shape o{c.x[0], channels};
  for (size_t i = 2; i < c.x.size(); ++i) {
    const size_t k = i - 2;
    if (stride[k] < 1 || dil[k] < 1 || pad[k] < 0 || outpad[k] < 0) return std::nullopt;
    const double in = (double)c.x[i], ks = (double)c.w[i], st = (double)stride[k], p = (double)pad[k];
    const double d = (double)dil[k];
    const auto n = extent(c.transposed ? (in - 1) * st - 2 * p + d * (ks - 1) + (double)outpad[k] + 1
                                       : std::floor((in + 2 * p - d * (ks - 1) - 1) / st) + 1);
    if (!n || *n < 1) return std::nullopt;
    o.push_back(*n);
  }
  return o;
}
double conv_flops(const Shape& x, const Shape& w, const Shape& out, bool bias, bool transposed) {
  double per = 2 * numel(Shape(w.begin() + 1, w.end()));  // c_in per group × kernel
  return (transposed ? numel(x) : numel(out)) * per + (bias ? numel(out) : 0);
}
double conv_bytes(const Shape& x, const Shape& w, const Shape& out, bool bias, int bpe) {
  return (numel(x) + numel(w) + (bias ? out[1] : 0) + numel(out)) * bpe;
}
std::optional<Conv> conv_params(const Args& a, size_t x, size_t w, bool bias, size_t first_scalar, int64_t& groups) {
  Conv c;
  c.x = a.dim(x), c.w = a.dim(w);
  if (c.x.size() < 3 || c.w.size() != c.x.size()) return std::nullopt;
  size_t nd = c.x.size() - 2, s = first_scalar;
  // Stride, padding and dilation decide the output; a trace without them (before PyTorch 1.13,
  // or no Concrete Inputs) gets no model rather than a guess: stride 1 for a stride-2 conv is 4x.
  if (a.conc(s).empty() || a.conc(s + 1).empty() || a.conc(s + 2).empty()) return std::nullopt;
  auto stride = int_list(a.conc(s), nd, 1), pad = int_list(a.conc(s + 1), nd, 0), dil = int_list(a.conc(s + 2), nd, 1);
  c.transposed = args::truthy(a.conc(s + 3));
  auto outpad = int_list(a.conc(s + 4), nd, 0);
  groups = int_list(a.conc(s + 5), 1, 1)[0];
  if (stride.size() != nd || pad.size() != nd || dil.size() != nd || outpad.size() != nd || groups <= 0)
    return std::nullopt;
  c.bias = bias;
  auto out = conv_out(c, stride, pad, dil, outpad, groups);
  if (!out) return std::nullopt;
  c.out = std::move(*out);
  return c;
}
// aten::convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
// groups). The bias counts when present (TraceLens never sees it: its check is len(dims) == 3).
std::optional<OpPerf> convolution(const Args& a) {
  int64_t groups;
  auto c = conv_params(a, 0, 1, a.has(2), 3, groups);
  if (!c) return std::nullopt;
  OpPerf p;
  p.matrix = true;
  p.dtype = a.type(0);
  p.flops = conv_flops(c->x, c->w, c->out, c->bias, c->transposed);
  if (int bpe = dtype_bytes(p.dtype)) p.bytes = conv_bytes(c->x, c->w, c->out, c->bias, bpe);
  return p;
}
// aten::convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding, dilation,
// transposed, output_padding, groups, output_mask): each gradient counted only if its
// output_mask entry asks for it.
std::optional<OpPerf> convolution_backward(const Args& a) {
  int64_t groups;
  std::vector<bool> want = args::bools(a.conc(10));  // "[True, True, False]"
  if (want.empty()) want = {true, true, true};
  while (want.size() < 3) want.push_back(false);
  bool bias = want[2] && (a.has(3) || !a.conc(3).empty());
  auto c = conv_params(a, 1, 2, bias, 4, groups);
  if (!c) return std::nullopt;
  auto t = [](Shape s) {
    std::swap(s[0], s[1]);
    return s;
  };
  OpPerf p;
  p.matrix = true;
  p.dtype = a.type(1);
  int bpe = dtype_bytes(p.dtype);
  double f = 0, b = 0;
  if (want[0]) {  // grad_input: a transposed conv of grad_output with the weight
    f += conv_flops(c->out, c->w, c->x, false, !c->transposed);
    b += conv_bytes(c->out, c->w, c->x, false, bpe);
  }
  if (want[1]) {  // grad_weight: input ⋆ grad_output
    f += c->transposed ? conv_flops(t(c->out), t(c->x), t(c->w), false, false)
                       : conv_flops(t(c->x), t(c->out), t(c->w), false, false);
    b += conv_bytes(c->out, c->x, c->w, false, bpe);
  }
  if (bias) {  // grad_bias: a sum over grad_output
    f += numel(c->out);
    b += (numel(c->out) + c->out[1]) * bpe;
  }
  p.flops = f;
  if (bpe) p.bytes = b;
  return p;
}

// ---- Attention: B·H_Q·(2·N_Q·N_KV·d_qk + 2·N_Q·N_KV·d_v), halved when causal (N_Q = N_KV) ----
struct Attn {
  double B, NQ, HQ, NKV, HKV, dqk, dv;
  bool causal;
};
// q, k, v are [B, H, N, d] for aten's SDPA ops and [B, N, H, d] for flash-attn's (`bnhd`).
std::optional<Attn> attn(const Args& a, size_t q, size_t k, size_t v, const std::string& causal, bool bnhd) {
  const Shape &Q = a.dim(q), &K = a.dim(k), &V = a.dim(v);
  if (Q.size() != 4 || K.size() != 4 || V.size() != 4) return std::nullopt;
  size_t h = bnhd ? 2 : 1, n = bnhd ? 1 : 2;
  return Attn{(double)Q[0], (double)Q[n], (double)Q[h], (double)K[n],
              (double)K[h], (double)Q[3], (double)V[3], args::truthy(causal)};
}
double attn_fwd_flops(const Attn& t) {
  double f = t.B * t.HQ * (2 * t.NQ * t.NKV * t.dqk + 2 * t.NQ * t.NKV * t.dv);
  return t.causal && t.NQ == t.NKV ? f / 2 : f;
}
double attn_fwd_elems(const Attn& t) {
  return t.B * (t.NQ * t.HQ * t.dqk + t.NKV * t.HKV * t.dqk + t.NKV * t.HKV * t.dv + t.NQ * t.HQ * t.dv);
}
// Backward: recomputed S = QK^T (flash), then dV, dP, dQ, dK GEMMs; GQA reduces dK/dV over
// H_Q / H_KV heads.
double attn_bwd_flops(const Attn& t, bool recompute) {
  double f = recompute ? t.B * t.HQ * 2 * t.NQ * t.NKV * t.dqk : 0;
  double g = t.HQ / std::max(1.0, t.HKV) - 1;
  f += t.B * t.HQ * 2 * t.NKV * t.NQ * t.dv + t.B * t.NKV * t.dv * g;
  f += t.B * t.HQ * 2 * t.NQ * t.NKV * t.dv;
  f += t.B * t.HQ * 2 * t.NQ * t.NKV * t.dqk;
  f += t.B * t.HQ * 2 * t.NKV * t.NQ * t.dqk + t.B * t.NKV * t.dqk * g;
  return t.causal && t.NQ == t.NKV ? f / 2 : f;
}
double attn_bwd_elems(const Attn& t) {
  return t.B * (2 * t.NQ * t.HQ * t.dqk + 2 * t.NKV * t.HKV * t.dqk + 2 * t.NKV * t.HKV * t.dv + t.NQ * t.HQ * t.dv);
}
Model attention(size_t q, size_t k, size_t v, size_t causal_arg, bool backward, bool recompute, bool bnhd = false) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    auto t = attn(a, q, k, v, a.conc(causal_arg), bnhd);
    if (!t) return std::nullopt;
    OpPerf p;
    p.matrix = true;
    p.dtype = a.type(q);
    p.flops = backward ? attn_bwd_flops(*t, recompute) : attn_fwd_flops(*t);
    // The real element size (TraceLens assumes 2 bytes).
    if (int bpe = dtype_bytes(p.dtype)) p.bytes = (backward ? attn_bwd_elems(*t) : attn_fwd_elems(*t)) * bpe;
    return p;
  };
}

// ---- Normalization (TraceLens's Normalization: 6·C + 5·N when training, bytes for the
// activations plus mean / var (+ weight, bias, running-stat writes)) ----
OpPerf norm_fwd(double N, double C, bool affine, bool bias, bool training, const std::string& dtype) {
  OpPerf p;
  p.dtype = dtype;
  p.flops = C * 3 + (training ? N * 3 : 0) + C * 3 + 2 * N;
  int bpe = dtype_bytes(dtype);
  double tensors = 2 + (affine ? 1 + (bias ? 1 : 0) : 0) + (training ? 2 : 0);
  if (bpe) p.bytes = 2 * N * bpe + tensors * C * bpe;
  return p;
}
OpPerf norm_bwd(double N, double C, bool affine, bool bias, bool training, bool grad_input, const std::string& dtype) {
  OpPerf p;
  p.dtype = dtype;
  double per = (training ? 0 : 3) + 4 * (N / C);
  if (grad_input)
    per += training ? 5 * (N / C) : 0;
  else
    per += 2 * (N / C);
  p.flops = C * per;
  if (int bpe = dtype_bytes(dtype)) {
    double b = N * bpe + N * bpe * (grad_input && training ? 2 : 1);
    if (training) b += C * bpe;
    if (affine) b += C * bpe + (training ? C * bpe * (bias ? 2 : 1) : 0);
    p.bytes = b;
  }
  return p;
}
// The element count of a shape a Concrete Input gives (normalized_shape "[768]"; 1 when not
// recorded); nullopt when a dimension is negative (no such tensor: a hostile trace).
std::optional<double> conc_numel(const std::string& text) {
  const std::vector<int64_t> v = int_list(text, 0, 1);
  if (std::any_of(v.begin(), v.end(), [](int64_t d) { return d < 0; })) return std::nullopt;
  return numel(v);
}
// layer_norm(input, normalized_shape, weight?, bias?, eps, cudnn_enable)
std::optional<OpPerf> layer_norm(const Args& a) {
  const auto C = conc_numel(a.conc(1));
  if (a.dim(0).empty() || !C) return std::nullopt;
  return norm_fwd(numel(a.dim(0)), *C, a.has(2), a.has(3), true, a.type(0));
}
// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?, bias?, output_mask)
std::optional<OpPerf> layer_norm_backward(const Args& a) {
  const auto C = conc_numel(a.conc(2));
  if (a.dim(1).empty() || !C) return std::nullopt;
  auto mask = args::bools(a.conc(7));
  while (mask.size() < 3) mask.push_back(true);
  return norm_bwd(numel(a.dim(1)), *C, mask[1], mask[2], true, mask[0], a.type(1));
}
// batch_norm(input, weight?, bias?, running_mean?, running_var?, training, momentum, eps, ...)
std::optional<OpPerf> batch_norm(const Args& a) {
  if (a.dim(0).size() < 2) return std::nullopt;
  return norm_fwd(numel(a.dim(0)), a.dim(0)[1], a.has(1), a.has(2), args::truthy(a.conc(5)), a.type(0));
}
// native_batch_norm_backward(grad_out, input, weight?, running_mean?, running_var?, save_mean?,
// save_invstd?, train, eps, output_mask); cudnn/miopen variants take (input, grad_out, weight, ...)
Model batch_norm_backward(bool cudnn) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    size_t in = cudnn ? 0 : 1;
    if (a.dim(in).size() < 2) return std::nullopt;
    bool training = cudnn ? false : args::truthy(a.conc(7));
    return norm_bwd(numel(a.dim(in)), a.dim(in)[1], a.has(2), true, training, true, a.type(in));
  };
}
// group_norm(input, num_groups, weight?, bias?, eps, ...) and native_group_norm(input, weight?,
// bias?, N, C, HxW, group, eps): per-channel like the others.
Model group_norm(size_t weight) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    if (a.dim(0).size() < 2) return std::nullopt;
    return norm_fwd(numel(a.dim(0)), a.dim(0)[1], a.has(weight), a.has(weight + 1), true, a.type(0));
  };
}
// native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group, output_mask)
std::optional<OpPerf> group_norm_backward(const Args& a) {
  if (a.dim(1).size() < 2) return std::nullopt;
  auto mask = args::bools(a.conc(9));
  while (mask.size() < 3) mask.push_back(true);
  return norm_bwd(numel(a.dim(1)), a.dim(1)[1], a.has(4), mask[2], true, mask[0], a.type(1));
}
// RMS norm (rms_norm / _fused_rms_norm(input, normalized_shape, weight?, eps)) over rows of C =
// prod(normalized_shape) elements: square and sum (2 per element), then per row the mean and
// rsqrt (2), then x · rstd and · weight (1 each per element; the latter only with a weight).
// Reads x and the weight, writes y (TraceLens's RMSNorm, which assumes a weight).
double rms_flops(double N, double C, bool weight) { return (weight ? 4 : 3) * N + 2 * (N / C); }
std::optional<OpPerf> rms_norm(const Args& a) {
  const auto row_size = conc_numel(a.conc(1));
  if (a.dim(0).empty() || !row_size || *row_size <= 0) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  const double N = numel(a.dim(0)), C = *row_size;
  const bool weight = a.has(2);
  p.flops = rms_flops(N, C, weight);
  if (int bpe = dtype_bytes(p.dtype)) p.bytes = 2 * N * bpe + (weight ? C * bpe : 0);
  return p;
}
// Serving engines' fused RMS norms (vLLM's _C kernels, AITER's, sgl_kernel's, FlashInfer's): rms_norm's
// count over rows of the weight's H elements (the input's last dimension), with a weight. Each
// engine orders the operands its own way; `FusedNorm` says where its schema puts each one (-1: the
// op has none):
//   x         the input [..., H];           w  the weight [H];
//   out       a separate output (else the result has x's dtype: in place, or returned);
//   residual  with the add: the residual, added to x first (1 FLOP per element) and kept as the
//             next residual (read and written, in place or into `residual_out`);
//   scale     a quantized output's scale: `quant` static (read; 1 multiply per element) or dynamic
//             (written; max-abs and scale per element: 2, TraceLens's count);
//   gemma     Gemma's norm multiplies by (1 + w): 1 more per element.
// Reads x (and the residual) and the weight, writes the output at its own dtype (an fp8 output is
// 1 byte) (and the new residual), and the scale.
enum class Quant { none, fixed, dynamic };
struct FusedNorm {
  int x, w, out = -1, residual = -1, scale = -1;
  Quant quant = Quant::none;
  bool gemma = false;
};
// The residual operand counts when the op is given one (vLLM's rms_norm_dynamic_per_token_quant
// takes an optional residual).
Model fused_rms_norm(FusedNorm n) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape &in = a.dim((size_t)n.x), &wt = a.dim((size_t)n.w);
    if (in.empty() || wt.size() != 1 || wt[0] != in.back() || wt[0] <= 0) return std::nullopt;
    const bool add = n.residual >= 0 && a.dim((size_t)n.residual) == in;
    const bool has_out = n.out >= 0 && a.dim((size_t)n.out) == in;
    if ((n.out >= 0 && !has_out) || (n.residual >= 0 && !add && a.has((size_t)n.residual))) return std::nullopt;
    OpPerf p;
    p.dtype = a.type((size_t)n.x);
    const double N = numel(in), H = (double)wt[0];
    p.flops = rms_flops(N, H, true) + (add ? N : 0) + (n.gemma ? N : 0) +
              (n.quant == Quant::fixed     ? N
               : n.quant == Quant::dynamic ? 2 * N
                                           : 0);
    const int b = dtype_bytes(p.dtype), bw = dtype_bytes(a.type((size_t)n.w));
    const int bo = has_out ? dtype_bytes(a.type((size_t)n.out)) : b;
    const int br = add ? dtype_bytes(a.type((size_t)n.residual)) : 0;
    const bool scaled = n.scale >= 0 && is_tensor(a, (size_t)n.scale);
    const int bs = scaled ? dtype_bytes(a.type((size_t)n.scale)) : 0;
    if (!b || !bw || !bo || (add && !br) || (scaled && !bs)) return p;
    p.bytes = N * b + H * bw + N * bo + (add ? 2 * N * br : 0) + (scaled ? numel(a.dim((size_t)n.scale)) * bs : 0);
    return p;
  };
}
// _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight?, output_mask): grad_input
// 8 per element (TraceLens), grad_weight 2 per element more; reads grad_out and x, writes grad_x,
// and with a weight reads it and writes its gradient.
std::optional<OpPerf> rms_norm_backward(const Args& a) {
  const auto row_size = conc_numel(a.conc(2));
  if (a.dim(1).empty() || !row_size) return std::nullopt;
  auto mask = args::bools(a.conc(5));
  while (mask.size() < 2) mask.push_back(true);
  OpPerf p;
  p.dtype = a.type(1);
  const double N = numel(a.dim(1)), C = *row_size;
  const bool weight = a.has(4);
  p.flops = 8 * N + (weight && mask[1] ? 2 * N : 0);
  if (int bpe = dtype_bytes(p.dtype)) p.bytes = 3 * N * bpe + (weight ? 2 * C * bpe : 0);
  return p;
}

// ---- Elementwise: one FLOP per output element; bytes of each tensor read and written ----
std::optional<OpPerf> unary(const Args& a) {
  if (a.dims.empty()) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  double n = numel(a.dim(0));
  p.flops = n;
  int in = dtype_bytes(p.dtype), out = a.has(1) ? dtype_bytes(a.type(1)) : in;
  if (in && out) p.bytes = n * in + n * out;
  return p;
}
std::optional<Shape> broadcast(Shape a, Shape b) {
  size_t n = std::max(a.size(), b.size());
  a.insert(a.begin(), n - a.size(), 1);
  b.insert(b.begin(), n - b.size(), 1);
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return std::nullopt;
    r[i] = std::max(a[i], b[i]);
  }
  return r;
}
// A scalar operand (Input Dims [], type "Scalar") costs no memory traffic (TraceLens gives up
// on the bytes there). The output's dtype is PyTorch's result type of the operands (result_dtype):
// a 0-dim tensor or a Python scalar does not widen a tensor's dtype within its category (bf16 ·
// double[] is bf16), so neither the output bytes nor the peak are fp64's.
// A comparison (eq, lt, ...) computes in the result type and writes bool.
Model binary(bool writes_bool) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    if (a.dims.size() < 2) return std::nullopt;
    bool t1 = a.type(0) != "Scalar" && !a.type(0).empty(), t2 = a.type(1) != "Scalar" && !a.type(1).empty();
    auto out = broadcast(a.dim(0), a.dim(1));
    if (!out) return std::nullopt;
    OpPerf p;
    std::vector<Operand> ops;
    for (size_t i = 0; i < 2; ++i) ops.push_back({a.type(i), !a.dim(i).empty(), a.conc(i)});
    const std::string result = result_dtype(ops);
    p.dtype = result.empty() ? (t1 ? a.type(0) : a.type(1)) : result;
    p.flops = numel(*out);
    int b1 = t1 ? dtype_bytes(a.type(0)) : 0, b2 = t2 ? dtype_bytes(a.type(1)) : 0;
    // An out= tensor (a third operand with dims) gives the output's dtype; else the result type.
    int bo = a.has(2) && dtype_bytes(a.type(2)) ? dtype_bytes(a.type(2))
             : writes_bool                      ? dtype_bytes("bool")
                                                : dtype_bytes(p.dtype);
    if ((b1 || !t1) && (b2 || !t2) && bo) p.bytes = numel(a.dim(0)) * b1 + numel(a.dim(1)) * b2 + numel(*out) * bo;
    return p;
  };
}
// fill_ / zero_(self[, value]): writes every element, reads none, computes nothing.
std::optional<OpPerf> fill(const Args& a) {
  if (a.dims.empty()) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  p.flops = 0;
  if (int bpe = dtype_bytes(p.dtype)) p.bytes = numel(a.dim(0)) * bpe;
  return p;
}
// aten::embedding(weight [V, D], indices): a gather of D values per index; no arithmetic.
std::optional<OpPerf> embedding(const Args& a) {
  if (a.dim(0).size() != 2 || a.dims.size() < 2) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  double idx = numel(a.dim(1)), d = a.dim(0)[1];
  p.flops = 0;
  int bw = dtype_bytes(a.type(0)), bi = dtype_bytes(a.type(1));
  if (bw && bi) p.bytes = idx * bi + 2 * idx * d * bw;
  return p;
}

// aten::index_select(self, dim, index): gathers index.numel() slices along dim; no arithmetic.
std::optional<OpPerf> index_select(const Args& a) {
  const Shape& x = a.dim(0);
  if (x.empty() || a.dims.size() < 3) return std::nullopt;
  int64_t dim = int_list(a.conc(1), 1, 0)[0];
  if (dim < 0) dim += (int64_t)x.size();
  if (dim < 0 || dim >= (int64_t)x.size()) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  double idx = numel(a.dim(2)), out = numel(x) / (double)x[dim] * idx;
  p.flops = 0;
  int bw = dtype_bytes(a.type(0)), bi = dtype_bytes(a.type(2));
  if (bw && bi) p.bytes = idx * bi + 2 * out * bw;
  return p;
}

// ---- Reductions: one FLOP per input element; read the input, write the reduced output ----
Shape reduced_shape(const Shape& in, const std::string& dims, bool keepdim) {
  if (dims.empty() || dims == "[]" || dims == "None") return keepdim ? Shape(in.size(), 1) : Shape{};
  Shape out = in;
  std::vector<int64_t> ds = int_list(dims, 0, 0);
  for (auto& d : ds)
    if (d < 0) d += (int64_t)in.size();
  std::sort(ds.rbegin(), ds.rend());
  for (int64_t d : ds)
    if (d >= 0 && d < (int64_t)out.size()) {
      if (keepdim)
        out[d] = 1;
      else
        out.erase(out.begin() + d);
    }
  return out;
}
// sum/mean/amax/...(self, dim, keepdim, ...): dim and keepdim from Concrete Inputs, at the
// positions the op's schema puts them (norm(self, p, dim, keepdim), var(self, dim, correction,
// keepdim), ...).
Model reduce(size_t dim_arg, size_t keepdim_arg) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    if (a.dims.empty()) return std::nullopt;
    OpPerf p;
    p.dtype = a.type(0);
    double n = numel(a.dim(0));
    Shape out =
        a.dims.size() > dim_arg ? reduced_shape(a.dim(0), a.conc(dim_arg), args::truthy(a.conc(keepdim_arg))) : Shape{};
    p.flops = n;
    if (int bpe = dtype_bytes(p.dtype)) p.bytes = n * bpe + numel(out) * bpe;
    return p;
  };
}
// softmax / log_softmax(self, dim, ...): exp, sum and divide per element (TraceLens's Softmax).
std::optional<OpPerf> softmax(const Args& a) {
  if (a.dims.empty()) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  double n = numel(a.dim(0));
  p.flops = 3 * n;
  if (int bpe = dtype_bytes(p.dtype)) p.bytes = 2 * n * bpe;
  return p;
}

// where(condition, self, other): one select per output element (the broadcast of the three);
// reads the bool condition and both values (a Python scalar moves nothing), writes the result type.
std::optional<OpPerf> where(const Args& a) {
  if (a.dims.size() < 3) return std::nullopt;
  auto xy = broadcast(a.dim(0), a.dim(1));
  auto out = xy ? broadcast(*xy, a.dim(2)) : std::nullopt;
  if (!out) return std::nullopt;
  OpPerf p;
  const std::string result = result_dtype({{a.type(1), a.has(1), a.conc(1)}, {a.type(2), a.has(2), a.conc(2)}});
  p.dtype = result.empty() ? a.type(1) : result;
  p.flops = numel(*out);
  double b = numel(a.dim(0)) * dtype_bytes("bool");
  for (size_t i = 1; i < 3; ++i)
    if (a.type(i) != "Scalar") b += numel(a.dim(i)) * dtype_bytes(a.type(i));
  if (int bo = dtype_bytes(p.dtype)) p.bytes = b + numel(*out) * bo;
  return p;
}

// Samples of a loss input [N, C, ...] (C classes) or [C] (one sample).
double loss_samples(const Shape& x) { return x.size() == 1 ? 1 : numel(x) / (double)x[1]; }

// nll_loss / nll_loss_nd / nll_loss_forward(self [N, C, ...] or [C], target, weight?, reduction,
// ignore_index): picks one log-probability per sample (times its weight) and sums them: one FLOP
// per sample; reads those values, the targets (and weights), writes N values (reduction 'none',
// 0) or one.
std::optional<OpPerf> nll_loss(const Args& a) {
  const Shape& x = a.dim(0);
  if (x.empty() || a.dims.size() < 2) return std::nullopt;
  const double samples = loss_samples(x);
  const bool none = int_list(a.conc(3), 1, 1)[0] == 0;
  OpPerf p;
  p.dtype = a.type(0);
  p.flops = samples;
  int b = dtype_bytes(p.dtype), bt = dtype_bytes(a.type(1));
  if (b && bt) p.bytes = samples * (b + bt + (a.has(2) ? b : 0)) + (none ? samples : 1) * b;
  return p;
}
// nll_loss_backward(grad_output, self, target, weight?, reduction, ignore_index, total_weight):
// writes the whole gradient (zeros, and -weight at each target): one FLOP per sample; reads the
// targets and grad_output.
std::optional<OpPerf> nll_loss_backward(const Args& a) {
  const Shape& x = a.dim(1);
  if (x.empty() || a.dims.size() < 3) return std::nullopt;
  const double samples = loss_samples(x);
  OpPerf p;
  p.dtype = a.type(1);
  p.flops = samples;
  int b = dtype_bytes(p.dtype), bt = dtype_bytes(a.type(2));
  if (b && bt) p.bytes = numel(x) * b + samples * bt + numel(a.dim(0)) * b;
  return p;
}

// index_add_(self, dim, index, source, alpha): adds source's slices into self's: one FLOP per
// source element; reads the indices and source, reads and writes those slices of self.
std::optional<OpPerf> index_add(const Args& a) {
  if (a.dims.size() < 4 || !a.has(3)) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  const double n = numel(a.dim(3));
  p.flops = n;
  int b = dtype_bytes(p.dtype), bi = dtype_bytes(a.type(2));
  if (b && bi) p.bytes = numel(a.dim(2)) * bi + 3 * n * b;
  return p;
}
// scatter_(self, dim, index, src | value) writes one element per index (read from src when it is
// a tensor); scatter_add_(self, dim, index, src) adds it: one FLOP, and a read of self, per index.
Model scatter(bool adds) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    if (a.dims.size() < 4 || !a.has(2)) return std::nullopt;
    OpPerf p;
    p.dtype = a.type(0);
    const double n = numel(a.dim(2));
    const bool src = a.type(3) != "Scalar" && !a.type(3).empty();
    p.flops = adds ? n : 0;
    int b = dtype_bytes(p.dtype), bi = dtype_bytes(a.type(2));
    if (b && bi) p.bytes = n * bi + n * b * ((src ? 1 : 0) + 1 + (adds ? 1 : 0));
    return p;
  };
}
// index_put_ / _index_put_impl_(self, indices, values, accumulate, ...): writes the values at the
// indexed places (reading them there too when accumulating: one FLOP each). The indices are a
// list the profiler records without shapes: not counted.
std::optional<OpPerf> index_put(const Args& a) {
  if (a.dims.size() < 3) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  const double n = numel(a.dim(2));
  const bool accumulate = args::truthy(a.conc(3));
  p.flops = accumulate ? n : 0;
  int b = dtype_bytes(a.type(2)) ? dtype_bytes(a.type(2)) : dtype_bytes(p.dtype);
  if (b) p.bytes = n * b * (accumulate ? 3 : 2);
  return p;
}

// _foreach_OP(TensorList self, ...): OP on every tensor of the list, `per_element` FLOPs per
// element of self (addcmul / addcdiv / lerp: 3). The profiler records no dtype for a TensorList's
// tensors, so no bytes.
Model foreach_op(double per_element) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    if (a.lists.empty() || a.lists[0].empty()) return std::nullopt;
    OpPerf p;
    double n = 0;
    for (const Shape& t : a.lists[0]) n += numel(t);
    p.flops = n * per_element;
    return p;
  };
}

// _grouped_mm(mat_a, mat_b, offs?, bias?, out_dtype?) and _scaled_grouped_mm(mat_a, mat_b,
// scale_a, scale_b, offs?, ...): G GEMMs in one kernel. A [M, K] x B [G, K, N] (MoE: offs splits
// A's rows among the G experts) is 2·M·K·N FLOPs; A [G, M, K] x B [G, K, N] is batched; A [M, K] x
// B [K, N] with offs splitting K gives G outputs [M, N] (2·M·K·N FLOPs). Bytes: A, B, the output
// (fp8 inputs write 2-byte outputs).
Model grouped_mm(size_t offs_arg) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape &A = a.dim(0), &B = a.dim(1);
    int bpe = dtype_bytes(a.type(0));
    int out_bpe = bpe == 1 ? 2 : bpe;
    double M, K, N, outputs;
    if (A.size() == 2 && B.size() == 3 && A[1] == B[1])
      M = A[0], K = A[1], N = B[2], outputs = M * N;
    else if (A.size() == 3 && B.size() == 3 && A[0] == B[0] && A[2] == B[1])
      M = A[0] * A[1], K = A[2], N = B[2], outputs = M * N;
    else if (A.size() == 2 && B.size() == 2 && A[1] == B[0] && a.has(offs_arg))
      M = A[0], K = A[1], N = B[1], outputs = numel(a.dim(offs_arg)) * M * N;
    else
      return std::nullopt;
    OpPerf p;
    p.matrix = true;
    p.dtype = a.type(0);
    p.flops = 2 * M * K * N;
    if (bpe) p.bytes = numel(A) * bpe + numel(B) * dtype_bytes(a.type(1)) + outputs * out_bpe;
    return p;
  };
}

// _C::rotary_embedding / vllm::rotary_embedding(positions [T], query [T, Hq·D], key? [T, Hk·D],
// head_size D, cos_sin_cache [P, R], is_neox): rotates the first R of each head's D elements in
// place, x·cos - y·sin: 3 FLOPs per rotated element; reads and writes them, reads a cache row of
// R values and the position per token.
std::optional<OpPerf> rotary_embedding(const Args& a) {
  const Shape &pos = a.dim(0), &cache = a.dim(4);
  const double D = (double)int_list(a.conc(3), 1, 0)[0];
  if (pos.empty() || !a.has(1) || cache.size() != 2 || D <= 0) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(1);
  const double T = numel(pos), R = (double)cache[1];
  const double rotated = (numel(a.dim(1)) + (a.has(2) ? numel(a.dim(2)) : 0)) * std::min(1.0, R / D);
  p.flops = 3 * rotated;
  int b = dtype_bytes(p.dtype), bc = dtype_bytes(a.type(4)), bp = dtype_bytes(a.type(0));
  if (b && bc && bp) p.bytes = 2 * rotated * b + T * R * bc + T * bp;
  return p;
}

// Which of a serving step's requests an attention op computed (TraceLens's InferenceAttention
// counts the whole step for every op). A decode kernel (paged attention, MLA decode: one query per
// request, or a few with speculative decoding) computes the generation requests (g_) only; any
// other op what its query's `rows` say: the whole step (rows >= c_sq + g_sq: under a CUDA graph the
// rows are the graph's padded batch), or exactly one group (vLLM's MLA runs its prefill requests
// through FlashAttention and its decode requests through FlashMLA, each op given those rows). Any
// other count (a micro-batch of the step, or rows equal to both groups' sizes) is a part the step's
// sums do not describe: none. So is one group's rows over contiguous keys (`key_rows`, a [tokens,
// Hkv, D] key rather than a cache; < 0 for a cache) other than the group's sk: vLLM's MLA prefill
// over a cached prefix attends to the new tokens and to chunks of the prefix in separate calls,
// each given the same query rows.
std::optional<StepLengths> requests_of(const StepLengths& s, double rows, bool decode, double key_rows = -1) {
  StepLengths r = s;
  const double c = (double)s.c_sq, g = (double)s.g_sq;
  const auto generation_only = [&] { r.c_sq = r.c_sk = r.c_sqsq = r.c_sqsk = 0; };
  const auto context_only = [&] { r.g_sq = r.g_sk = r.g_sqsq = r.g_sqsk = 0; };
  if (decode)
    generation_only();
  else if (rows >= c + g) {
  } else if (rows == c && rows != g && (key_rows < 0 || key_rows == (double)s.c_sk))
    context_only();
  else if (rows == g && rows != c && (key_rows < 0 || key_rows == (double)s.g_sk))
    generation_only();
  else
    return std::nullopt;
  // (Each group's sums as a step annotation can hold them: sq <= sk per request, so sq <= sk and
  // sq·sq <= sq·sk; a hand-edited one that breaks that would give negative FLOPs.)
  // (The lengths are a trace's int64s: their sum saturates rather than overflow.)
  if (sat_add(r.c_sq, r.g_sq) <= 0 || r.c_sq > r.c_sk || r.g_sq > r.g_sk || r.c_sqsq > r.c_sqsk || r.g_sqsq > r.g_sqsk)
    return std::nullopt;
  return r;
}

// One layer's attention over a serving step's requests (TraceLens's InferenceAttention): the op's
// shapes give the heads and head sizes, the step annotation the requests' lengths (StepLengths,
// src/kind.h). Each query attends to its request's sk keys:
//   FLOPs = Hq·2·(Dqk + Dv)·(c_sqsk + g_sqsk) - Hq·(Dqk + Dv)·c_sqsq
// (QKᵀ and PV; a prefill chunk attends to itself causally, which skips half of its sq² pairs),
//   bytes = (c_sq + g_sq)·Hq·(Dqk + Dv)·bpe(query)              Q read, O written
//         + (c_sq + g_sq)·W·bpe(query)                          the new tokens' K, V
//         + (c_sk - c_sq + g_sk - g_sq)·W·bpe(key)               the cached K, V
// with W the K / V elements per token: Hkv·(Dqk + Dv), or for MLA's latent cache, which holds K
// and V in one row of Dqk (kv_lora_rank + rope) elements, Dqk.
// What the ops record differs; `ServingAttn` says where each engine's schema puts it:
//   q        the query [..., Hq, Dq] ([T, Hq, D] or [B, S, Hq, D]; rows = numel / (Hq·Dq));
//   q_pe     MLA with a split query: q is q_nope [.., Hq, kv_lora_rank], q_pe [.., Hq, rope]:
//            Dqk = their sum, Dv = kv_lora_rank;
//   k, v     the key and value (or their caches): Hkv is k's dimension before the head size
//            ([T, Hkv, D], [pages, page, Hkv, D]), or k[1] for the vectorized paged layout
//            [blocks, Hkv, D/x, block, x] (whose kernels take one head size: Dv = Dqk) and for a
//            kv_cache_layout argument "HND" ([pages, Hkv, page, D]); Dv is v's last dimension;
//            v < 0: MLA's latent cache (Hkv = 1, K and V in one row);
//   hkv_conc num_kv_heads when the op takes it; dv_conc head_size_v (FlashMLA);
//   decode   a decode kernel (requests_of).
// No lengths (no detailed step annotation around the op), no requests (requests_of), heads that
// do not divide (GQA needs Hq a multiple of Hkv), or an MLA op whose value size is not recorded:
// no model. A sliding-window layer attends to fewer keys than its request's sk, which the op does
// not record: its numbers are those of full attention (as TraceLens's).
struct ServingAttn {
  int q = 0, k = 1, v = 2, q_pe = -1, hkv_conc = -1, dv_conc = -1, layout_conc = -1;
  bool decode = false;
};
OpPerf step_attention(const StepLengths& s, double Hq, double Dqk, double Dv, double kv_width, const std::string& dtype,
                      int b, int bk) {
  OpPerf p;
  p.matrix = true;
  p.dtype = dtype;
  const double sqsk = (double)s.c_sqsk + (double)s.g_sqsk;
  p.flops = Hq * 2 * (Dqk + Dv) * sqsk - Hq * (Dqk + Dv) * (double)s.c_sqsq;
  const double sq = (double)s.c_sq + (double)s.g_sq;
  const double cached = (double)s.c_sk - (double)s.c_sq + (double)s.g_sk - (double)s.g_sq;
  if (b && bk) p.bytes = sq * (Hq * (Dqk + Dv) + kv_width) * b + cached * kv_width * bk;
  return p;
}
Model inference_attention(ServingAttn m) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape &q = a.dim((size_t)m.q), &k = a.dim((size_t)m.k);
    if (!a.step || q.size() < 3 || k.size() < 2) return std::nullopt;
    const double Hq = (double)q[q.size() - 2], Dq = (double)q.back();
    if (Hq <= 0 || Dq <= 0) return std::nullopt;
    double Dqk = Dq, Dv = 0, Hkv = 1;
    if (m.q_pe >= 0) {  // MLA, split query: q_nope is kv_lora_rank wide, the latent row that wide + rope
      const Shape& pe = a.dim((size_t)m.q_pe);
      if (pe.size() != q.size() || pe[pe.size() - 2] != q[q.size() - 2]) return std::nullopt;
      Dqk = Dq + (double)pe.back(), Dv = Dq;
    }
    if (m.dv_conc >= 0) Dv = (double)int_list(a.conc((size_t)m.dv_conc), 1, 0)[0];
    if (m.v < 0) {  // MLA's latent cache: one head, each row K (all Dqk) and V (its first Dv)
      if ((double)k.back() != Dqk || Dv <= 0 || Dv > Dqk) return std::nullopt;
    } else {
      const bool hnd = m.layout_conc >= 0 && a.conc((size_t)m.layout_conc) == "HND";
      // (num_kv_heads when the trace records Concrete Inputs, else the cache's layout says it)
      const bool given = m.hkv_conc >= 0 && !a.conc((size_t)m.hkv_conc).empty();
      Hkv = (double)(given                                     ? int_list(a.conc((size_t)m.hkv_conc), 1, 0)[0]
                     : k.size() == 5 || (hnd && k.size() == 4) ? k[1]
                                                               : k[k.size() - 2]);
      const Shape& v = a.dim((size_t)m.v);
      Dv = k.size() == 5 ? Dqk : (double)(v.size() >= 3 ? v.back() : k.back());
      if (Hkv <= 0 || Dv <= 0 || std::fmod(Hq, Hkv) != 0) return std::nullopt;
    }
    const auto s = requests_of(*a.step, numel(q) / (Hq * Dq), m.decode, k.size() == 3 ? (double)k[0] : -1);
    if (!s) return std::nullopt;
    const double kv_width = m.v < 0 ? Dqk : Hkv * (Dqk + Dv);
    return step_attention(*s, Hq, Dqk, Dv, kv_width, a.type((size_t)m.q), dtype_bytes(a.type((size_t)m.q)),
                          dtype_bytes(a.type((size_t)m.k)));
  };
}
// vLLM's MLA layer, vllm::unified_mla_attention_with_output(q [T, Hq, Dqk], kv_c_normed [T, L],
// k_pe [T, (1,) R], output [T, Hq·Dv], layer_name, ...) / unified_mla_attention(q, kv_c_normed,
// k_pe, layer_name): the op computes both groups, each its own way (DeepSeek's MLA):
//   decode requests on the latent cache, the query absorbed into it: per (query, key) pair Hq·2·
//   ((L + R) + L) FLOPs; Q and O of Hq·(L + R) and Hq·L, each key a latent row of L + R;
//   prefill requests as multi-head attention with K, V expanded per head: Hq·2·(Dqk + Dv), causal
//   halving as above; Q, O and each key's Hq·(Dqk + Dv).
// Dv (v_head_dim) is the output's width per head; unified_mla_attention records no output, so it
// has a model for decode requests only. The absorbing and expanding GEMMs (W_UK, W_UV, kv_b_proj)
// are aten ops below it with their own models. The latent cache is read at kv_c_normed's dtype.
std::optional<OpPerf> unified_mla_attention(const Args& a) {
  const Shape &q = a.dim(0), &kv = a.dim(1), &pe = a.dim(2), &out = a.dim(3);
  if (!a.step || q.size() != 3 || kv.size() != 2 || pe.empty() || kv[0] != q[0]) return std::nullopt;
  const double T = (double)q[0], Hq = (double)q[1], Dqk = (double)q[2], L = (double)kv[1], R = (double)pe.back();
  if (Hq <= 0 || T <= 0) return std::nullopt;
  const double Dv = a.has(3) && (double)out[0] == T ? numel(out) / (T * Hq) : 0;
  const auto s = requests_of(*a.step, T, false);
  if (!s || (s->c_sq > 0 && Dv <= 0)) return std::nullopt;
  StepLengths decode = *s, prefill = *s;
  decode.c_sq = decode.c_sk = decode.c_sqsq = decode.c_sqsk = 0;
  prefill.g_sq = prefill.g_sk = prefill.g_sqsq = prefill.g_sqsk = 0;
  const int b = dtype_bytes(a.type(0)), bk = dtype_bytes(a.type(1));
  OpPerf p = step_attention(decode, Hq, L + R, L, L + R, a.type(0), b, bk);
  if (prefill.c_sq > 0) {
    const OpPerf c = step_attention(prefill, Hq, Dqk, Dv, Hq * (Dqk + Dv), a.type(0), b, b);
    p.flops = *p.flops + *c.flops;
    p.bytes = p.bytes && c.bytes ? std::optional<double>(*p.bytes + *c.bytes) : std::nullopt;
  }
  return p;
}

// Fused MoE: vllm::inplace_fused_experts / outplace_fused_experts, vllm::rocm_aiter_fused_moe and
// SGLang's (hidden [M, K], w1 [E, G·N, K], w2 [E, K, N], topk_weights [M, topk], ...; G = 2 when
// w1 holds the gate and up projections, 1 otherwise). Each token runs through topk experts
// (TraceLens's FusedMoE):
//   FLOPs = 2·M·topk·K·N·G + 2·M·topk·N·K + M·K·(2·topk - 1)   (up / gate, down, weighted sum)
//   bytes = 2·M·K·bpe(hidden) + min(E, M·topk)·(G·N·K·bpe(w1) + K·N·bpe(w2))
// The batch's M·topk assignments reach at most min(E, M·topk) experts, whose weights are read once:
// exact for one token and for a batch that reaches every expert (a decode batch of 32 tokens with
// top-4 of 32 experts misses a given expert with probability (1 - 4/32)^32 = 1.4%), an upper bound
// in between; which experts the router picked is not recorded. (TraceLens counts topk experts'
// weights, as if every token picked the same ones.) Shapes that do not fit together: no model.
std::optional<OpPerf> fused_moe(const Args& a) {
  const Shape &x = a.dim(0), &w1 = a.dim(1), &w2 = a.dim(2), &tw = a.dim(3);
  if (x.size() != 2 || w1.size() != 3 || w2.size() != 3 || tw.size() != 2 || tw[0] != x[0]) return std::nullopt;
  const double M = (double)x[0], K = (double)x[1], E = (double)w1[0], N = (double)w2[2], topk = (double)tw[1];
  if (w2[0] != w1[0] || w1[2] != x[1] || w2[1] != x[1] || N <= 0 || topk <= 0) return std::nullopt;
  const double G = (double)w1[1] == 2 * N ? 2 : (double)w1[1] == N ? 1 : 0;
  if (G == 0) return std::nullopt;
  OpPerf p;
  p.matrix = true;
  p.dtype = a.type(0);
  p.flops = 2 * M * topk * K * N * G + 2 * M * topk * N * K + M * K * (2 * topk - 1);
  const int b = dtype_bytes(p.dtype), b1 = dtype_bytes(a.type(1)), b2 = dtype_bytes(a.type(2));
  if (b && b1 && b2) p.bytes = 2 * M * K * b + std::min(E, M * topk) * (G * N * K * b1 + K * N * b2);
  return p;
}

// _C_cache_ops::reshape_and_cache(_flash)(key [T, Hkv, D], value [T, Hkv, D], key_cache,
// value_cache, slot_mapping [T'], kv_cache_dtype, k_scale, v_scale): copies each new token's K and V
// into its slot of the paged cache. No FLOPs; reads K, V and the slots, writes K and V at the
// cache's dtype (an fp8 cache is a uint8 tensor: 1 byte).
std::optional<OpPerf> kv_cache_write(const Args& a) {
  if (!a.has(0) || !a.has(1) || !a.has(2) || !a.has(4)) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  p.flops = 0;
  const double kv = numel(a.dim(0)) + numel(a.dim(1));
  const int b = dtype_bytes(p.dtype), bc = dtype_bytes(a.type(2)), bs = dtype_bytes(a.type(4));
  if (b && bc && bs) p.bytes = kv * b + kv * bc + numel(a.dim(4)) * bs;
  return p;
}

// Gated activations of serving engines, act(input[..., :d]) · input[..., d:] -> out [..., d]
// (out, input, ...: vLLM's _C, sgl_kernel, AITER, FlashInfer alike). FLOPs per output element as
// TraceLens counts them: SiLU x / (1 + exp(-x)) and the product 5, GELU (erf) 8, GELU (tanh) 10
// (aten's silu / gelu count 1 per element: TraceLens's unary rule, docs/perf_models.md). Reads the
// input, writes the output; a quantizing variant also scales each output element (1 more; a
// dynamic scale: its max-abs too, 2) and reads or writes the scale.
Model act_and_mul(double per_element, Quant quant = Quant::none) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape &out = a.dim(0), &in = a.dim(1);
    if (out.empty() || in.size() != out.size() || in.back() != 2 * out.back() || numel(in) != 2 * numel(out))
      return std::nullopt;
    OpPerf p;
    p.dtype = a.type(1);
    const double n = numel(out);
    p.flops = n * (per_element + (quant == Quant::fixed ? 1 : quant == Quant::dynamic ? 2 : 0));
    const int bi = dtype_bytes(a.type(1)), bo = dtype_bytes(a.type(0));
    const bool scaled = quant != Quant::none && is_tensor(a, 2);
    const int bs = scaled ? dtype_bytes(a.type(2)) : 0;
    if (bi && bo && (!scaled || bs)) p.bytes = 2 * n * bi + n * bo + (scaled ? numel(a.dim(2)) * bs : 0);
    return p;
  };
}

// Quantization to fp8 / int8 / fp4 (the activations before a quantized GEMM): scales each element
// (1 FLOP; a dynamic scale first finds the max-abs: 2, the norms' count above). Reads the input,
// writes the quantized output at its dtype (fp4 packs two values a byte: its tensor has half the
// elements) and reads (static) or writes (dynamic) the scales. `in`, `out`, `scale`: where the
// schema puts them (vLLM's _C ops take (result, input, scale), sgl_kernel's (input, output_q,
// output_s)). `static_conc`: a Concrete Input that says whether the scale is static.
Model quantize(int in, int out, int scale, Quant quant, int static_conc = -1) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape &x = a.dim((size_t)in), &y = a.dim((size_t)out);
    if (x.empty() || y.empty() || (numel(y) != numel(x) && 2 * numel(y) != numel(x))) return std::nullopt;
    const Quant kind = static_conc >= 0 && args::truthy(a.conc((size_t)static_conc)) ? Quant::fixed : quant;
    OpPerf p;
    p.dtype = a.type((size_t)in);
    p.flops = numel(x) * (kind == Quant::fixed ? 1 : 2);
    const int bx = dtype_bytes(a.type((size_t)in)), by = dtype_bytes(a.type((size_t)out));
    const int bs = is_tensor(a, (size_t)scale) ? dtype_bytes(a.type((size_t)scale)) : 0;
    if (bx && by && bs) p.bytes = numel(x) * bx + numel(y) * by + numel(a.dim((size_t)scale)) * bs;
    return p;
  };
}

// sgl_kernel / FlashInfer apply_rope_pos_ids_cos_sin_cache(q [T, Hq, D], k [T, Hk, D], q_rope,
// k_rope, cos_sin_cache [P, R], pos_ids [T], interleave, enable_pdl, stream, v?, k_buffer?,
// v_buffer?, kv_cache_loc?): rotates the first R of each head's D elements into q_rope / k_rope
// (3 FLOPs per rotated element, as rotary_embedding); reads q and k and writes them whole (the
// outputs are other tensors), a cache row and a position per token. SGLang's fused KV-cache save
// (v and the buffers given) also reads v and writes k and v into the cache at its dtype, and reads
// the slots.
std::optional<OpPerf> apply_rope_cos_sin_cache(const Args& a) {
  const Shape &q = a.dim(0), &k = a.dim(1), &cache = a.dim(4), &pos = a.dim(5);
  if (q.size() < 2 || k.size() < 2 || cache.size() != 2 || pos.empty() || q.back() <= 0) return std::nullopt;
  OpPerf p;
  p.dtype = a.type(0);
  const double D = (double)q.back(), R = (double)cache[1], T = numel(pos), qk = numel(q) + numel(k);
  p.flops = 3 * qk * std::min(1.0, R / D);
  const int b = dtype_bytes(p.dtype), bc = dtype_bytes(a.type(4)), bp = dtype_bytes(a.type(5));
  if (!b || !bc || !bp) return p;
  double bytes = 2 * qk * b + T * R * bc + T * bp;
  if (a.has(9) && a.has(10) && a.has(12)) {
    const int bv = dtype_bytes(a.type(9)), bb = dtype_bytes(a.type(10)), bl = dtype_bytes(a.type(12));
    if (!bv || !bb || !bl) return p;
    bytes += numel(a.dim(9)) * bv + (numel(k) + numel(a.dim(9))) * bb + numel(a.dim(12)) * bl;
  }
  p.bytes = bytes;
  return p;
}

// GEMMs of serving engines' kernels, quantized (fp8 / int8 activations and weights with scales)
// or skinny: 2·M·N·K (+ M·N with a bias), from the activations A [..., K] and the weights B, which
// each schema puts at `a` and `b`, as [K, N] (vLLM's cutlass_scaled_mm, sgl_kernel's) or
// [N, K] (`b_nk`: AITER's, vLLM's ROCm skinny kernels). Bytes: A, B and the output at their
// recorded dtypes (the output tensor's when the op takes one; else 2 bytes for 8-bit inputs:
// these kernels write fp16 or bf16, AITER's assert it; else A's size), and the bias. The scales
// (per tensor, token, channel or 128-block) are left out, as for aten::_scaled_mm (TraceLens's
// gemm_a8w8_blockscale does the same): at most K/128 of A's and B's sizes.
struct ServingGemm {
  int a, b;
  bool b_nk;
  int out = -1, bias = -1;
};
Model serving_gemm(ServingGemm g) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape &A = a.dim((size_t)g.a), &B = a.dim((size_t)g.b);
    if (A.size() < 2 || B.size() != 2 || A.back() <= 0) return std::nullopt;
    const double K = (double)A.back(), M = numel(A) / K, N = (double)(g.b_nk ? B[0] : B[1]);
    if ((double)(g.b_nk ? B[1] : B[0]) != K) return std::nullopt;
    const bool bias = g.bias >= 0 && numel(a.dim((size_t)g.bias)) == N && a.has((size_t)g.bias);
    const bool out = g.out >= 0 && numel(a.dim((size_t)g.out)) == M * N && a.has((size_t)g.out);
    OpPerf p;
    p.matrix = true;
    p.dtype = a.type((size_t)g.a);
    p.flops = 2 * M * N * K + (bias ? M * N : 0);
    const int ba = dtype_bytes(p.dtype), bb = dtype_bytes(a.type((size_t)g.b));
    const int bo = out ? dtype_bytes(a.type((size_t)g.out)) : ba == 1 ? 2 : ba;
    const int bbias = bias ? dtype_bytes(a.type((size_t)g.bias)) : 0;
    if (ba && bb && bo && (!bias || bbias)) p.bytes = M * K * ba + N * K * bb + M * N * bo + (bias ? N * bbias : 0);
    return p;
  };
}
// A weight-only quantized GEMM (int4 / int8 / fp8 weights packed into int32 words, 16-bit
// activations): 2·M·N·K at the activations' dtype (the product runs on dequantized values);
// reads A and the packed weights as recorded (their int32 words hold K·N·bits / 8 bytes), writes
// M·N at A's dtype. The scales and zero points (per group of 32-128 along K) are left out.
OpPerf packed_gemm(double M, double N, double K, const std::string& a_type, double weight_bytes) {
  OpPerf p;
  p.matrix = true;
  p.dtype = a_type;
  p.flops = 2 * M * N * K;
  if (const int ba = dtype_bytes(a_type); ba && weight_bytes > 0) p.bytes = M * K * ba + weight_bytes + M * N * ba;
  return p;
}
double tensor_bytes(const Args& a, size_t i) { return numel(a.dim(i)) * dtype_bytes(a.type(i)); }
// Marlin (vLLM's gptq_marlin_gemm / marlin_gemm / fp8_marlin_gemm, sgl_kernel's gptq_marlin_gemm):
// (a [M, K], [c?,] b_q_weight (int32), ..., size_m, size_n, size_k, ...). The schema has changed
// between versions (b_q_weight at 1 or 2; size_m at 7 to 12), so the weights are the first int32
// tensor after a, and (size_m, size_n, size_k) the last three integers in a row that match a's
// [M, K]: no model when none do.
std::optional<OpPerf> marlin_gemm(const Args& a) {
  const Shape& A = a.dim(0);
  if (A.size() != 2) return std::nullopt;
  size_t w = 1;
  while (w < a.dims.size() && !(a.has(w) && a.type(w) == "int")) ++w;
  if (w >= a.dims.size()) return std::nullopt;
  for (size_t i = a.concrete.size(); i-- >= 3;) {
    const std::vector<int64_t> m = args::ints(a.conc(i - 2)), n = args::ints(a.conc(i - 1)), k = args::ints(a.conc(i));
    if (m.size() == 1 && n.size() == 1 && k.size() == 1 && m[0] == A[0] && k[0] == A[1] && n[0] > 0)
      return packed_gemm((double)A[0], (double)n[0], (double)A[1], a.type(0), tensor_bytes(a, w));
  }
  return std::nullopt;
}
// vLLM's awq_gemm(in_feats [M, K], kernel [K, N·bits/32] (int32), scaling_factors [K/G, N], zeros,
// split_k_iters): N from the scales.
std::optional<OpPerf> awq_gemm(const Args& a) {
  const Shape &A = a.dim(0), &W = a.dim(1), &S = a.dim(2);
  if (A.size() != 2 || W.size() != 2 || S.size() != 2 || W[0] != A[1]) return std::nullopt;
  return packed_gemm((double)A[0], (double)S[1], (double)A[1], a.type(0), tensor_bytes(a, 1));
}
// vLLM's / sgl_kernel's gptq_gemm(a [M, K], b_q_weight [K·bits/32, N] (int32), b_gptq_qzeros,
// b_gptq_scales [G, N], b_g_idx, ...): N from the weights, checked against the scales.
std::optional<OpPerf> gptq_gemm(const Args& a) {
  const Shape &A = a.dim(0), &W = a.dim(1), &S = a.dim(3);
  if (A.size() != 2 || W.size() != 2 || S.size() != 2 || S[1] != W[1]) return std::nullopt;
  return packed_gemm((double)A[0], (double)W[1], (double)A[1], a.type(0), tensor_bytes(a, 1));
}

// upsample_{nearest,linear,bilinear,bicubic,trilinear}{1,2,3}d (and _exact / _aa variants)
// (input [N, C, spatial...], output_size?, ..., scales or scale_factors?): the output's spatial
// size is output_size when recorded, else floor(input × scale) per dimension. Each output element
// blends taps_per_dim^d input elements: 2·taps - 1 FLOPs (nearest: a gather, 0). Reads the input,
// writes the output.
Model upsample(int taps_per_dim) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape& x = a.dim(0);
    if (x.size() < 3) return std::nullopt;
    const size_t d = x.size() - 2;
    Shape out(x.begin(), x.begin() + 2);
    std::vector<double> size = args::numbers(a.conc(1));
    if (size.size() == d) {
      for (double v : size) {
        const auto e = extent(v);
        if (!e) return std::nullopt;
        out.push_back(*e);
      }
    } else {
      std::vector<double> scales;
      for (size_t i = 2; i < a.concrete.size(); ++i)
        for (double v : args::numbers(a.conc(i))) scales.push_back(v);
      if (scales.size() != d) return std::nullopt;
      for (size_t i = 0; i < d; ++i) {
        const auto e = extent(std::floor((double)x[i + 2] * scales[i]));  // (a negative scale: none)
        if (!e) return std::nullopt;
        out.push_back(*e);
      }
    }
    OpPerf p;
    p.dtype = a.type(0);
    const double taps = std::pow((double)taps_per_dim, (double)d);
    p.flops = taps_per_dim == 1 ? 0 : numel(out) * (2 * taps - 1);
    if (int b = dtype_bytes(p.dtype)) p.bytes = (numel(x) + numel(out)) * b;
    return p;
  };
}

struct Family {
  const char* category;
  Model model;            // empty: category only
  bool per_step = false;  // the model reads Args::step (model_needs_step)
};

const std::map<std::string, Family, std::less<>>& families() {
  static const std::map<std::string, Family, std::less<>> table = [] {
    std::map<std::string, Family, std::less<>> t;
    auto add = [&](std::initializer_list<const char*> names, const char* cat, Model m) {
      for (const char* n : names) t[n] = Family{cat, m};
    };
    add({"aten::mm"}, "GEMM", mm);
    add({"aten::addmm"}, "GEMM", addmm);
    add({"aten::bmm"}, "GEMM", bmm);
    add({"aten::baddbmm"}, "GEMM", baddbmm);
    add({"aten::_scaled_mm"}, "GEMM", scaled_mm);
    add({"aten::linear"}, "GEMM", linear);
    add({"aten::matmul"}, "GEMM", matmul);
    add({"aten::convolution"}, "CONV_fwd", convolution);
    add({"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::_convolution", "aten::cudnn_convolution",
         "aten::miopen_convolution", "aten::cudnn_convolution_transpose", "aten::conv_transpose2d"},
        "CONV_fwd", nullptr);
    add({"aten::convolution_backward"}, "CONV_bwd", convolution_backward);
    // (The _input / _weight / _bias ops: PyTorch before 1.11, which records no Concrete Inputs.)
    add({"aten::cudnn_convolution_backward", "aten::miopen_convolution_backward",
         "aten::cudnn_convolution_backward_input", "aten::cudnn_convolution_backward_weight",
         "aten::miopen_convolution_backward_input", "aten::miopen_convolution_backward_weight",
         "aten::miopen_convolution_backward_bias"},
        "CONV_bwd", nullptr);
    // (q, k, v, ..., causal argument index)
    add({"aten::_scaled_dot_product_flash_attention"}, "SDPA_fwd", attention(0, 1, 2, 4, false, false));
    add({"aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_cudnn_attention"}, "SDPA_fwd",
        attention(0, 1, 2, 6, false, false));
    add({"aten::scaled_dot_product_attention"}, "SDPA_fwd", attention(0, 1, 2, 5, false, false));
    // flash_attn::_flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, ...), [B, N, H, d]
    add({"flash_attn::_flash_attn_forward"}, "SDPA_fwd", attention(0, 1, 2, 5, false, false, true));
    add({"aten::_flash_attention_forward", "aten::_efficient_attention_forward", "FlashAttnFunc"}, "SDPA_fwd", nullptr);
    // flash_attn::_flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale, causal,
    // ...)
    add({"flash_attn::_flash_attn_backward"}, "SDPA_bwd", attention(1, 2, 3, 11, true, true, true));
    add({"aten::_scaled_dot_product_flash_attention_backward"}, "SDPA_bwd", attention(1, 2, 3, 11, true, true));
    add({"aten::_scaled_dot_product_efficient_attention_backward"}, "SDPA_bwd", attention(1, 2, 3, 11, true, false));
    add({"aten::_scaled_dot_product_cudnn_attention_backward", "aten::_flash_attention_backward",
         "aten::_efficient_attention_backward", "FlashAttnFuncBackward"},
        "SDPA_bwd", nullptr);
    add({"aten::layer_norm", "aten::native_layer_norm"}, "NORM_fwd", layer_norm);
    add({"aten::batch_norm", "aten::native_batch_norm", "aten::_batch_norm_impl_index", "aten::cudnn_batch_norm",
         "aten::miopen_batch_norm"},
        "NORM_fwd", batch_norm);
    add({"aten::group_norm"}, "NORM_fwd", group_norm(2));
    add({"aten::native_group_norm"}, "NORM_fwd", group_norm(1));
    add({"aten::rms_norm", "aten::_fused_rms_norm"}, "NORM_fwd", rms_norm);
    add({"aten::native_layer_norm_backward", "aten::layer_norm_backward"}, "NORM_bwd", layer_norm_backward);
    add({"aten::native_batch_norm_backward", "aten::batch_norm_backward"}, "NORM_bwd", batch_norm_backward(false));
    add({"aten::cudnn_batch_norm_backward", "aten::miopen_batch_norm_backward"}, "NORM_bwd", batch_norm_backward(true));
    add({"aten::native_group_norm_backward"}, "NORM_bwd", group_norm_backward);
    add({"aten::_fused_rms_norm_backward"}, "NORM_bwd", rms_norm_backward);
    add({"aten::copy_",         "aten::clamp_min", "aten::clamp_min_", "aten::clamp_max",  "aten::clamp_max_",
         "aten::clamp",         "aten::sigmoid",   "aten::sigmoid_",   "aten::rsqrt",      "aten::silu",
         "aten::silu_",         "aten::neg",       "aten::pow",        "aten::gelu",       "aten::gelu_",
         "aten::relu",          "aten::relu_",     "aten::tanh",       "aten::tanh_",      "aten::exp",
         "aten::log",           "aten::sqrt",      "aten::abs",        "aten::reciprocal", "aten::sin",
         "aten::cos",           "aten::erf",       "aten::hardtanh",   "aten::hardtanh_",  "aten::leaky_relu",
         "aten::native_dropout"},
        "elementwise", unary);
    // Casts and copies do their work in the copy_ they call, and call none when there is nothing
    // to do (to() of a tensor already of that dtype returns it): no model of their own, so a no-op
    // to() counts no FLOPs, and flops(uid) of one that copies is its copy_'s (inclusive).
    add({"aten::to", "aten::_to_copy", "aten::clone", "aten::contiguous"}, "elementwise", nullptr);
    add({"aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_", "aten::div", "aten::div_",
         "aten::rsub", "aten::sigmoid_backward", "aten::threshold_backward", "aten::gelu_backward",
         "aten::silu_backward", "aten::tanh_backward", "aten::maximum", "aten::minimum", "aten::masked_fill",
         "aten::masked_fill_", "aten::native_dropout_backward"},
        "elementwise", binary(false));
    add({"aten::eq", "aten::ne", "aten::lt", "aten::gt", "aten::le", "aten::ge"}, "elementwise", binary(true));
    add({"aten::fill_", "aten::zero_"}, "elementwise", fill);
    add({"aten::embedding"}, "elementwise", embedding);
    add({"aten::index_select"}, "elementwise", index_select);
    add({"aten::sum", "aten::mean", "aten::max", "aten::min", "aten::amax", "aten::amin", "aten::prod", "aten::argmax",
         "aten::argmin", "aten::all", "aten::any", "aten::nansum", "aten::logsumexp"},
        "reduce", reduce(1, 2));
    add({"aten::norm", "aten::linalg_vector_norm", "aten::linalg_norm"}, "reduce", reduce(2, 3));
    add({"aten::var", "aten::std", "aten::var_mean", "aten::std_mean"}, "reduce", reduce(1, 3));
    // A scan keeps every element: one FLOP and one write per element.
    add({"aten::cumsum", "aten::cumsum_"}, "reduce", unary);
    add({"aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax"}, "reduce", softmax);
    add({"aten::where"}, "elementwise", where);
    add({"aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss_forward", "aten::nll_loss2d_forward"}, "reduce",
        nll_loss);
    add({"aten::nll_loss_backward", "aten::nll_loss2d_backward"}, "reduce", nll_loss_backward);
    add({"aten::cross_entropy_loss"}, "reduce", nullptr);  // log_softmax + nll_loss: theirs, beneath
    add({"aten::index_add_", "aten::index_add"}, "elementwise", index_add);
    add({"aten::scatter_", "aten::scatter"}, "elementwise", scatter(false));
    add({"aten::scatter_add_", "aten::scatter_add"}, "elementwise", scatter(true));
    add({"aten::index_put_", "aten::_index_put_impl_"}, "elementwise", index_put);
    add({"aten::_grouped_mm"}, "GEMM", grouped_mm(2));
    add({"aten::_scaled_grouped_mm"}, "GEMM", grouped_mm(4));
    // Serving engines' ops. "*::OP" is OP in any serving namespace (serving_op, below); a full name
    // is one engine's schema where another engine's OP of that name takes other operands.
    auto serve = [&](std::initializer_list<const char*> names, const char* cat, Model m, bool per_step = false) {
      for (const char* n : names) t[std::string("*::") + n] = Family{cat, m, per_step};
    };
    serve({"rotary_embedding", "batched_rotary_embedding"}, "elementwise", rotary_embedding);
    serve({"apply_rope_pos_ids_cos_sin_cache"}, "elementwise", apply_rope_cos_sin_cache);
    // RMS norms: (out, input, weight, eps, ...): vLLM's _C::rms_norm, sgl_kernel's, FlashInfer's and
    // AITER's rmsnorm, AITER's rms_norm_cu
    serve({"rms_norm", "rmsnorm"}, "NORM_fwd", fused_rms_norm({.x = 1, .w = 2, .out = 0}));
    add({"aiter::rms_norm_cu"}, "NORM_fwd", fused_rms_norm({.x = 1, .w = 2, .out = 0}));
    serve({"gemma_rmsnorm"}, "NORM_fwd", fused_rms_norm({.x = 1, .w = 2, .out = 0, .gemma = true}));
    // (input, weight, eps, ...), the output returned: AITER's, and vLLM's wrappers of them
    add({"aiter::rms_norm", "aiter::rmsnorm2d_fwd", "aiter::rmsnorm2d_fwd_ck", "vllm::rocm_aiter_rms_norm",
         "vllm_aiter::rms_norm"},
        "NORM_fwd", fused_rms_norm({.x = 0, .w = 1}));
    // (input, residual, weight, eps, ...): in place (vLLM, sgl_kernel, FlashInfer, AITER's _cu), or
    // into new tensors (vLLM's AITER wrapper)
    serve({"fused_add_rms_norm", "fused_add_rmsnorm"}, "NORM_fwd", fused_rms_norm({.x = 0, .w = 2, .residual = 1}));
    add({"aiter::fused_add_rms_norm_cu", "vllm::rocm_aiter_rmsnorm2d_fwd_with_add"}, "NORM_fwd",
        fused_rms_norm({.x = 0, .w = 2, .residual = 1}));
    serve({"gemma_fused_add_rmsnorm"}, "NORM_fwd", fused_rms_norm({.x = 0, .w = 2, .residual = 1, .gemma = true}));
    // AITER (out, input, residual_in, residual_out, weight, eps, ...)
    serve({"rmsnorm2d_fwd_with_add", "rmsnorm2d_fwd_with_add_ck", "add_rmsnorm"}, "NORM_fwd",
          fused_rms_norm({.x = 1, .w = 4, .out = 0, .residual = 2}));
    // ... with a quantized output: vLLM's (result, input, [residual,] weight, scale, eps, ...),
    // AITER's (out, input, [residual_in, residual_out,] scale, weight, eps, ...)
    serve({"rms_norm_static_fp8_quant"}, "NORM_fwd",
          fused_rms_norm({.x = 1, .w = 2, .out = 0, .scale = 3, .quant = Quant::fixed}));
    serve({"fused_add_rms_norm_static_fp8_quant"}, "NORM_fwd",
          fused_rms_norm({.x = 1, .w = 3, .out = 0, .residual = 2, .scale = 4, .quant = Quant::fixed}));
    serve({"rms_norm_dynamic_per_token_quant", "rms_norm_per_block_quant"}, "NORM_fwd",
          fused_rms_norm({.x = 1, .w = 2, .out = 0, .residual = 6, .scale = 3, .quant = Quant::dynamic}));
    serve({"rmsnorm_quant", "rmsnorm2d_fwd_with_dynamicquant", "rmsnorm2d_fwd_with_dynamicquant_ck"}, "NORM_fwd",
          fused_rms_norm({.x = 1, .w = 3, .out = 0, .scale = 2, .quant = Quant::dynamic}));
    serve({"add_rmsnorm_quant", "rmsnorm2d_fwd_with_add_dynamicquant", "rmsnorm2d_fwd_with_add_dynamicquant_ck"},
          "NORM_fwd", fused_rms_norm({.x = 1, .w = 5, .out = 0, .residual = 2, .scale = 4, .quant = Quant::dynamic}));
    // Gated activations (out, input, ...)
    serve({"silu_and_mul", "mul_and_silu"}, "elementwise", act_and_mul(5));
    serve({"gelu_and_mul"}, "elementwise", act_and_mul(8));
    serve({"gelu_tanh_and_mul"}, "elementwise", act_and_mul(10));
    add({"_C::silu_and_mul_quant"}, "elementwise", act_and_mul(5, Quant::fixed));  // (result, input, scale)
    // (out, input, scales, group_size, ...)
    add({"_C::silu_and_mul_per_block_quant", "aiter::silu_and_mul_quant"}, "elementwise",
        act_and_mul(5, Quant::dynamic));
    // Quantization: (result, input, scale, ...) (vLLM, AITER) or (input, output_q, output_s, ...)
    serve({"static_scaled_fp8_quant", "static_scaled_int8_quant", "static_per_tensor_quant"}, "elementwise",
          quantize(1, 0, 2, Quant::fixed));
    serve({"dynamic_scaled_fp8_quant", "dynamic_per_token_scaled_fp8_quant", "dynamic_scaled_int8_quant",
           "dynamic_per_tensor_quant", "dynamic_per_token_scaled_quant", "dynamic_per_group_scaled_quant",
           "dynamic_per_group_scaled_quant_fp4"},
          "elementwise", quantize(1, 0, 2, Quant::dynamic));
    serve({"per_token_group_fp8_quant", "per_token_group_quant_int8", "sgl_per_token_group_quant_fp8",
           "sgl_per_token_group_quant_int8", "sgl_per_token_quant_fp8"},
          "elementwise", quantize(0, 1, 2, Quant::dynamic));
    serve({"sgl_per_tensor_quant_fp8"}, "elementwise", quantize(0, 1, 2, Quant::dynamic, 3));  // (..., is_static)
    serve({"reshape_and_cache", "reshape_and_cache_flash"}, "elementwise", kv_cache_write);
    serve({"inplace_fused_experts", "outplace_fused_experts", "rocm_aiter_fused_moe"}, "GEMM", fused_moe);
    // Quantized and skinny GEMMs
    serve({"cutlass_scaled_mm"}, "GEMM", serving_gemm({.a = 1, .b = 2, .b_nk = false, .out = 0, .bias = 5}));
    serve({"cutlass_scaled_mm_azp"}, "GEMM", serving_gemm({.a = 1, .b = 2, .b_nk = false, .out = 0, .bias = 7}));
    serve({"fp8_scaled_mm", "int8_scaled_mm"}, "GEMM", serving_gemm({.a = 0, .b = 1, .b_nk = false, .bias = 5}));
    serve({"fp8_blockwise_scaled_mm"}, "GEMM", serving_gemm({.a = 0, .b = 1, .b_nk = false}));
    // AITER (XQ [M, K], WQ [N, K], x_scale, w_scale, Out, ...) and its Python entries (..., bias?,
    // dtype, ...); vLLM's wrappers (A, B [N, K], As, Bs, [bias,] output_dtype)
    serve({"gemm_a8w8_ck"}, "GEMM", serving_gemm({.a = 0, .b = 1, .b_nk = true, .out = 4, .bias = 5}));
    serve({"gemm_a8w8_asm"}, "GEMM", serving_gemm({.a = 0, .b = 1, .b_nk = true, .out = 4, .bias = 6}));
    serve({"gemm_a8w8_bpreshuffle_ck", "gemm_a8w8_bpreshuffle_cktile", "gemm_a8w8_blockscale_ck",
           "gemm_a8w8_blockscale_cktile", "gemm_a8w8_blockscale_bpreshuffle_ck",
           "gemm_a8w8_blockscale_bpreshuffle_cktile", "flatmm_a8w8_blockscale_asm"},
          "GEMM", serving_gemm({.a = 0, .b = 1, .b_nk = true, .out = 4}));
    serve({"gemm_a8w8", "gemm_a8w8_bpreshuffle", "rocm_aiter_gemm_a8w8"}, "GEMM",
          serving_gemm({.a = 0, .b = 1, .b_nk = true, .bias = 4}));
    serve({"gemm_a8w8_blockscale", "rocm_aiter_gemm_a8w8_blockscale", "rocm_aiter_triton_gemm_a8w8_blockscale"}, "GEMM",
          serving_gemm({.a = 0, .b = 1, .b_nk = true}));
    // vLLM's ROCm skinny GEMMs (in_a = the weight [N, K], in_b = the activations [M, K], bias?, ...)
    serve({"wvSplitK", "wvSplitKrc"}, "GEMM", serving_gemm({.a = 1, .b = 0, .b_nk = true, .bias = 2}));
    serve({"wvSplitKQ"}, "GEMM", serving_gemm({.a = 1, .b = 0, .b_nk = true, .out = 3, .bias = 2}));
    serve({"LLMM1"}, "GEMM", serving_gemm({.a = 1, .b = 0, .b_nk = true}));
    serve({"rocm_unquantized_gemm"}, "GEMM", linear);  // (x [..., K], weight [N, K], bias?): aten::linear's
    serve({"gptq_marlin_gemm", "marlin_gemm", "fp8_marlin_gemm"}, "GEMM", marlin_gemm);
    serve({"awq_gemm"}, "GEMM", awq_gemm);
    serve({"gptq_gemm"}, "GEMM", gptq_gemm);
    // Attention of a serving step (its lengths from the step annotation): vLLM's unified ops, the
    // FlashAttention ops (vLLM's _vllm_fa2_C / _vllm_fa3_C, sgl_kernel's FA3 fwd) and AITER's
    // varlen / batch-prefill kernels take (q, k, v, ...).
    serve({"unified_attention_with_output", "unified_attention", "fwd", "varlen_fwd", "fwd_kvcache", "mha_varlen_fwd",
           "fmha_v3_varlen_fwd", "mha_batch_prefill"},
          "SDPA_fwd", inference_attention({}), true);
    // Paged decode: vLLM's (out, query, key_cache, value_cache, num_kv_heads, ...) and v2 / ROCm's /
    // AITER's (out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache, num_kv_heads, ...);
    // AITER's ragged (out, workspace, query, key_cache, value_cache, ..., kv_cache_layout at 13)
    // and asm (Q, K, V, ...) kernels.
    serve({"paged_attention_v1"}, "SDPA_fwd",
          inference_attention({.q = 1, .k = 2, .v = 3, .hkv_conc = 4, .decode = true}), true);
    serve({"paged_attention_v2", "paged_attention", "paged_attention_rocm"}, "SDPA_fwd",
          inference_attention({.q = 4, .k = 5, .v = 6, .hkv_conc = 7, .decode = true}), true);
    // AITER's paged_attention_v1 is not vLLM's: (out, workspace, query, key_cache, value_cache, ...,
    // kv_cache_layout at 12)
    t["aiter::paged_attention_v1"] =
        Family{"SDPA_fwd", inference_attention({.q = 2, .k = 3, .v = 4, .layout_conc = 12, .decode = true}), true};
    serve({"paged_attention_ragged"}, "SDPA_fwd",
          inference_attention({.q = 2, .k = 3, .v = 4, .layout_conc = 13, .decode = true}), true);
    serve({"pa_fwd_asm"}, "SDPA_fwd", inference_attention({.decode = true}), true);
    // MLA decode on the latent cache: FlashMLA (q [B, S, Hq, L + R], kcache, head_size_v, ...),
    // CUTLASS MLA (sgl_kernel: out, q_nope, q_pe, kv_c_and_k_pe_cache, ...; vLLM sm100: out, lse,
    // q_nope, q_pe, cache, ...); vLLM's MLA layer
    serve({"fwd_kvcache_mla"}, "SDPA_fwd", inference_attention({.k = 1, .v = -1, .dv_conc = 2, .decode = true}), true);
    serve({"cutlass_mla_decode"}, "SDPA_fwd", inference_attention({.q = 1, .k = 3, .v = -1, .q_pe = 2, .decode = true}),
          true);
    serve({"sm100_cutlass_mla_decode"}, "SDPA_fwd",
          inference_attention({.q = 2, .k = 4, .v = -1, .q_pe = 3, .decode = true}), true);
    serve({"unified_mla_attention_with_output", "unified_mla_attention"}, "SDPA_fwd", unified_mla_attention, true);
    for (const char* d : {"1d", "2d", "3d"}) {
      const std::string n(d);
      add({("aten::upsample_nearest" + n).c_str(), ("aten::_upsample_nearest_exact" + n).c_str()}, "elementwise",
          upsample(1));
      add({("aten::upsample_bicubic" + n).c_str(), ("aten::_upsample_bicubic" + n + "_aa").c_str()}, "elementwise",
          upsample(4));
    }
    add({"aten::upsample_linear1d", "aten::upsample_bilinear2d", "aten::_upsample_bilinear2d_aa",
         "aten::upsample_trilinear3d"},
        "elementwise", upsample(2));
    return t;
  }();
  return table;
}

// Only three members of an op's args matter: they are found by scanning (json_scan), and only
// their values are parsed; the rest (often most of the text) is skipped, not built. A key written
// with escapes, or text that is not one object, takes the whole-document parse. As with a whole
// parse, a member given twice counts as its last.
struct Members {
  std::string_view dims, types, concrete;
  bool scanned = false;  // false: the text needs the whole-document parse
};
Members scan_members(std::string_view text) {
  Members m;
  bool escaped = false;
  const bool whole = json_scan::for_each_member(text, [&](std::string_view k, std::string_view v) {
    if (k.find('\\') != std::string_view::npos) escaped = true;
    if (k == "Input Dims") m.dims = v;
    if (k == "Input type") m.types = v;
    if (k == "Concrete Inputs") m.concrete = v;
  });
  m.scanned = whole && !escaped;
  return m;
}
Args parse_args(std::string_view text, const Members& m) {
  Args a;
  json j;
  auto member = [&](const char* key, std::string_view v) -> json {
    if (!m.scanned) {
      if (!j.is_object()) return json();
      auto d = j.find(key);
      return d == j.end() ? json() : *d;
    }
    return v.empty() ? json() : args::parse_bounded(v);
  };
  if (!m.scanned) {
    j = args::parse_bounded(text);
    if (!j.is_object()) return a;
  }
  args::InputDims d = args::input_dims(member("Input Dims", m.dims));
  a.dims = std::move(d.shape), a.lists = std::move(d.lists), a.valid = d.valid;
  auto strings = [&](const json& d, std::vector<std::string>& out) {
    if (d.is_array())
      for (const auto& e : d) out.push_back(e.is_string() ? e.get<std::string>() : e.dump());
  };
  strings(member("Input type", m.types), a.types);
  strings(member("Concrete Inputs", m.concrete), a.concrete);
  return a;
}

}  // namespace

namespace {

// bool < integral < floating < complex, as c10's type promotion orders categories.
enum class Category { none, boolean, integral, floating, complex };
Category category(std::string_view t) {
  if (t == "bool") return Category::boolean;
  if (t.find("complex") != std::string_view::npos) return Category::complex;
  if (t == "double" || t == "float" || t == "c10::Half" || t == "c10::BFloat16" ||
      t.find("Float8") != std::string_view::npos)
    return Category::floating;
  return dtype_bytes(t) ? Category::integral : Category::none;
}

// promote_types for the dtypes traces hold: the higher category wins; within one, the wider type
// (half with bfloat16: float, as c10); an integral type with a float8 one: the float8.
std::string promote(const std::string& x, const std::string& y) {
  if (x.empty() || x == y) return y.empty() ? x : y;
  if (y.empty()) return x;
  Category cx = category(x), cy = category(y);
  if (cx != cy) return cx > cy ? x : y;
  if (cx == Category::floating && dtype_bytes(x) == 2 && dtype_bytes(y) == 2) return "float";
  return dtype_bytes(x) >= dtype_bytes(y) ? x : y;
}

// c10's combine_categories(higher, lower): the lower-priority group only raises the category.
std::string combine(const std::string& higher, const std::string& lower) {
  if (higher.empty()) return lower;
  if (lower.empty()) return higher;
  Category h = category(higher), l = category(lower);
  if (h == Category::complex) return higher;
  if (l == Category::complex) return h == Category::floating ? std::string("c10::complex<float>") : lower;
  if (h == Category::floating) return higher;
  if (h == Category::boolean || l == Category::floating) return promote(higher, lower);
  return higher;
}

}  // namespace

std::string result_dtype(const std::vector<Operand>& operands) {
  std::string dim, zero, wrapped;
  for (const Operand& o : operands) {
    if (o.type == "Scalar") {
      // A Python number: its category from its value (Concrete Inputs); floats are the default
      // dtype (float), integers long.
      const std::string& v = o.value;
      if (v.empty()) continue;
      std::string t = v == "True" || v == "False"                                                        ? "bool"
                      : v.find_first_of(".eEn") != std::string::npos && v.find("j") == std::string::npos ? "float"
                      : v.find("j") != std::string::npos ? "c10::complex<float>"
                                                         : "long int";
      wrapped = promote(wrapped, t);
    } else if (category(o.type) != Category::none) {
      (o.has_dims ? dim : zero) = promote(o.has_dims ? dim : zero, o.type);
    }
  }
  return combine(dim, combine(zero, wrapped));
}

bool memcpy_over_link(std::string_view name) {
  const std::string d = copy_direction(name);
  return d == "HtoD" || d == "DtoH" || d == "HtoH" || d == "HtoA" || d == "AtoH" || d == "PtoP";
}

int dtype_bytes(std::string_view t) {
  static const std::map<std::string, int, std::less<>> bpe = {{"double", 8},
                                                              {"float", 4},
                                                              {"c10::Half", 2},
                                                              {"c10::BFloat16", 2},
                                                              {"c10::Float8_e4m3fn", 1},
                                                              {"c10::Float8_e5m2", 1},
                                                              {"c10::Float8_e4m3fnuz", 1},
                                                              {"c10::Float8_e5m2fnuz", 1},
                                                              {"long int", 8},
                                                              {"long", 8},
                                                              {"int", 4},
                                                              {"short int", 2},
                                                              {"short", 2},
                                                              {"signed char", 1},
                                                              {"unsigned char", 1},
                                                              {"bool", 1},
                                                              {"c10::complex<float>", 8},
                                                              {"c10::complex<double>", 16},
                                                              {"c10::complex<c10::Half>", 4}};
  if (auto it = bpe.find(t); it != bpe.end()) return it->second;
  // torch's names (float32, bfloat16, int64, ...) and the collectives' dtype arg (Float, BFloat16,
  // Half, Long, Byte, Char, ...), in any case
  static const std::map<std::string, int, std::less<>> other = {
      {"float", 4}, {"float32", 4}, {"int", 4},    {"int32", 4},         {"bfloat16", 2},
      {"half", 2},  {"float16", 2}, {"double", 8}, {"float64", 8},       {"long", 8},
      {"int64", 8}, {"byte", 1},    {"uint8", 1},  {"char", 1},          {"int8", 1},
      {"bool", 1},  {"short", 2},   {"int16", 2},  {"float8_e4m3fn", 1}, {"float8_e5m2", 1}};
  if (auto it = other.find(lowercase(t)); it != other.end()) return it->second;
  return 0;
}

bool tf32_kernel(std::string_view name) {
  const std::string lower = lowercase(name);
  return lower.find("tf32") != std::string::npos || lower.find("tensorop_s") != std::string::npos;
}

std::string spec_dtype(std::string_view t) {
  if (t == "tf32") return "tf32";
  if (t == "double") return "fp64";
  if (t == "float") return "fp32";
  if (t == "c10::Half") return "fp16";
  if (t == "c10::BFloat16") return "bf16";
  if (t.find("Float8") != std::string_view::npos) return "fp8";
  if (t == "signed char" || t == "unsigned char") return "int8";
  return {};
}

namespace {
// The namespaces serving engines register their custom ops in: vLLM (vllm::, its C++ extensions
// _C, _C_cache_ops, _moe_C, _rocm_C, _flashmla_C, _vllm_fa2_C, _vllm_fa3_C, ... and its IR's
// vllm_aiter), SGLang (sglang::, sgl_kernel::), AITER, FlashInfer. Engines port one another's
// kernels under the same op name and schema (sgl_kernel's silu_and_mul and rotary_embedding are
// vLLM's _C ops; FlashInfer's rmsnorm is sgl_kernel's; sgl_kernel's fwd is FlashAttention 3 as
// vLLM's _vllm_fa3_C::fwd), so one family entry "*::OP" serves OP in any of them; an entry with
// the full name (one engine whose OP takes other operands, as aiter::rms_norm(input, weight, ...)
// against vLLM's _C::rms_norm(out, input, weight, ...)) wins over it. The one rule for namespace
// aliases: family() below.
bool serving_namespace(std::string_view ns) {
  static constexpr std::string_view kNames[] = {"vllm",       "_C",          "_C_cache_ops", "_moe_C",
                                                "_rocm_C",    "_flashmla_C", "vllm_aiter",   "sglang",
                                                "sgl_kernel", "aiter",       "flashinfer"};
  for (std::string_view n : kNames)
    if (ns == n) return true;
  return ns.substr(0, 8) == "_vllm_fa";  // _vllm_fa2_C, _vllm_fa3_C, ...
}

// The family of an op name: the table's entry, for an op in a serving namespace the entry of
// "*::OP", or for aten::_foreach_OP[_] the foreach model.
const Family* family(std::string_view name) {
  if (auto it = families().find(name); it != families().end()) return &it->second;
  if (const size_t colons = name.find("::"); colons != std::string_view::npos && colons > 0) {
    if (serving_namespace(name.substr(0, colons))) {
      std::array<char, 128> key;  // "*::OP" (no op name is longer)
      const std::string_view op = name.substr(colons);
      if (op.size() < key.size()) {
        key[0] = '*';
        std::copy(op.begin(), op.end(), key.begin() + 1);
        if (auto it = families().find(std::string_view(key.data(), op.size() + 1)); it != families().end())
          return &it->second;
      }
    }
  }
  static const std::string_view kForeach = "aten::_foreach_";
  if (name.substr(0, kForeach.size()) != kForeach) return nullptr;
  static const Family three{"elementwise", foreach_op(3)}, one{"elementwise", foreach_op(1)};
  const std::string_view op = name.substr(kForeach.size());
  for (const char* o : {"addcmul", "addcdiv", "lerp"})
    if (op.substr(0, std::strlen(o)) == o) return &three;
  return &one;
}
}  // namespace

bool has_perf_model(std::string_view name) {
  const Family* f = family(name);
  return f && f->model;
}

const char* op_category(std::string_view name) {
  if (const Family* f = family(name)) return f->category;
  // The rest reads the whole (lower-cased) name, which for a kernel can be 700 characters.
  thread_local NameMemo<const char*> seen;
  return seen.get(name, [](std::string_view n) {
    const std::string lower = lowercase(n);
    return communication_op(n)                                              ? "comm"
           : lower.rfind("memcpy", 0) == 0 || lower.rfind("memset", 0) == 0 ? "memcpy"
                                                                            : "other";
  });
}

bool model_needs_step(std::string_view name) {
  const Family* f = family(name);
  return f && f->per_step;
}

namespace {
// A family's model on an op's args: none when a shape is malformed (args::InputDims::valid); the
// step's lengths only for a model that reads them.
std::optional<OpPerf> run(const Family& f, std::string_view args_json, const Members& m, const StepLengths* step) {
  Args a = parse_args(args_json, m);
  a.step = f.per_step ? step : nullptr;
  return a.valid ? f.model(a) : std::nullopt;
}
}  // namespace

std::optional<OpPerf> model_op(std::string_view name, std::string_view args_json, const StepLengths* step) {
  const Family* f = family(name);
  if (!f || !f->model || args_json.empty()) return std::nullopt;
  return run(*f, args_json, scan_members(args_json), step);
}

const char* model_gap(std::string_view name, std::string_view args_json) {
  const Family* f = family(name);
  if (!f || f->per_step) return nullptr;  // (a serving step's attention: its lengths, docs/inference.md)
  const bool conv = std::string_view(f->category).substr(0, 4) == "CONV";
  if ((!f->model && !conv) || model_op(name, args_json)) return nullptr;
  const json j = args::parse_bounded(args_json);
  auto it = j.is_object() ? j.find("Input Dims") : j.end();
  if (!j.is_object() || it == j.end() || !it->is_array()) return "Input Dims missing";
  if (!conv) return nullptr;
  // Stride, padding and dilation (conv_params): PyTorch records them from 1.13 on.
  it = j.find("Concrete Inputs");
  bool any = false;
  if (it != j.end() && it->is_array())
    for (const json& v : *it) any = any || (v.is_string() && !v.get_ref<const std::string&>().empty());
  return any ? nullptr : "Concrete Inputs missing";
}

namespace {
// An op's model through a memo: keyed by the family and the three members' text, each with its
// length (no separator can be confused with text); at most `max` entries kept.
std::optional<OpPerf> memoized(const Family& f, const Members& m,
                               std::unordered_map<std::string, std::optional<OpPerf>>& seen, std::string& key,
                               size_t max) {
  key.clear();
  const Family* id = &f;
  key.append(reinterpret_cast<const char*>(&id), sizeof id);
  for (std::string_view v : {m.dims, m.types, m.concrete}) {
    const size_t len = v.size();
    key.append(reinterpret_cast<const char*>(&len), sizeof len).append(v);
  }
  if (auto it = seen.find(key); it != seen.end()) return it->second;
  std::optional<OpPerf> result = run(f, {}, m, nullptr);  // (scanned: the members are all it reads)
  if (seen.size() < max) seen.emplace(key, result);
  return result;
}
}  // namespace

std::optional<OpPerf> OpModelMemo::model(std::string_view name, std::string_view args_json, const StepLengths* step) {
  const Family* f = family(name);
  if (!f || !f->model || args_json.empty()) return std::nullopt;
  const Members m = scan_members(args_json);
  if (!m.scanned || f->per_step) return run(*f, args_json, m, step);  // (per step: a few per layer and step)
  return memoized(*f, m, seen_, key_, kMaxEntries);
}

std::optional<OpPerf> OpModelMemo::model_of_members(std::string_view name, std::string_view dims,
                                                    std::string_view types, std::string_view concrete) {
  const Family* f = family(name);
  if (!f || !f->model) return std::nullopt;
  return memoized(*f, Members{dims, types, concrete, true}, seen_, key_, kMaxEntries);
}

}  // namespace tlsql
