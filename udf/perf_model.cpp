#include "udf/perf_model.h"

#include <algorithm>
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
#include "src/json_scan.h"
#include "udf/gpu_class.h"
#include "udf/name_memo.h"

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
// Serving engines' fused RMS norms (vLLM's _C kernels, AITER's): rms_norm's count over rows of the
// weight's H elements (the input's last dimension), with a weight; `add` first adds the residual
// (1 per element) and keeps the sum as the next residual. The input is operand `x`, the weight
// operand `w` (each op orders them its own way). Reads the input (and the residual) and the
// weight, writes the output (and the new residual).
Model fused_rms_norm(size_t x, size_t w, bool add) {
  return [=](const Args& a) -> std::optional<OpPerf> {
    const Shape &in = a.dim(x), &wt = a.dim(w);
    if (in.empty() || wt.size() != 1 || wt[0] != in.back() || wt[0] <= 0) return std::nullopt;
    OpPerf p;
    p.dtype = a.type(x);
    const double N = numel(in), H = (double)wt[0];
    p.flops = rms_flops(N, H, true) + (add ? N : 0);
    const int b = dtype_bytes(p.dtype), bw = dtype_bytes(a.type(w));
    if (b && bw) p.bytes = (add ? 4 : 2) * N * b + H * bw;
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

// vllm::unified_attention_with_output / vllm::unified_attention, and the FlashAttention ops below
// them (_vllm_fa3_C::fwd, _vllm_fa2_C::varlen_fwd) (query [T, Hq, Dqk], key or key cache [.., Hkv,
// Dqk], value [.., Hkv, Dv], ...): one layer's attention over a serving step's requests
// (TraceLens's InferenceAttention). The shapes give the heads and head sizes (T is the graph's
// padded batch under a CUDA graph, not the requests); the step annotation gives the requests'
// lengths (StepLengths, src/kind.h). Each query attends to its request's sk keys:
//   FLOPs = Hq·2·(Dqk + Dv)·(c_sqsk + g_sqsk) - Hq·(Dqk + Dv)·c_sqsq
// (QKᵀ and PV; a prefill chunk attends to itself causally, which skips half of its sq² pairs),
//   bytes = (c_sq + g_sq)·(Hq·Dqk + Hq·Dv + Hkv·Dqk + Hkv·Dv)·bpe(query)   Q read, O written, new K, V
//         + (c_sk - c_sq + g_sk - g_sq)·Hkv·(Dqk + Dv)·bpe(key)           cached K, V read.
// No lengths (no detailed step annotation around the op), or a step without tokens: no model. A
// sliding-window layer attends to fewer keys than its request's sk, which the op does not record:
// its numbers are those of full attention (as TraceLens's).
std::optional<OpPerf> inference_attention(const Args& a) {
  const Shape &q = a.dim(0), &k = a.dim(1), &v = a.dim(2);
  const StepLengths* s = a.step;
  if (!s || q.size() != 3 || k.size() < 3 || s->c_sq + s->g_sq <= 0) return std::nullopt;
  const double Hq = (double)q[1], Dqk = (double)q[2], Hkv = (double)k[k.size() - 2];
  const double Dv = (double)(v.size() >= 3 ? v.back() : k.back());
  OpPerf p;
  p.matrix = true;
  p.dtype = a.type(0);
  const double sqsk = (double)s->c_sqsk + (double)s->g_sqsk;
  p.flops = Hq * 2 * (Dqk + Dv) * sqsk - Hq * (Dqk + Dv) * (double)s->c_sqsq;
  const int b = dtype_bytes(p.dtype), bk = dtype_bytes(a.type(1));
  const double sq = (double)s->c_sq + (double)s->g_sq;
  const double cached = (double)s->c_sk - (double)s->c_sq + (double)s->g_sk - (double)s->g_sq;
  if (b && bk) p.bytes = sq * (Hq * Dqk + Hq * Dv + Hkv * Dqk + Hkv * Dv) * b + cached * Hkv * (Dqk + Dv) * bk;
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
    add({"aten::cudnn_convolution_backward", "aten::miopen_convolution_backward"}, "CONV_bwd", nullptr);
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
    add({"_C::rotary_embedding", "vllm::rotary_embedding"}, "elementwise", rotary_embedding);
    add({"_C::rms_norm"}, "NORM_fwd", fused_rms_norm(1, 2, false));  // (out, input, weight, eps)
    add({"aiter::rms_norm", "aiter::rmsnorm2d_fwd"}, "NORM_fwd", fused_rms_norm(0, 1, false));
    add({"_C::fused_add_rms_norm"}, "NORM_fwd", fused_rms_norm(0, 2, true));  // (input, residual, weight, eps)
    // (out, input, residual_in, residual_out, weight, eps, ...)
    add({"aiter::rmsnorm2d_fwd_with_add", "aiter::rmsnorm2d_fwd_with_add_ck"}, "NORM_fwd", fused_rms_norm(1, 4, true));
    add({"_C_cache_ops::reshape_and_cache", "_C_cache_ops::reshape_and_cache_flash"}, "elementwise", kv_cache_write);
    add({"vllm::inplace_fused_experts", "vllm::outplace_fused_experts", "vllm::rocm_aiter_fused_moe",
         "sglang::inplace_fused_experts", "sglang::outplace_fused_experts"},
        "GEMM", fused_moe);
    // (with vLLM's FlashAttention ops, whose query / key cache / value cache lead their operands too)
    for (const char* n : {"vllm::unified_attention_with_output", "vllm::unified_attention", "_vllm_fa3_C::fwd",
                          "_vllm_fa2_C::varlen_fwd"})
      t[n] = Family{"SDPA_fwd", inference_attention, true};
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
    return v.empty() ? json() : json::parse(v.begin(), v.end(), nullptr, false);
  };
  if (!m.scanned) {
    j = json::parse(text.begin(), text.end(), nullptr, false);
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
  for (const char* k : {"HtoD", "DtoH", "HtoH", "HtoA", "AtoH", "PtoP"})
    if (name.find(k) != std::string_view::npos) return true;
  return false;
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
// The family of an op name: the table's entry, or for aten::_foreach_OP[_] the foreach model.
const Family* family(std::string_view name) {
  if (auto it = families().find(name); it != families().end()) return &it->second;
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

std::optional<OpPerf> OpModelMemo::model(std::string_view name, std::string_view args_json, const StepLengths* step) {
  const Family* f = family(name);
  if (!f || !f->model || args_json.empty()) return std::nullopt;
  const Members m = scan_members(args_json);
  if (!m.scanned || f->per_step) return run(*f, args_json, m, step);  // (per step: a few per layer and step)
  // The key: the family and the three members' text, each with its length (no separator can be
  // confused with text).
  key_.clear();
  key_.append(reinterpret_cast<const char*>(&f), sizeof f);
  for (std::string_view v : {m.dims, m.types, m.concrete}) {
    const size_t len = v.size();
    key_.append(reinterpret_cast<const char*>(&len), sizeof len).append(v);
  }
  if (auto it = seen_.find(key_); it != seen_.end()) return it->second;
  std::optional<OpPerf> result = run(*f, args_json, m, nullptr);
  if (seen_.size() < kMaxEntries) seen_.emplace(key_, result);
  return result;
}

}  // namespace tlsql
