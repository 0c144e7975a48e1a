// Each perf formula on a hand-made op, the arithmetic written next to the check.
#include "udf/perf/perf_model.h"

#include <doctest/doctest.h>

#include <string>

using tlsql::model_op;

namespace {
double flops(const char* name, const char* args) { return *model_op(name, args)->flops; }
double bytes(const char* name, const char* args) { return *model_op(name, args)->bytes; }
}  // namespace

TEST_CASE("GEMM family") {
  const char* mm = R"({"Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]})";
  CHECK(flops("aten::mm", mm) == 2.0 * 64 * 32 * 128);                    // 524288
  CHECK(bytes("aten::mm", mm) == (64 * 128 + 128 * 32 + 64 * 32) * 4.0);  // 57344
  CHECK(model_op("aten::mm", mm)->matrix);
  // addmm: + M·N for the beta·C term, + N bias elements read
  const char* addmm = R"({"Input Dims": [[32], [64, 128], [128, 32], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]})";
  CHECK(flops("aten::addmm", addmm) == 2.0 * 64 * 32 * 128 + 64 * 32);
  CHECK(bytes("aten::addmm", addmm) == (64 * 128 + 128 * 32 + 64 * 32 + 32) * 2.0);
  // bmm: batch 8
  const char* bmm = R"({"Input Dims": [[8, 16, 4], [8, 4, 2]], "Input type": ["c10::Half", "c10::Half"]})";
  CHECK(flops("aten::bmm", bmm) == 8 * 2.0 * 16 * 2 * 4);
  CHECK(bytes("aten::bmm", bmm) == 8 * (16 * 4 + 4 * 2 + 16 * 2) * 2.0);
  // linear with bias: input [2, 3, 8] -> M = 6, weight [5, 8]
  const char* lin = R"({"Input Dims": [[2, 3, 8], [5, 8], [5]], "Input type": ["float", "float", "float"]})";
  CHECK(flops("aten::linear", lin) == 2.0 * 6 * 5 * 8 + 6 * 5);
}

TEST_CASE("a convolution without its stride, padding and dilation has no model") {
  // v100_resnet50_2021_legacy records no Concrete Inputs: a stride-2 1x1 conv read as stride 1
  // had 4x its FLOPs (242% of the V100's fp32 peak)
  const char* conv = R"({"Input Dims": [[32, 512, 28, 28], [1024, 512, 1, 1], [], [], [], [], [], [], []],
      "Input type": ["float", "float", "", "", "", "", "", "", ""]})";
  CHECK(!model_op("aten::convolution", conv));
}

TEST_CASE("model_gap says why an op has no model, where the trace says") {
  using tlsql::model_gap;
  auto is = [](const char* got, const char* want) { return got && std::string(got) == want; };
  const char* no_concrete = R"({"Input Dims": [[32, 512, 28, 28], [1024, 512, 1, 1], [], [], [], [], [], [], []],
      "Input type": ["float", "float", "", "", "", "", "", "", ""]})";
  CHECK(is(model_gap("aten::convolution", no_concrete), "Concrete Inputs missing"));
  // the ops below it (no model of their own) and the 2021 backward ops say the same
  CHECK(is(model_gap("aten::cudnn_convolution", no_concrete), "Concrete Inputs missing"));
  CHECK(is(model_gap("aten::cudnn_convolution_backward_weight", no_concrete), "Concrete Inputs missing"));
  // recorded, but every entry empty (the tensors' slots): still missing
  const char* empty_concrete = R"({"Input Dims": [[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []],
      "Concrete Inputs": ["", "", "", "", "", "", "", "", ""]})";
  CHECK(is(model_gap("aten::convolution", empty_concrete), "Concrete Inputs missing"));
  const char* with_concrete = R"({"Input Dims": [[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []],
      "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
      "Concrete Inputs": ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]})";
  CHECK(model_op("aten::convolution", with_concrete));
  CHECK(!model_gap("aten::convolution", with_concrete));                       // it has a model
  CHECK(!model_gap("aten::cudnn_convolution", with_concrete));                 // no model, but not for want of them
  CHECK(is(model_gap("aten::mm", R"({"Device": 0})"), "Input Dims missing"));  // record_shapes off
  // shapes recorded: whatever the model makes of them, nothing is missing from the trace
  CHECK(!model_gap("aten::mm", R"({"Input Dims": [[2, 3], [4, 5]], "Input type": ["float", "float"]})"));
  CHECK(!model_gap("aten::cat", R"({"Device": 0})"));  // no family model: nothing to say
}

TEST_CASE("TF32 kernels by name") {
  using tlsql::tf32_kernel;
  CHECK(tf32_kernel(
      "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off"));
  CHECK(tf32_kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align4>(Params)"));
  CHECK(tf32_kernel("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw"));
  CHECK(!tf32_kernel("void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>(int)"));
  CHECK(!tf32_kernel("ampere_sgemm_128x64_tn"));
  CHECK(!tf32_kernel("cutlass_80_tensorop_h16816gemm_256x128_32x3_nn_align8"));  // fp16 tensor op
  CHECK(tlsql::spec_dtype("tf32") == "tf32");
}

TEST_CASE("convolution forward, with bias and groups") {
  // input [2, 4, 8, 8], weight [6, 2, 3, 3] (groups 2), bias [6], stride 1, padding 1
  // out = [2, 6, 8, 8] = 768 elements; per element 2 · (2·3·3) = 36 FLOPs -> 27648, + 768 bias
  const char* conv = R"({"Input Dims": [[2, 4, 8, 8], [6, 2, 3, 3], [6], [], [], [], [], [], []],
      "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
      "Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "2"]})";
  CHECK(flops("aten::convolution", conv) == 27648 + 768);
  // bytes: input 512 + weight 108 + bias 6 + output 768 elements, × 4
  CHECK(bytes("aten::convolution", conv) == (512 + 108 + 6 + 768) * 4.0);
  // stride 2, no padding: out spatial (8 - 3) / 2 + 1 = 3 -> [2, 6, 3, 3] = 108 elements
  const char* strided = R"({"Input Dims": [[2, 4, 8, 8], [6, 2, 3, 3], [], [], [], [], [], [], []],
      "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
      "Concrete Inputs": ["", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "2"]})";
  CHECK(flops("aten::convolution", strided) == 108 * 36);
}

TEST_CASE("convolution backward counts what output_mask asks for") {
  // grad_out [1, 2, 4, 4], input [1, 3, 4, 4], weight [2, 3, 1, 1]: a 1x1 conv, stride 1.
  const char* base = R"({"Input Dims": [[1, 2, 4, 4], [1, 3, 4, 4], [2, 3, 1, 1], [], [], [], [], [], [], [], []],
      "Input type": ["float", "float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", ""],
      "Concrete Inputs": ["", "", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "MASK"]})";
  auto with_mask = [&](const char* mask) {
    std::string s = base;
    s.replace(s.find("MASK"), 4, mask);
    return *model_op("aten::convolution_backward", s)->flops;
  };
  // grad_input: transposed conv, FLOPs = prod(grad_out) · 2 · prod(w[1:]) = 32 · 2 · 3 = 192
  CHECK(with_mask("[True, False, False]") == 192);
  // grad_weight: conv of input^T [3,1,4,4] by grad_out^T [2,1,4,4] -> out [3,2,1,1] = 6 elements · 2·16 = 192
  CHECK(with_mask("[False, True, False]") == 192);
  CHECK(with_mask("[True, True, False]") == 384);
}

TEST_CASE("attention: causal halves, GQA and real dtypes") {
  // q [2, 8, 128, 64], k/v [2, 2, 128, 64] (GQA 8 -> 2 heads), bf16
  const char* sdpa = R"({"Input Dims": [[2, 8, 128, 64], [2, 2, 128, 64], [2, 2, 128, 64], [], [], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "", "", "0.", "CAUSAL", "False", ""]})";
  auto run = [&](const char* causal, bool want_bytes) {
    std::string s = sdpa;
    s.replace(s.find("CAUSAL"), 6, causal);
    auto p = model_op("aten::_scaled_dot_product_flash_attention", s);
    return want_bytes ? *p->bytes : *p->flops;
  };
  double full = 2.0 * 8 * (2 * 128 * 128 * 64 + 2 * 128 * 128 * 64);  // B·H_Q·(2·Nq·Nkv·d + 2·Nq·Nkv·d)
  CHECK(run("False", false) == full);
  CHECK(run("True", false) == full / 2);
  // bytes: q + out (2·8·128·64 each) + k + v (2·2·128·64 each) elements, × 2 bytes
  CHECK(run("False", true) == (2.0 * 131072 + 2 * 32768) * 2);
}

TEST_CASE("flash-attn's [B, N, H, d] layout") {
  // q [1, 256, 16, 128], k/v [1, 256, 4, 128], causal: B·H·(2·N²·d + 2·N²·d) / 2
  const char* fa = R"({"Input Dims": [[1, 256, 16, 128], [1, 256, 4, 128], [1, 256, 4, 128], [], [], [], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "", "", "0.0", "0.088", "True", "-1", "-1"]})";
  CHECK(flops("flash_attn::_flash_attn_forward", fa) == 16.0 * (4 * 256 * 256 * 128) / 2);
  // bytes: q + out (256·16·128 each) + k + v (256·4·128 each) elements, × 2
  CHECK(bytes("flash_attn::_flash_attn_forward", fa) == (2.0 * 524288 + 2 * 131072) * 2);
}

TEST_CASE("norms") {
  // layer_norm over [4, 10] with normalized_shape [10]: 6·C + 5·N = 60 + 200 FLOPs;
  // bytes: 2·N·4 + 6 tensors (mean, var, weight, bias, 2 stat writes) · C · 4
  const char* ln = R"({"Input Dims": [[4, 10], [], [10], [10], [], []],
      "Input type": ["float", "ScalarList", "float", "float", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "[10]", "", "", "1e-05", "True"]})";
  CHECK(flops("aten::native_layer_norm", ln) == 60 + 200);
  CHECK(bytes("aten::native_layer_norm", ln) == 2 * 40 * 4 + 6 * 10 * 4);
  // batch_norm in eval mode ([2, 3, 4, 4], C = 3, training False): 6·C + 2·N = 18 + 192
  const char* bn = R"({"Input Dims": [[2, 3, 4, 4], [3], [3], [3], [3], [], [], [], []],
      "Input type": ["float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "", "", "", "", "False", "0.1", "1e-05", "True"]})";
  CHECK(flops("aten::batch_norm", bn) == 18 + 192);
  // group_norm's weight and bias are arguments 2 and 3, native_group_norm's 1 and 2; both over
  // [2, 4, 3] (N = 24, C = 4) with weight and bias: 6·C + 5·N = 24 + 120; bytes 2·N·4 + 6·C·4
  const char* gn = R"({"Input Dims": [[2, 4, 3], [], [4], [4], [], []],
      "Input type": ["float", "Scalar", "float", "float", "Scalar", "Scalar"], "Concrete Inputs": ["", "2", "", "", "1e-05", "True"]})";
  const char* ngn = R"({"Input Dims": [[2, 4, 3], [4], [4], [], [], [], [], []],
      "Input type": ["float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"]})";
  CHECK(flops("aten::group_norm", gn) == 24 + 120);
  CHECK(bytes("aten::group_norm", gn) == 2 * 24 * 4 + 6 * 4 * 4);
  CHECK(bytes("aten::native_group_norm", ngn) == 2 * 24 * 4 + 6 * 4 * 4);
  // native_group_norm_backward(grad_out, input, mean [2, 2], rstd, weight [4], N, C, HxW, group,
  // mask all): C·(4·N/C + 5·N/C) = 9·N = 216; bytes grad_out + input + grad_input (3·N) + saved
  // stats C + weight C + grad_weight, grad_bias 2·C, × 4
  const char* gnb = R"({"Input Dims": [[2, 4, 3], [2, 4, 3], [2, 2], [2, 2], [4], [], [], [], [], []],
      "Input type": ["float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar", "ScalarList"],
      "Concrete Inputs": ["", "", "", "", "", "2", "4", "3", "2", "[True, True, True]"]})";
  CHECK(flops("aten::native_group_norm_backward", gnb) == 9 * 24);
  CHECK(bytes("aten::native_group_norm_backward", gnb) == (3 * 24 + 4 + 4 + 2 * 4) * 4.0);
  // RMS norm over [2, 3, 4, 4] with normalized_shape [4, 4] (C = 16, 6 rows, N = 96) and a
  // weight: 4·N + 2 per row = 384 + 12; bytes x read + y written (2·N) + weight C, × 2.
  // Without a weight: no multiply by it (3·N + 12) and no weight read.
  const char* rms = R"({"Input Dims": [[2, 3, 4, 4], [], [4, 4], []],
      "Input type": ["c10::BFloat16", "ScalarList", "c10::BFloat16", ""], "Concrete Inputs": ["", "[4, 4]", "", ""]})";
  const char* rms_nw = R"({"Input Dims": [[2, 3, 4, 4], [], [], []],
      "Input type": ["c10::BFloat16", "ScalarList", "", ""], "Concrete Inputs": ["", "[4, 4]", "", ""]})";
  CHECK(flops("aten::_fused_rms_norm", rms) == 384 + 12);
  CHECK(bytes("aten::_fused_rms_norm", rms) == (2 * 96 + 16) * 2.0);
  CHECK(flops("aten::rms_norm", rms_nw) == 288 + 12);
  CHECK(bytes("aten::rms_norm", rms_nw) == 2 * 96 * 2.0);
  // _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd [2, 3, 1, 1], weight, mask):
  // 8·N for grad_input + 2·N for grad_weight; bytes 3·N + weight read and its gradient (2·C)
  const char* rmsb = R"({"Input Dims": [[2, 3, 4, 4], [2, 3, 4, 4], [], [2, 3, 1, 1], [4, 4], []],
      "Input type": ["float", "float", "ScalarList", "float", "float", "ScalarList"],
      "Concrete Inputs": ["", "", "[4, 4]", "", "", "[True, True]"]})";
  CHECK(flops("aten::_fused_rms_norm_backward", rmsb) == 10 * 96);
  CHECK(bytes("aten::_fused_rms_norm_backward", rmsb) == (3 * 96 + 2 * 16) * 4.0);
}

TEST_CASE("elementwise, broadcast, scalars, casts, embedding") {
  // add [4, 1, 5] + [3, 1] -> broadcast [4, 3, 5] = 60; bytes 20·2 + 3·2 + 60·2
  const char* add = R"({"Input Dims": [[4, 1, 5], [3, 1], []], "Input type": ["c10::Half", "c10::Half", "Scalar"]})";
  CHECK(flops("aten::add", add) == 60);
  CHECK(bytes("aten::add", add) == (20 + 3 + 60) * 2.0);
  // mul by a scalar: the scalar moves no bytes
  const char* mul = R"({"Input Dims": [[10], []], "Input type": ["float", "Scalar"]})";
  CHECK(bytes("aten::mul", mul) == (10 + 10) * 4.0);
  // a cast float -> bf16 is done by copy_(self bf16, src float): read 4 bytes, write 2 per element.
  // to / _to_copy have no model of their own: their copy_ carries it (or nothing, for a no-op to).
  const char* copy = R"({"Input Dims": [[100], [100], []], "Input type": ["c10::BFloat16", "float", "Scalar"]})";
  CHECK(bytes("aten::copy_", copy) == 100 * (2 + 4));
  const char* cast = R"({"Input Dims": [[100], [], [], [], [], [], []], "Input type": ["float", "", "", "", "", "", ""],
      "Concrete Inputs": ["", "15", "", "", "", "False", ""]})";
  CHECK(!model_op("aten::_to_copy", cast));
  CHECK(!model_op("aten::to", cast));
  // embedding: weight [1000, 16] bf16, indices [2, 5] long: 10 indices · 8 + 2 · 10 · 16 · 2
  const char* emb =
      R"({"Input Dims": [[1000, 16], [2, 5], [], [], []], "Input type": ["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"]})";
  CHECK(flops("aten::embedding", emb) == 0);
  CHECK(bytes("aten::embedding", emb) == 10 * 8 + 2 * 10 * 16 * 2);
}

TEST_CASE("result type: 0-dim tensors and scalars do not widen within a category") {
  using tlsql::Operand;
  using tlsql::result_dtype;
  // bf16 [1, 5184] * 0-dim double: bf16 (same category: the dimensioned tensor decides)
  CHECK(result_dtype({{"c10::BFloat16", true, ""}, {"double", false, ""}}) == "c10::BFloat16");
  CHECK(result_dtype({{"double", false, ""}, {"c10::BFloat16", true, ""}}) == "c10::BFloat16");
  // long [4] * 0-dim double: a higher category, so promote(long, double) = double
  CHECK(result_dtype({{"long int", true, ""}, {"double", false, ""}}) == "double");
  // long [4] * 2.5 (a Python float): the default dtype, float
  CHECK(result_dtype({{"long int", true, ""}, {"Scalar", false, "2.5"}}) == "float");
  // half [4] * 3 (a Python int): half; bool [4] + 1: long
  CHECK(result_dtype({{"c10::Half", true, ""}, {"Scalar", false, "3"}}) == "c10::Half");
  CHECK(result_dtype({{"bool", true, ""}, {"Scalar", false, "1"}}) == "long int");
  // two dimensioned tensors: half with bfloat16 is float, float with double is double
  CHECK(result_dtype({{"c10::Half", true, ""}, {"c10::BFloat16", true, ""}}) == "float");
  CHECK(result_dtype({{"float", true, ""}, {"double", true, ""}}) == "double");
  CHECK(result_dtype({{"Scalar", false, ""}, {"", false, ""}}).empty());
}

TEST_CASE("copies over a link are not HBM traffic") {
  CHECK(tlsql::memcpy_over_link("Memcpy DtoH (Device -> Pageable)"));
  CHECK(tlsql::memcpy_over_link("Memcpy HtoD (Pinned -> Device)"));
  CHECK(tlsql::memcpy_over_link("Memcpy PtoP (Device -> Device)"));
  CHECK_FALSE(tlsql::memcpy_over_link("Memcpy DtoD (Device -> Device)"));
  CHECK_FALSE(tlsql::memcpy_over_link("Memset (Device)"));
  // The native readers' names (Nsight, rocprofv3) alike: a host copy is not HBM traffic there either.
  CHECK(tlsql::memcpy_over_link("Memcpy Host-to-Device"));
  CHECK(tlsql::memcpy_over_link("MEMORY_COPY_DEVICE_TO_HOST"));
  CHECK_FALSE(tlsql::memcpy_over_link("Memcpy Device-to-Device"));
  CHECK_FALSE(tlsql::memcpy_over_link("MEMORY_COPY_DEVICE_TO_DEVICE"));
}

TEST_CASE("elementwise output sized by the result type") {
  // bf16 [1, 5184] * 0-dim double: read 5184·2 + 1·8, write 5184·2 (not 5184·8)
  const char* mul = R"({"Input Dims": [[1, 5184], []], "Input type": ["c10::BFloat16", "double"]})";
  CHECK(flops("aten::mul", mul) == 5184);
  CHECK(bytes("aten::mul", mul) == 5184 * 2 + 8 + 5184 * 2);
  CHECK(model_op("aten::mul", mul)->dtype == "c10::BFloat16");
  // the 0-dim operand first: the same
  const char* mul2 = R"({"Input Dims": [[], [1, 5184]], "Input type": ["double", "c10::BFloat16"]})";
  CHECK(flops("aten::mul", mul2) == 5184);
  CHECK(model_op("aten::mul", mul2)->dtype == "c10::BFloat16");
  // add with alpha: bf16 + bf16, alpha a Scalar: written as bf16
  const char* add = R"({"Input Dims": [[8], [8], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"],
      "Concrete Inputs": ["", "", "1"]})";
  CHECK(bytes("aten::add", add) == (8 + 8 + 8) * 2.0);
  // long [4] * 2.5: written as float (4 bytes)
  const char* scale =
      R"({"Input Dims": [[4], []], "Input type": ["long int", "Scalar"], "Concrete Inputs": ["", "2.5"]})";
  CHECK(bytes("aten::mul", scale) == 4 * 8 + 4 * 4.0);
}

TEST_CASE("reductions read dim and keepdim") {
  // sum over dim -1 of [4, 6]: 24 FLOPs, output 4 elements: (24 + 4) · 4 bytes
  const char* sum = R"({"Input Dims": [[4, 6], [], [], []], "Input type": ["float", "ScalarList", "Scalar", ""],
      "Concrete Inputs": ["", "[-1]", "False", ""]})";
  CHECK(flops("aten::sum", sum) == 24);
  CHECK(bytes("aten::sum", sum) == (24 + 4) * 4.0);
  // a full reduction (no dim): output 1 element
  const char* all = R"({"Input Dims": [[4, 6], []], "Input type": ["float", ""], "Concrete Inputs": ["", ""]})";
  CHECK(bytes("aten::sum", all) == (24 + 1) * 4.0);
  // softmax: 3 FLOPs per element, read + write
  const char* sm = R"({"Input Dims": [[8, 32], [], []], "Input type": ["float", "Scalar", "Scalar"]})";
  CHECK(flops("aten::_softmax", sm) == 3 * 256);
  CHECK(bytes("aten::_softmax", sm) == 2 * 256 * 4);
}

TEST_CASE("categories and unknowns") {
  CHECK(std::string(tlsql::op_category("aten::addmm")) == "GEMM");
  CHECK(std::string(tlsql::op_category("aten::cudnn_convolution")) == "CONV_fwd");
  CHECK(std::string(tlsql::op_category("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)")) ==
        "comm");
  CHECK(std::string(tlsql::op_category("Memcpy HtoD (Pageable -> Device)")) == "memcpy");
  CHECK(std::string(tlsql::op_category("aten::view")) == "other");
  CHECK_FALSE(model_op("aten::view", R"({"Input Dims": [[2, 3]]})"));
  CHECK_FALSE(model_op("aten::mm", R"({"Input Dims": [[2, 3]]})"));  // missing the second matrix
  CHECK(tlsql::dtype_bytes("c10::BFloat16") == 2);
  CHECK(tlsql::dtype_bytes("long int") == 8);
  CHECK(tlsql::dtype_bytes("Scalar") == 0);
}

TEST_CASE("more families: where, losses, scatter / gather-add, index_put") {
  // where(bool [4, 1], float [1, 3], 0-dim float): output [4, 3] = 12 selects; bytes 4 bools +
  // 3 + 1 floats read, 12 floats written
  const char* w = R"({"Input Dims": [[4, 1], [1, 3], []], "Input type": ["bool", "float", "float"]})";
  CHECK(flops("aten::where", w) == 12);
  CHECK(bytes("aten::where", w) == 4 * 1 + (3 + 1) * 4 + 12 * 4);
  // nll_loss_forward(self [512, 10] float, target [512] long, reduction mean): 512 picks; reads
  // 512 floats and 512 longs, writes one float
  const char* nll = R"({"Input Dims": [[512, 10], [512], [], [], []],
      "Input type": ["float", "long int", "", "Scalar", "Scalar"], "Concrete Inputs": ["", "", "", "1", "-100"]})";
  CHECK(flops("aten::nll_loss_forward", nll) == 512);
  CHECK(bytes("aten::nll_loss_forward", nll) == 512 * (4 + 8) + 4);
  // nll_loss_backward(grad_out [], self [512, 10], target [512], ...): writes 5120 floats, reads
  // 512 targets and the 0-dim grad
  const char* nllb = R"({"Input Dims": [[], [512, 10], [512], [], [], [], []],
      "Input type": ["float", "float", "long int", "", "Scalar", "Scalar", "float"]})";
  CHECK(flops("aten::nll_loss_backward", nllb) == 512);
  CHECK(bytes("aten::nll_loss_backward", nllb) == 5120 * 4 + 512 * 8 + 4);
  // index_add_(self [755000], 0, index int [1024], source [1024]): 1024 adds; index 1024 · 4,
  // source read 1024 · 4, self's slices read and written 2 · 1024 · 4
  const char* ia = R"({"Input Dims": [[755000], [], [1024], [1024], []],
      "Input type": ["float", "Scalar", "int", "float", "Scalar"], "Concrete Inputs": ["", "0", "", "", "1"]})";
  CHECK(flops("aten::index_add_", ia) == 1024);
  CHECK(bytes("aten::index_add_", ia) == 1024 * 4 + 3 * 1024 * 4);
  // scatter_(self [4, 128, 4], 1... index [4, 128, 1] long, value 1): 512 writes, no arithmetic
  const char* sc = R"({"Input Dims": [[4, 128, 4], [], [4, 128, 1], []],
      "Input type": ["float", "Scalar", "long int", "Scalar"], "Concrete Inputs": ["", "1", "", "1"]})";
  CHECK(flops("aten::scatter_", sc) == 0);
  CHECK(bytes("aten::scatter_", sc) == 512 * 8 + 512 * 4);
  // scatter_add_(self [50], 0, index [64960], src [64960]): 64960 adds; index, src, and self's
  // element read and written per index
  const char* sa =
      R"({"Input Dims": [[50], [], [64960], [64960]], "Input type": ["float", "Scalar", "long", "float"]})";
  CHECK(flops("aten::scatter_add_", sa) == 64960);
  CHECK(bytes("aten::scatter_add_", sa) == 64960 * 8 + 64960 * 4 * 3);
  // index_put_(self, indices (not recorded), values half [2, 8, 1431], accumulate False): read
  // and written once each
  const char* ip = R"({"Input Dims": [[2, 8, 53, 53], [], [2, 8, 1431], []],
      "Input type": ["c10::Half", "", "c10::Half", "Scalar"], "Concrete Inputs": ["", "", "", "False"]})";
  CHECK(flops("aten::index_put_", ip) == 0);
  CHECK(bytes("aten::index_put_", ip) == 2 * 8 * 1431 * 2 * 2);
}

TEST_CASE("reductions read dim and keepdim where each schema puts them; scans keep every element") {
  // linalg_vector_norm(self [512, 8192], ord 2, dim [1], keepdim False): output 512 elements
  const char* vn =
      R"({"Input Dims": [[512, 8192], [], [], [], []], "Input type": ["float", "Scalar", "ScalarList", "Scalar", ""],
      "Concrete Inputs": ["", "2", "[1]", "False", ""]})";
  CHECK(bytes("aten::linalg_vector_norm", vn) == (512.0 * 8192 + 512) * 4);
  // var(self [8, 16], dim [1], correction 1, keepdim True): output [8, 1]
  const char* var = R"({"Input Dims": [[8, 16], [], [], []], "Input type": ["float", "ScalarList", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "[1]", "1", "True"]})";
  CHECK(bytes("aten::var", var) == (128 + 8) * 4);
  // cumsum(self [8, 16], 1): 128 in, 128 out
  const char* cs = R"({"Input Dims": [[8, 16], []], "Input type": ["float", "Scalar"], "Concrete Inputs": ["", "1"]})";
  CHECK(bytes("aten::cumsum", cs) == 2 * 128 * 4);
}

TEST_CASE("foreach, grouped GEMMs, rotary embedding, upsample") {
  // _foreach_addcmul_(self [[2048, 784], [2048]], t1, t2, value): 3 FLOPs per element of self;
  // no bytes (a TensorList's dtype is not recorded)
  const char* fa = R"({"Input Dims": [[[2048, 784], [2048]], [[2048, 784], [2048]], [[2048, 784], [2048]], []],
      "Input type": ["TensorList", "TensorList", "TensorList", "Scalar"]})";
  CHECK(flops("aten::_foreach_addcmul_", fa) == 3.0 * (2048 * 784 + 2048));
  CHECK(!model_op("aten::_foreach_addcmul_", fa)->bytes);
  CHECK(flops("aten::_foreach_sqrt", fa) == 2048 * 784 + 2048);
  CHECK(tlsql::has_perf_model("aten::_foreach_mul_"));
  CHECK(std::string(tlsql::op_category("aten::_foreach_mul_")) == "elementwise");
  // _grouped_mm(A bf16 [96, 64], B [4, 64, 32], offs [4]): 2 · 96 · 64 · 32; bytes A + B + out
  const char* g = R"({"Input Dims": [[96, 64], [4, 64, 32], [4], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "int", "", ""]})";
  CHECK(flops("aten::_grouped_mm", g) == 2.0 * 96 * 64 * 32);
  CHECK(bytes("aten::_grouped_mm", g) == (96 * 64 + 4 * 64 * 32 + 96 * 32) * 2.0);
  // batched [4, 8, 64] x [4, 64, 32]; and K split: [8, 96] x [96, 32] with offs [3]: 3 outputs [8, 32]
  const char* gb = R"({"Input Dims": [[4, 8, 64], [4, 64, 32]], "Input type": ["c10::BFloat16", "c10::BFloat16"]})";
  CHECK(flops("aten::_grouped_mm", gb) == 2.0 * 32 * 64 * 32);
  const char* gk =
      R"({"Input Dims": [[8, 96], [96, 32], [3]], "Input type": ["c10::BFloat16", "c10::BFloat16", "int"]})";
  CHECK(bytes("aten::_grouped_mm", gk) == (8 * 96 + 96 * 32 + 3 * 8 * 32) * 2.0);
  // _scaled_grouped_mm fp8 (A, B, scale_a, scale_b, offs): 2-byte output
  const char* sg = R"({"Input Dims": [[96, 64], [4, 64, 32], [96], [4, 32], [4]],
      "Input type": ["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "int"]})";
  CHECK(bytes("aten::_scaled_grouped_mm", sg) == 96 * 64 + 4 * 64 * 32 + 96 * 32 * 2.0);
  // rotary_embedding(positions [888] long, q bf16 [888, 512], k [888, 64], head 64, cache [131072, 64]):
  // 888 · 576 rotated elements, 3 FLOPs each; read + write them, a cache row and a position per token
  const char* rope = R"({"Input Dims": [[888], [888, 512], [888, 64], [], [131072, 64], []],
      "Input type": ["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"],
      "Concrete Inputs": ["", "", "", "64", "", "True"]})";
  CHECK(flops("_C::rotary_embedding", rope) == 3.0 * 888 * 576);
  CHECK(bytes("_C::rotary_embedding", rope) == 2.0 * 888 * 576 * 2 + 888 * 64 * 2 + 888 * 8);
  // upsample_bilinear2d(input [2, 3, 8, 8], output_size [32, 32]): 2·3·32·32 = 6144 outputs, 4
  // taps: 7 FLOPs each; bytes (384 + 6144) · 4. Nearest by scale_factors [4., 4.]: same output, 0 FLOPs
  const char* bil = R"({"Input Dims": [[2, 3, 8, 8], [], [], [], []],
      "Input type": ["float", "ScalarList", "Scalar", "", ""], "Concrete Inputs": ["", "[32, 32]", "False", "", ""]})";
  CHECK(flops("aten::upsample_bilinear2d", bil) == 6144 * 7);
  CHECK(bytes("aten::upsample_bilinear2d", bil) == (384 + 6144) * 4.0);
  const char* near = R"({"Input Dims": [[2, 3, 8, 8], [], []],
      "Input type": ["float", "", "ScalarList"], "Concrete Inputs": ["", "", "[4., 4.]"]})";
  CHECK(flops("aten::upsample_nearest2d", near) == 0);
  CHECK(bytes("aten::upsample_nearest2d", near) == (384 + 6144) * 4.0);
  // no output size and no scale: no guess
  const char* none = R"({"Input Dims": [[2, 3, 8, 8], [], []], "Input type": ["float", "", ""]})";
  CHECK(!model_op("aten::upsample_nearest2d", none));
}

TEST_CASE("the memo answers as model_op: keyed by family and the three members it reads") {
  tlsql::OpModelMemo memo;
  auto same = [&](const char* name, const char* args) {
    auto a = model_op(name, args), b = memo.model(name, args);
    REQUIRE(a.has_value() == b.has_value());
    if (a) CHECK((a->flops == b->flops && a->bytes == b->bytes && a->dtype == b->dtype && a->matrix == b->matrix));
    return b;
  };
  // Other members (ids) differ from op to op and do not matter: the second is a hit, same numbers.
  const char* mm1 = R"({"External id": 1, "Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]})";
  const char* mm2 = R"({"External id": 2, "Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]})";
  CHECK(*same("aten::mm", mm1)->flops == 2.0 * 64 * 32 * 128);
  CHECK(*same("aten::mm", mm2)->flops == 2.0 * 64 * 32 * 128);
  // Same members, another family: a different model (bmm reads a batch dimension mm has not).
  const char* three = R"({"Input Dims": [[8, 16, 4], [8, 4, 2]], "Input type": ["c10::Half", "c10::Half"]})";
  CHECK(*same("aten::bmm", three)->flops == 8 * 2.0 * 16 * 2 * 4);
  CHECK(!same("aten::mm", three));  // 3-d operands: no mm model, remembered as none
  CHECK(!same("aten::mm", three));
  // Only Concrete Inputs differ (sum over dim 0 vs dim 1 of [4, 6]): two entries, two answers.
  const char* sum0 = R"({"Input Dims": [[4, 6], [], [], []], "Input type": ["float", "ScalarList", "Scalar", ""],
      "Concrete Inputs": ["", "[0]", "False", ""]})";
  const char* sum1 = R"({"Input Dims": [[4, 6], [], [], []], "Input type": ["float", "ScalarList", "Scalar", ""],
      "Concrete Inputs": ["", "[1]", "False", ""]})";
  // (bytes: 24 read + 6 written vs 24 + 4, fp32)
  CHECK(*same("aten::sum", sum0)->bytes == (24 + 6) * 4.0);
  CHECK(*same("aten::sum", sum1)->bytes == (24 + 4) * 4.0);
  // A key written with an escape takes the whole-document parse, not the memo: still the same.
  const char* escaped = R"({"Input\u0020Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]})";
  CHECK(*same("aten::mm", escaped)->flops == 2.0 * 64 * 32 * 128);
  // The members handed over by a caller that found them (the perf pass): the same answers, "" for
  // a member the args lack.
  tlsql::OpModelMemo members;
  CHECK(*members.model_of_members("aten::mm", "[[64, 128], [128, 32]]", R"(["float", "float"])", "")->flops ==
        2.0 * 64 * 32 * 128);
  CHECK(*members
             .model_of_members("aten::sum", "[[4, 6], [], [], []]", R"(["float", "ScalarList", "Scalar", ""])",
                               R"(["", "[1]", "False", ""])")
             ->bytes == (24 + 4) * 4.0);
  CHECK(!members.model_of_members("aten::mm", "", R"(["float", "float"])", ""));
}

TEST_CASE("inference attention: heads from the op, lengths from its serving step") {
  // vllm::unified_attention_with_output(q [16, 4, 8], k [16, 2, 8], v [16, 2, 8], out, layer_name):
  // Hq 4, Hkv 2, Dqk = Dv = 8 (16 = the graph's padded tokens: not used). Step: one prefill chunk
  // of sq 10 over sk 30 keys (sqsq 100, sqsk 300) and three decode tokens over 50 keys in all.
  const char* attn = R"({"Input Dims": [[16, 4, 8], [16, 2, 8], [16, 2, 8], [16, 4, 8], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "str"]})";
  const tlsql::StepLengths step{10, 30, 100, 300, 3, 50, 3, 50};
  auto p = model_op("vllm::unified_attention_with_output", attn, &step);
  REQUIRE(p);
  // FLOPs: 4 · 2 · (8 + 8) · (300 + 50) - 4 · (8 + 8) · 100 (the chunk's causal half) = 44800 - 6400
  CHECK(*p->flops == 38400);
  // bytes: 13 queries · (4·8 + 4·8 + 2·8 + 2·8) · 2 (Q, O, new K, V) + (30 - 10 + 50 - 3) cached keys
  //        · 2 · (8 + 8) · 2 = 2496 + 4288
  CHECK(*p->bytes == 6784);
  CHECK(p->matrix);
  CHECK(std::string(tlsql::op_category("vllm::unified_attention_with_output")) == "SDPA_fwd");
  CHECK(tlsql::model_needs_step("vllm::unified_attention"));
  CHECK_FALSE(tlsql::model_needs_step("aten::mm"));
  // Decode only, fp8 cache keys (1 byte): 4·2·16·50 FLOPs; 3 · 96 · 2 + 47 · 32 · 1 bytes
  const char* fp8 = R"({"Input Dims": [[16, 4, 8], [16, 2, 8], [16, 2, 8], [16, 4, 8], []],
      "Input type": ["c10::BFloat16", "c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "c10::BFloat16", "str"]})";
  const tlsql::StepLengths decode{0, 0, 0, 0, 3, 50, 3, 50};
  CHECK(*model_op("vllm::unified_attention", fp8, &decode)->flops == 6400);
  CHECK(*model_op("vllm::unified_attention", fp8, &decode)->bytes == 3 * 96 * 2 + 47 * 32);
  // vLLM's FlashAttention op below it reads the paged cache: key cache [blocks, block size, Hkv, D];
  // the heads come from the same places, so the same numbers.
  const char* fa3 = R"({"Input Dims": [[16, 4, 8], [100, 16, 2, 8], [100, 16, 2, 8], [], [], [], [16, 4, 8]],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "c10::BFloat16"]})";
  CHECK(*model_op("_vllm_fa3_C::fwd", fa3, &step)->flops == 38400);
  CHECK(*model_op("_vllm_fa3_C::fwd", fa3, &step)->bytes == 6784);
  // No step (or one with no tokens): no model, not a guess.
  CHECK_FALSE(model_op("vllm::unified_attention_with_output", attn));
  const tlsql::StepLengths empty{};
  CHECK_FALSE(model_op("vllm::unified_attention_with_output", attn, &empty));
  // Lengths whose int64 sum leaves int64 (a hand-made annotation) saturate, never wrap: INT64_MIN
  // plus -1 wrapped to INT64_MAX, which passed as "some tokens" and gave negative bytes (45.10).
  const tlsql::StepLengths wraps{INT64_MIN, 0, 0, 0, -1, 0, 0, 0};
  CHECK_FALSE(model_op("vllm::unified_attention_with_output", attn, &wraps));
  // A step given to a model that reads none changes nothing.
  const char* mm = R"({"Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]})";
  CHECK(*model_op("aten::mm", mm, &step)->flops == 2.0 * 64 * 32 * 128);
}

TEST_CASE("fused MoE: each token through topk experts, the weights of the experts it can reach") {
  // inplace_fused_experts(hidden bf16 [4, 8], w1 [6, 10, 8] (gate + up: G = 2, N = 5), w2 [6, 8, 5],
  // topk_weights [4, 2], topk_ids [4, 2]): M 4, K 8, E 6, N 5, topk 2.
  const char* moe = R"({"Input Dims": [[4, 8], [6, 10, 8], [6, 8, 5], [4, 2], [4, 2]],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "int"]})";
  // FLOPs: 2·4·2·8·5·2 (up, gate) + 2·4·2·5·8 (down) + 4·8·(2·2 - 1) (weighted sum) = 1280 + 640 + 96
  CHECK(flops("vllm::inplace_fused_experts", moe) == 2016);
  // bytes: hidden read + output written 2·4·8·2 = 128; min(6, 4·2) = 6 experts' weights
  //        (2·5·8 + 8·5)·2 = 240 each: 1440
  CHECK(bytes("vllm::inplace_fused_experts", moe) == 1568);
  CHECK(model_op("sglang::outplace_fused_experts", moe)->matrix);
  // One token reaches only its 2 experts: 2·2·8·5·2 + 2·2·5·8 + 8·3 = 504 FLOPs; 32 + 2·240 bytes
  const char* one = R"({"Input Dims": [[1, 8], [6, 10, 8], [6, 8, 5], [1, 2], [1, 2]],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "int"]})";
  CHECK(flops("vllm::outplace_fused_experts", one) == 504);
  CHECK(bytes("vllm::outplace_fused_experts", one) == 512);
  // Not gated (w1 [6, 5, 8]), fp8 weights: 2·4·2·8·5 + 640 + 96 FLOPs; 128 + 6·(40 + 40)·1 bytes
  const char* fp8 = R"({"Input Dims": [[4, 8], [6, 5, 8], [6, 8, 5], [4, 2], [4, 2]],
      "Input type": ["c10::BFloat16", "c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "int"]})";
  CHECK(flops("vllm::rocm_aiter_fused_moe", fp8) == 640 + 640 + 96);
  CHECK(bytes("vllm::rocm_aiter_fused_moe", fp8) == 128 + 6 * 80);
  // Shapes that do not fit (w1's rows neither N nor 2N; tokens differ): no model
  for (
      const char* bad :
      {R"({"Input Dims": [[4, 8], [6, 7, 8], [6, 8, 5], [4, 2]], "Input type": ["float", "float", "float", "float"]})",
       R"({"Input Dims": [[4, 8], [6, 10, 8], [6, 8, 5], [3, 2]], "Input type": ["float", "float", "float", "float"]})",
       R"({"Input Dims": [[4, 8], [6, 10, 8], [5, 8, 5], [4, 2]], "Input type": ["float", "float", "float", "float"]})"})
    CHECK_FALSE(model_op("vllm::inplace_fused_experts", bad));
}

TEST_CASE("serving engines' fused RMS norms and KV-cache writes") {
  // aiter::rmsnorm2d_fwd_with_add(out, input bf16 [4, 8], residual_in, residual_out, weight [8], eps):
  // N = 32 elements in 4 rows of H = 8. FLOPs: 32 (add) + 4·32 + 2·4 = 168; bytes: input, residual
  // read, out, residual out written (4·32·2 = 256) + the weight (8·2) = 272
  const char* add = R"({"Input Dims": [[4, 8], [4, 8], [4, 8], [4, 8], [8], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]})";
  CHECK(flops("aiter::rmsnorm2d_fwd_with_add_ck", add) == 168);
  CHECK(bytes("aiter::rmsnorm2d_fwd_with_add_ck", add) == 272);
  // _C::fused_add_rms_norm(input, residual, weight fp32 [8], eps), in place: same FLOPs; 256 + 8·4
  const char* inplace = R"({"Input Dims": [[4, 8], [4, 8], [8], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "float", "Scalar"]})";
  CHECK(flops("_C::fused_add_rms_norm", inplace) == 168);
  CHECK(bytes("_C::fused_add_rms_norm", inplace) == 256 + 32);
  // aiter::rms_norm(input [4, 8], weight [8], eps, ...): 4·32 + 2·4 = 136 FLOPs; 2·32·2 + 16 bytes
  const char* rms =
      R"({"Input Dims": [[4, 8], [8], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]})";
  CHECK(flops("aiter::rms_norm", rms) == 136);
  CHECK(bytes("aiter::rms_norm", rms) == 144);
  CHECK(std::string(tlsql::op_category("_C::rms_norm")) == "NORM_fwd");
  // A weight that is not the input's last dimension: no model
  CHECK_FALSE(model_op("aiter::rms_norm", R"({"Input Dims": [[4, 8], [4]], "Input type": ["float", "float"]})"));
  // reshape_and_cache_flash(key bf16 [32, 8, 64], value, key_cache uint8 (fp8), value_cache,
  // slot_mapping long [32], ...): 2·16384 elements read at 2 bytes, written at 1; 32 slots of 8 bytes
  const char* cache =
      R"({"Input Dims": [[32, 8, 64], [32, 8, 64], [1000, 16, 8, 64], [1000, 16, 8, 64], [32], [], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "unsigned char", "unsigned char", "long int", "str", "", ""]})";
  CHECK(flops("_C_cache_ops::reshape_and_cache_flash", cache) == 0);
  CHECK(bytes("_C_cache_ops::reshape_and_cache_flash", cache) == 32768 * 2 + 32768 * 1 + 32 * 8);
}

TEST_CASE("a dimension that is not a non-negative integer: no model") {
  // (It used to count -524288 FLOPs for mm [-64, 128] x [128, 32], and to drop a 2.5 as if absent.)
  CHECK_FALSE(model_op("aten::mm", R"({"Input Dims": [[-64, 128], [128, 32]], "Input type": ["float", "float"]})"));
  CHECK_FALSE(model_op("aten::mm", R"({"Input Dims": [[64, 2.5], [128, 32]], "Input type": ["float", "float"]})"));
  tlsql::OpModelMemo memo;
  CHECK_FALSE(memo.model("aten::mm", R"({"Input Dims": [[-64, 128], [128, 32]], "Input type": ["float", "float"]})"));
  const tlsql::StepLengths step{0, 0, 0, 0, 3, 50, 3, 50};
  CHECK_FALSE(model_op("vllm::unified_attention", R"({"Input Dims": [[16, -4, 8], [16, 2, 8], [16, 2, 8]],
      "Input type": ["float", "float", "float"]})",
                       &step));
}

TEST_CASE("convolution and upsample arguments that make no output: no model, no crash") {
  // stride 0 divided by zero (SIGFPE on a hand-made trace); a negative padding, a dilation of 0, a
  // kernel larger than the input, a negative scale, a transposed conv whose channels overflow.
  auto conv = [](const char* conc, const char* w = "[4, 3, 3, 3]") {
    return std::string(R"({"Input Dims": [[1, 3, 8, 8], )") + w +
           R"(, [], [], [], [], [], [], []], "Input type": ["float", "float", "", "", "", "", "", "", ""],
               "Concrete Inputs": )" +
           conc + "}";
  };
  for (const char* conc : {R"(["", "", "", "[0, 0]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"])",
                           R"(["", "", "", "[1, 1]", "[-5, 0]", "[1, 1]", "False", "[0, 0]", "1"])",
                           R"(["", "", "", "[1, 1]", "[0, 0]", "[0, 1]", "False", "[0, 0]", "1"])",
                           R"(["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "9223372036854775807"])"})
    CHECK_MESSAGE(!model_op("aten::convolution", conv(conc)), std::string(conc));
  // A stride beyond int64 (saturated) is legal arithmetic: one output per spatial dimension.
  auto huge =
      model_op("aten::convolution", conv(R"(["", "", "", "[1e30, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"])"));
  REQUIRE(huge);
  CHECK(*huge->flops == 2.0 * (1 * 4 * 1 * 6) * (3 * 3 * 3));  // out [1, 4, 1, 6]
  CHECK_FALSE(model_op("aten::convolution",
                       conv(R"(["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"])", "[4, 3, 9, 9]")));
  CHECK(model_op("aten::convolution", conv(R"(["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"])")));
  CHECK_FALSE(model_op("aten::upsample_nearest2d", R"({"Input Dims": [[2, 3, 8, 8], [], []],
      "Input type": ["float", "", "ScalarList"], "Concrete Inputs": ["", "", "[-4., 4.]"]})"));
  CHECK_FALSE(model_op("aten::upsample_nearest2d", R"({"Input Dims": [[2, 3, 8, 8], [], []],
      "Input type": ["float", "ScalarList", ""], "Concrete Inputs": ["", "[1e300, 4]", ""]})"));
}

TEST_CASE("serving namespaces: one entry serves an op in each engine's namespace, a full name wins") {
  using tlsql::has_perf_model, tlsql::op_category;
  // silu_and_mul(out bf16 [3, 16], input bf16 [3, 32]): the same op, schema and numbers in vLLM's
  // _C, sgl_kernel, AITER and FlashInfer: 48 outputs · 5 = 240 FLOPs
  const char* act =
      R"({"Input Dims": [[3, 16], [3, 32], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"]})";
  for (const char* ns : {"_C", "sgl_kernel", "aiter", "flashinfer", "vllm", "sglang"})
    CHECK_MESSAGE(flops((std::string(ns) + "::silu_and_mul").c_str(), act) == 240, ns);
  // Not a serving namespace (nor aten, whose silu is the unary model): no model, category "other"
  CHECK_FALSE(has_perf_model("mylib::silu_and_mul"));
  CHECK_FALSE(has_perf_model("aten::silu_and_mul"));
  CHECK(std::string(op_category("mylib::silu_and_mul")) == "other");
  CHECK(std::string(op_category("sgl_kernel::rmsnorm")) == "NORM_fwd");
  // vLLM's FlashAttention namespaces, whatever their version, and sgl_kernel's FA3 op
  for (const char* n : {"_vllm_fa2_C::varlen_fwd", "_vllm_fa3_C::fwd", "_vllm_fa4_C::fwd", "sgl_kernel::fwd"})
    CHECK_MESSAGE(tlsql::model_needs_step(n), n);
  // A full name wins: aiter::rms_norm(input, weight, eps) against _C::rms_norm(out, input, weight,
  // eps): each read its own way, the same 4·32 + 2·4 = 136 FLOPs for [4, 8] in rows of 8
  const char* two = R"({"Input Dims": [[4, 8], [8], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"]})";
  const char* three = R"({"Input Dims": [[4, 8], [4, 8], [8], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar"]})";
  CHECK(flops("aiter::rms_norm", two) == 136);
  CHECK(flops("_C::rms_norm", three) == 136);
  CHECK(flops("vllm_aiter::rms_norm", two) == 136);
  // ... and the other layout does not fit: no model rather than a misread
  CHECK_FALSE(model_op("_C::rms_norm", two));
  CHECK_FALSE(model_op("aiter::rms_norm", three));
}

TEST_CASE("serving RMS norms: fused add, Gemma, quantized outputs") {
  // aiter::rmsnorm(out bf16 [4, 8], input [4, 8], weight [8], eps, gemma_norm): N 32 in 4 rows of
  // H 8: 4·32 + 2·4 = 136 FLOPs; input read, weight read, output written: 64 + 16 + 64 = 144 bytes
  const char* rms = R"({"Input Dims": [[4, 8], [4, 8], [8], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]})";
  CHECK(flops("aiter::rmsnorm", rms) == 136);
  CHECK(bytes("aiter::rmsnorm", rms) == 144);
  // aiter::add_rmsnorm(out, input, residual_in, residual_out, weight [8], eps, gemma_norm): + 32 adds;
  // input and residual read, output and new residual written (4·64) + the weight 16
  const char* add = R"({"Input Dims": [[4, 8], [4, 8], [4, 8], [4, 8], [8], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]})";
  CHECK(flops("aiter::add_rmsnorm", add) == 168);
  CHECK(bytes("aiter::add_rmsnorm", add) == 272);
  // sgl_kernel::gemma_fused_add_rmsnorm(input, residual, weight, eps, enable_pdl), in place: the
  // (1 + w) multiplier adds 32: 200 FLOPs; bytes as the add: 272
  const char* gemma = R"({"Input Dims": [[4, 8], [4, 8], [8], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]})";
  CHECK(flops("sgl_kernel::gemma_fused_add_rmsnorm", gemma) == 200);
  CHECK(bytes("sgl_kernel::gemma_fused_add_rmsnorm", gemma) == 272);
  CHECK(flops("flashinfer::fused_add_rmsnorm", gemma) == 168);
  // vLLM's AITER wrapper (x, residual, weight, eps) writes new tensors: the same count
  CHECK(bytes("vllm::rocm_aiter_rmsnorm2d_fwd_with_add", gemma) == 272);
  // _C::rms_norm_static_fp8_quant(result fp8 [4, 8], input bf16, weight [8], scale float [1], eps):
  // + 32 scale multiplies: 168; input 64 + weight 16 + fp8 output 32 + the scale 4 = 116 bytes
  const char* fixed = R"({"Input Dims": [[4, 8], [4, 8], [8], [1], []],
      "Input type": ["c10::Float8_e4m3fn", "c10::BFloat16", "c10::BFloat16", "float", "Scalar"]})";
  CHECK(flops("_C::rms_norm_static_fp8_quant", fixed) == 168);
  CHECK(bytes("_C::rms_norm_static_fp8_quant", fixed) == 116);
  CHECK(model_op("_C::rms_norm_static_fp8_quant", fixed)->dtype == "c10::BFloat16");
  // _C::rms_norm_dynamic_per_token_quant(result fp8, input, weight, scale float [4, 1], eps,
  // scale_ub, residual?): a dynamic scale is max-abs and scale, 2 per element: 136 + 64 = 200;
  // bytes 64 + 16 + 32 + 16 (the scales written) = 128. With the residual: + 32 FLOPs, + 2·64 bytes
  const char* dyn = R"({"Input Dims": [[4, 8], [4, 8], [8], [4, 1], [], [], []],
      "Input type": ["c10::Float8_e4m3fn", "c10::BFloat16", "c10::BFloat16", "float", "Scalar", "", ""]})";
  CHECK(flops("_C::rms_norm_dynamic_per_token_quant", dyn) == 200);
  CHECK(bytes("_C::rms_norm_dynamic_per_token_quant", dyn) == 128);
  const char* dyn_res = R"({"Input Dims": [[4, 8], [4, 8], [8], [4, 1], [], [], [4, 8]],
      "Input type": ["c10::Float8_e4m3fn", "c10::BFloat16", "c10::BFloat16", "float", "Scalar", "", "c10::BFloat16"]})";
  CHECK(flops("_C::rms_norm_dynamic_per_token_quant", dyn_res) == 232);
  CHECK(bytes("_C::rms_norm_dynamic_per_token_quant", dyn_res) == 256);
  // AITER's (out fp8, input, residual_in, residual_out, yscale [4, 1], weight, eps): the same op
  const char* aiter_dyn = R"({"Input Dims": [[4, 8], [4, 8], [4, 8], [4, 8], [4, 1], [8], []],
      "Input type": ["c10::Float8_e4m3fn", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "c10::BFloat16", "Scalar"]})";
  CHECK(flops("aiter::rmsnorm2d_fwd_with_add_dynamicquant", aiter_dyn) == 232);
  CHECK(bytes("aiter::rmsnorm2d_fwd_with_add_dynamicquant", aiter_dyn) == 256);
  // A residual of another shape than the input: no model
  CHECK_FALSE(model_op("aiter::add_rmsnorm", R"({"Input Dims": [[4, 8], [4, 8], [2, 8], [4, 8], [8]],
      "Input type": ["float", "float", "float", "float", "float"]})"));
}

TEST_CASE("gated activations and quantization") {
  // silu_and_mul(out bf16 [3, 16], input bf16 [3, 32]): 48 outputs; SiLU x / (1 + exp(-x)) and the
  // product: 5 each (TraceLens) = 240; input 96·2 read, output 48·2 written = 288 bytes
  const char* act = R"({"Input Dims": [[3, 16], [3, 32]], "Input type": ["c10::BFloat16", "c10::BFloat16"]})";
  CHECK(flops("sgl_kernel::silu_and_mul", act) == 240);
  CHECK(bytes("sgl_kernel::silu_and_mul", act) == 288);
  CHECK(flops("aiter::gelu_and_mul", act) == 48 * 8);
  CHECK(flops("_C::gelu_tanh_and_mul", act) == 48 * 10);
  CHECK(std::string(tlsql::op_category("_C::silu_and_mul")) == "elementwise");
  // AITER's MoE split-K path feeds fp32: 96·4 read + 48·2 written
  const char* f32 = R"({"Input Dims": [[3, 16], [3, 32]], "Input type": ["c10::BFloat16", "float"]})";
  CHECK(bytes("aiter::silu_and_mul", f32) == 480);
  // _C::silu_and_mul_quant(result fp8 [3, 16], input bf16 [3, 32], scale float [1]): + 48 scale
  // multiplies = 288; 192 + 48 + 4 = 244 bytes
  const char* q =
      R"({"Input Dims": [[3, 16], [3, 32], [1]], "Input type": ["c10::Float8_e4m3fn", "c10::BFloat16", "float"]})";
  CHECK(flops("_C::silu_and_mul_quant", q) == 288);
  CHECK(bytes("_C::silu_and_mul_quant", q) == 244);
  // The input is not twice the output: no model
  CHECK_FALSE(model_op("_C::silu_and_mul", R"({"Input Dims": [[3, 16], [3, 30]], "Input type": ["float", "float"]})"));
  // _C::static_scaled_fp8_quant(result fp8 [4, 8], input bf16 [4, 8], scale float []): 32 multiplies;
  // 64 read + 32 written + 4 = 100 bytes (the scale is a 0-dim tensor, as vLLM passes it: Input Dims
  // [] like a Python scalar's, but a dtype)
  const char* st = R"({"Input Dims": [[4, 8], [4, 8], [], []],
      "Input type": ["c10::Float8_e4m3fn", "c10::BFloat16", "float", ""]})";
  CHECK(flops("_C::static_scaled_fp8_quant", st) == 32);
  CHECK(bytes("_C::static_scaled_fp8_quant", st) == 100);
  // sgl_kernel::sgl_per_token_group_quant_fp8(input bf16 [4, 256], output_q fp8 [4, 256], output_s
  // float [4, 2], group_size 128, ...): max-abs and scale: 2·1024; 2048 + 1024 + 32 bytes
  const char* grp = R"({"Input Dims": [[4, 256], [4, 256], [4, 2], [], [], [], [], []],
      "Input type": ["c10::BFloat16", "c10::Float8_e4m3fn", "float", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "", "", "128", "1e-10", "-448.", "448.", "False"]})";
  CHECK(flops("sgl_kernel::sgl_per_token_group_quant_fp8", grp) == 2048);
  CHECK(bytes("sgl_kernel::sgl_per_token_group_quant_fp8", grp) == 3104);
  // sgl_per_tensor_quant_fp8(input, output_q, output_s [1], is_static): static: 1 per element
  const char* tensor = R"({"Input Dims": [[4, 256], [4, 256], [1], []],
      "Input type": ["c10::BFloat16", "c10::Float8_e4m3fn", "float", "Scalar"], "Concrete Inputs": ["", "", "", "True"]})";
  CHECK(flops("sgl_kernel::sgl_per_tensor_quant_fp8", tensor) == 1024);
  // AITER's fp4 quant packs two values a byte: out uint8 [4, 128], scales uint8 [4, 8]:
  // 2048 read + 512 + 32 written
  const char* fp4 = R"({"Input Dims": [[4, 128], [4, 256], [4, 8], []],
      "Input type": ["unsigned char", "c10::BFloat16", "unsigned char", "Scalar"]})";
  CHECK(flops("aiter::dynamic_per_group_scaled_quant_fp4", fp4) == 2048);
  CHECK(bytes("aiter::dynamic_per_group_scaled_quant_fp4", fp4) == 2592);
}

TEST_CASE("serving RoPE: sgl_kernel's rotary_embedding, FlashInfer's cos / sin cache form") {
  // sgl_kernel::rotary_embedding is vLLM's (positions, query, key, head_size, cos_sin_cache, is_neox)
  const char* rope = R"({"Input Dims": [[888], [888, 512], [888, 64], [], [131072, 64], []],
      "Input type": ["long int", "c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16", "Scalar"],
      "Concrete Inputs": ["", "", "", "64", "", "True"]})";
  CHECK(flops("sgl_kernel::rotary_embedding", rope) == 3.0 * 888 * 576);
  CHECK(bytes("sgl_kernel::rotary_embedding", rope) == bytes("_C::rotary_embedding", rope));
  // apply_rope_pos_ids_cos_sin_cache(q bf16 [4, 8, 64], k [4, 2, 64], q_rope, k_rope, cos_sin_cache
  // float [4096, 32], pos_ids long [4], interleave, enable_pdl, stream): q and k hold 2048 + 512 =
  // 2560 elements, the first 32 of each 64 rotated: 1280 · 3 = 3840 FLOPs. Bytes: q, k read and
  // written whole 2·2560·2 = 10240, a cache row per token 4·32·4 = 512, the positions 32: 10784
  const char* ap = R"({"Input Dims": [[4, 8, 64], [4, 2, 64], [4, 8, 64], [4, 2, 64], [4096, 32], [4], [], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "long int", "Scalar", "Scalar", "Scalar"]})";
  CHECK(flops("sgl_kernel::apply_rope_pos_ids_cos_sin_cache", ap) == 3840);
  CHECK(bytes("sgl_kernel::apply_rope_pos_ids_cos_sin_cache", ap) == 10784);
  // With SGLang's fused KV-cache save (v [4, 2, 64], k_buffer, v_buffer bf16 [100, 2, 64],
  // kv_cache_loc long [4]): v read 1024, k and v written to the cache (512 + 512)·2 = 2048, the
  // slots 32: 13888
  const char* save = R"({"Input Dims": [[4, 8, 64], [4, 2, 64], [4, 8, 64], [4, 2, 64], [4096, 32], [4], [], [], [],
      [4, 2, 64], [100, 2, 64], [100, 2, 64], [4]],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "long int", "Scalar", "Scalar", "Scalar",
      "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "long int"]})";
  CHECK(flops("flashinfer::apply_rope_pos_ids_cos_sin_cache", save) == 3840);
  CHECK(bytes("flashinfer::apply_rope_pos_ids_cos_sin_cache", save) == 13888);
}

TEST_CASE("quantized and skinny GEMMs: 2·M·N·K, bytes at the recorded dtypes") {
  // _C::cutlass_scaled_mm(out bf16 [16, 64], a fp8 [16, 128], b fp8 [128, 64], a_scales [16, 1],
  // b_scales [1, 64], bias bf16 [64]): 2·16·64·128 = 262144 + 16·64 bias adds = 263168 FLOPs;
  // bytes A 2048 + B 8192 (1 byte each) + out 16·64·2 = 2048 + bias 128 = 12416
  const char* cut = R"({"Input Dims": [[16, 64], [16, 128], [128, 64], [16, 1], [1, 64], [64]],
      "Input type": ["c10::BFloat16", "c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "c10::BFloat16"]})";
  CHECK(flops("_C::cutlass_scaled_mm", cut) == 263168);
  CHECK(bytes("_C::cutlass_scaled_mm", cut) == 12416);
  auto p = model_op("_C::cutlass_scaled_mm", cut);
  CHECK((p->matrix && tlsql::spec_dtype(p->dtype) == "fp8"));
  CHECK(std::string(tlsql::op_category("_C::cutlass_scaled_mm")) == "GEMM");
  // sgl_kernel::fp8_scaled_mm(mat_a [16, 128], mat_b [128, 64], scales_a, scales_b, out_dtype, bias
  // None): no output tensor: an 8-bit GEMM writes 2 bytes: 2048 + 8192 + 2048
  const char* sgl = R"({"Input Dims": [[16, 128], [128, 64], [16, 1], [1, 64], [], []],
      "Input type": ["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "Scalar", ""]})";
  CHECK(flops("sgl_kernel::fp8_scaled_mm", sgl) == 262144);
  CHECK(bytes("sgl_kernel::fp8_scaled_mm", sgl) == 12288);
  const char* i8 = R"({"Input Dims": [[16, 128], [128, 64], [16, 1], [1, 64], [], []],
      "Input type": ["signed char", "signed char", "float", "float", "Scalar", ""]})";
  CHECK(tlsql::spec_dtype(model_op("sgl_kernel::int8_scaled_mm", i8)->dtype) == "int8");
  // AITER (XQ [16, 128], WQ [64, 128] (N, K), x_scale, w_scale, Out): the output's own dtype
  const char* ai = R"({"Input Dims": [[16, 128], [64, 128], [16, 1], [1, 1], [16, 64], []],
      "Input type": ["c10::Float8_e4m3fnuz", "c10::Float8_e4m3fnuz", "float", "float", "OUT", "Scalar"]})";
  auto with_out = [&](const char* name, const char* type) {
    std::string s = ai;
    s.replace(s.find("OUT"), 3, type);
    return *model_op(name, s)->bytes;
  };
  CHECK(with_out("aiter::gemm_a8w8_blockscale_ck", "c10::BFloat16") == 12288);
  CHECK(with_out("aiter::gemm_a8w8_ck", "float") == 2048 + 8192 + 16 * 64 * 4);
  // vLLM's ROCm skinny GEMM wvSplitK(in_a = weight bf16 [64, 128], in_b = x [2, 128], bias None, cu):
  // 2·2·64·128 = 32768 FLOPs; (256 + 8192 + 128)·2 = 17152 bytes; vllm::rocm_unquantized_gemm(x,
  // weight, bias) above it is aten::linear's model
  const char* sk =
      R"({"Input Dims": [[64, 128], [2, 128], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "", "Scalar"]})";
  CHECK(flops("_rocm_C::wvSplitK", sk) == 32768);
  CHECK(bytes("_rocm_C::wvSplitK", sk) == 17152);
  CHECK(flops("vllm::rocm_unquantized_gemm", R"({"Input Dims": [[2, 128], [64, 128], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", ""]})") == 32768);
  // K that does not match: no model
  CHECK_FALSE(
      model_op("_rocm_C::wvSplitK", R"({"Input Dims": [[64, 96], [2, 128]], "Input type": ["float", "float"]})"));
}

TEST_CASE("weight-only quantized GEMMs: Marlin, AWQ, GPTQ") {
  // M 16, K 4096, N 1024, 4-bit weights packed in int32: K·N/2 = 2097152 bytes. FLOPs 2·16·1024·4096
  // = 134217728; bytes A 16·4096·2 = 131072 + weights 2097152 + out 16·1024·2 = 32768: 2260992
  // vLLM's marlin_gemm(a, c?, b_q_weight [256, 2048] int32, b_bias?, b_scales, a_scales?, global_scale?,
  // b_zeros?, g_idx?, perm?, workspace, b_type_id, size_m, size_n, size_k, is_k_full, ...)
  const char* marlin =
      R"({"Input Dims": [[16, 4096], [], [256, 2048], [], [32, 1024], [], [], [], [], [], [128], [], [], [], [], [], [], [], []],
      "Input type": ["c10::Half", "", "int", "", "c10::Half", "", "", "", "", "", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "", "", "", "", "", "", "", "", "", "", "16", "16", "1024", "4096", "True", "False", "True", "False"]})";
  CHECK(flops("_C::marlin_gemm", marlin) == 134217728);
  CHECK(bytes("_C::marlin_gemm", marlin) == 2260992);
  // vLLM 0.6's gptq_marlin_gemm(a, b_q_weight, b_scales, b_zeros, g_idx, perm, workspace, b_q_type,
  // size_m, size_n, size_k, is_k_full, ...): the same numbers from the other positions
  const char* old = R"({"Input Dims": [[16, 4096], [256, 2048], [32, 1024], [], [], [], [128], [], [], [], [], []],
      "Input type": ["c10::Half", "int", "c10::Half", "", "", "", "int", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "", "", "", "", "", "", "4", "16", "1024", "4096", "True"]})";
  CHECK(bytes("sgl_kernel::gptq_marlin_gemm", old) == 2260992);
  // sizes that do not match a's [16, 4096]: no model
  std::string wrong = old;
  wrong.replace(wrong.find("\"4096\""), 6, "\"2048\"");
  CHECK_FALSE(model_op("_C::gptq_marlin_gemm", wrong));
  // awq_gemm(in_feats [16, 4096], kernel int32 [4096, 128], scaling_factors [32, 1024], zeros, split_k)
  const char* awq = R"({"Input Dims": [[16, 4096], [4096, 128], [32, 1024], [32, 128], []],
      "Input type": ["c10::Half", "int", "c10::Half", "int", "Scalar"]})";
  CHECK(flops("_C::awq_gemm", awq) == 134217728);
  CHECK(bytes("_C::awq_gemm", awq) == 2260992);
  // gptq_gemm(a, b_q_weight int32 [512, 1024] (K/8 rows of 4-bit), qzeros, scales [32, 1024], g_idx, ...)
  const char* gptq = R"({"Input Dims": [[16, 4096], [512, 1024], [32, 128], [32, 1024], [4096], [], [], []],
      "Input type": ["c10::Half", "int", "int", "c10::Half", "int", "Scalar", "Scalar", "Scalar"]})";
  CHECK(bytes("_C::gptq_gemm", gptq) == 2260992);
}

TEST_CASE("serving attention: which requests an op computed, paged decode, MLA") {
  // Step: a prefill chunk of sq 10 over sk 30 (sqsq 100, sqsk 300); three decode tokens over 50 keys.
  const tlsql::StepLengths step{10, 30, 100, 300, 3, 50, 3, 50};
  // Hq 4, Hkv 2, D 8: per (query, key) pair 4·2·(8 + 8) = 128 FLOPs; per new token Q, O, K, V
  // 4·16 + 2·16 = 96 elements, per cached key 2·16 = 32.
  auto varlen = [&](int rows) {
    return "{\"Input Dims\": [[" + std::to_string(rows) + R"(, 4, 8], [100, 16, 2, 8], [100, 16, 2, 8]],
        "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]})";
  };
  // Given the context rows only (vLLM's MLA prefill through FlashAttention): 128·300 - 64·100 =
  // 32000 FLOPs; 10·96·2 + (30 - 10)·32·2 = 3200 bytes
  auto c = model_op("_vllm_fa2_C::varlen_fwd", varlen(10), &step);
  REQUIRE(c);
  CHECK(*c->flops == 32000);
  CHECK(*c->bytes == 3200);
  // the generation rows only: 128·50 = 6400; 3·96·2 + 47·32·2 = 3584
  CHECK(*model_op("_vllm_fa2_C::varlen_fwd", varlen(3), &step)->flops == 6400);
  CHECK(*model_op("_vllm_fa2_C::varlen_fwd", varlen(3), &step)->bytes == 3584);
  // all (13 rows, or a graph's padded 16): 38400 (the unified op's test above)
  CHECK(*model_op("sgl_kernel::fwd", varlen(16), &step)->flops == 38400);
  // Contiguous keys [tokens, Hkv, D] (not a cache): a group's rows must see all its sk keys. A
  // fresh prefill (c_sk = c_sq = 10) over its 10 keys: 128·100 - 64·100 = 6400 FLOPs; the new tokens'
  // attention of a prefill over a cached prefix (30 keys, vLLM's MLA calls it apart from the
  // prefix's chunks, each with the same rows): none
  const tlsql::StepLengths fresh{10, 10, 100, 100, 3, 50, 3, 50};
  const std::string contiguous = R"({"Input Dims": [[10, 4, 8], [10, 2, 8], [10, 2, 8]],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]})";
  CHECK(*model_op("_vllm_fa3_C::fwd", contiguous, &fresh)->flops == 6400);
  CHECK_FALSE(model_op("_vllm_fa3_C::fwd", contiguous, &step));
  // 7 rows are neither group: a part the step's sums do not describe
  CHECK_FALSE(model_op("aiter::mha_varlen_fwd", varlen(7), &step));
  // rows equal to both groups' sizes: which one is not known
  const tlsql::StepLengths even{3, 30, 9, 90, 3, 50, 3, 50};
  CHECK_FALSE(model_op("aiter::mha_batch_prefill", varlen(3), &even));
  // Paged decode kernels compute the decode requests, whatever their rows: vLLM's
  // paged_attention_v1(out, query [3, 4, 8], key_cache [blocks, Hkv 2, D/x 1, block 16, x 8],
  // value_cache [blocks, 2, 8, 16], num_kv_heads 2, scale, block_tables, seq_lens, ...): 6400, 3584
  const char* v1 =
      R"({"Input Dims": [[3, 4, 8], [3, 4, 8], [100, 2, 1, 16, 8], [100, 2, 8, 16], [], [], [3, 4], [3], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "int", "int", "Scalar", "Scalar"],
      "Concrete Inputs": ["", "", "", "", "2", "0.35", "", "", "16", "64"]})";
  auto d = model_op("_C::paged_attention_v1", v1, &step);
  REQUIRE(d);
  CHECK(*d->flops == 6400);
  CHECK(*d->bytes == 3584);
  // AITER's asm kernel (Q, K [blocks, Hkv, D/x, block, x], V, ...): Hkv from K, the same
  const char* asm_pa = R"({"Input Dims": [[3, 4, 8], [100, 2, 1, 16, 8], [100, 2, 8, 16], [3, 4], [3], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "Scalar"]})";
  CHECK(*model_op("aiter::pa_fwd_asm", asm_pa, &step)->bytes == 3584);
  // A trace without Concrete Inputs: num_kv_heads from the cache's layout, k[1] = 2: the same
  const char* no_conc =
      R"({"Input Dims": [[3, 4, 8], [3, 4, 8], [100, 2, 1, 16, 8], [100, 2, 8, 16], [], [], [3, 4], [3], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "int", "int", "Scalar", "Scalar"]})";
  CHECK(*model_op("_C::paged_attention_v1", no_conc, &step)->bytes == 3584);
  // Step sums no annotation can hold (sq·sq above sq·sk): no model, not negative FLOPs
  const tlsql::StepLengths broken{10, 30, 900, 300, 3, 50, 3, 50};
  CHECK_FALSE(model_op("vllm::unified_attention", varlen(16), &broken));
  // AITER's ragged decode (out, workspace, query, key_cache, value_cache, scale, kv_indptr,
  // kv_page_indices, kv_last_page_lens, block_size, max_num_partitions, alibi, kv_cache_dtype,
  // kv_cache_layout, ...): NHD [pages, page, Hkv, D] or HND [pages, Hkv, page, D]
  auto ragged = [&](const char* cache, const char* layout) {
    return std::string(R"({"Input Dims": [[3, 4, 8], [64], [3, 4, 8], )") + cache + ", " + cache +
           R"(, [], [4], [3], [3], [], [], [], [], [], []],
        "Input type": ["c10::BFloat16", "unsigned char", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "int", "int", "int", "Scalar", "Scalar", "", "str", "str", "Scalar"],
        "Concrete Inputs": ["", "", "", "", "", "0.35", "", "", "", "16", "4", "", "auto", ")" +
           layout + R"(", "0."]})";
  };
  CHECK(*model_op("aiter::paged_attention_ragged", ragged("[100, 16, 2, 8]", "NHD"), &step)->bytes == 3584);
  CHECK(*model_op("aiter::paged_attention_ragged", ragged("[100, 2, 16, 8]", "HND"), &step)->bytes == 3584);
  // read as NHD, HND's page size 16 would be the KV heads: 4 query heads do not share 16: none
  CHECK_FALSE(model_op("aiter::paged_attention_ragged", ragged("[100, 2, 16, 8]", "NHD"), &step));
  CHECK(std::string(tlsql::op_category("aiter::paged_attention_ragged")) == "SDPA_fwd");

  // MLA decode on the latent cache (DeepSeek: kv_lora_rank 512 + rope 64 = 576), Hq 16, decode
  // only. Per pair 16·2·(576 + 512) = 34816: ·50 = 1740800 FLOPs. Bytes: Q and O 3·16·1088 +
  // the new latent rows 3·576 = 53952 elements at 2 bytes, the 47 cached rows 47·576·2: 162048
  const tlsql::StepLengths decode{0, 0, 0, 0, 3, 50, 3, 50};
  // FlashMLA fwd_kvcache_mla(q [B 3, S 1, Hq 16, 576], kcache [pages, 64, 1, 576], head_size_v 512, ...)
  const char* flashmla = R"({"Input Dims": [[3, 1, 16, 576], [100, 64, 1, 576], [], [3], [3, 4], [], [], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar", "int", "int", "Scalar", "Scalar", "int", "int"],
      "Concrete Inputs": ["", "", "512", "", "", "0.07", "True", "", ""]})";
  auto m = model_op("_flashmla_C::fwd_kvcache_mla", flashmla, &decode);
  REQUIRE(m);
  CHECK(*m->flops == 1740800);
  CHECK(*m->bytes == 162048);
  // sgl_kernel's CUTLASS MLA (out, q_nope [3, 16, 512], q_pe [3, 16, 64], kv_c_and_k_pe_cache
  // [pages, 64, 576], seq_lens, page_table, workspace, sm_scale, num_kv_splits): the same
  const char* cutlass =
      R"({"Input Dims": [[3, 16, 512], [3, 16, 512], [3, 16, 64], [100, 64, 576], [3], [3, 4], [1024], [], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "int", "int", "unsigned char", "Scalar", "Scalar"]})";
  CHECK(*model_op("sgl_kernel::cutlass_mla_decode", cutlass, &decode)->flops == 1740800);
  CHECK(*model_op("sgl_kernel::cutlass_mla_decode", cutlass, &decode)->bytes == 162048);
  // vLLM's MLA layer over the mixed step: unified_mla_attention_with_output(q [13, 16, 192],
  // kv_c_normed [13, 512], k_pe [13, 1, 64], output [13, 2048] (Dv = 2048 / 16 = 128), layer_name).
  // Decode requests on the latent cache as above: 1740800 FLOPs, 162048 bytes. The prefill chunk as
  // multi-head attention, Dqk 192, Dv 128: 16·2·320·300 - 16·320·100 = 2560000 FLOPs; Q, O
  // 10·16·320 and the expanded K, V of its 30 keys 30·16·320 (10 new at the query's dtype, 20
  // cached): (51200 + 153600)·2 = 409600 bytes.
  const char* mla = R"({"Input Dims": [[13, 16, 192], [13, 512], [13, 1, 64], [13, 2048], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "str"]})";
  auto u = model_op("vllm::unified_mla_attention_with_output", mla, &step);
  REQUIRE(u);
  CHECK(*u->flops == 1740800 + 2560000);
  CHECK(*u->bytes == 162048 + 409600);
  // unified_mla_attention records no output: its v_head_dim is unknown, so a step with prefill
  // requests has no model; a decode-only step needs none
  const char* noout = R"({"Input Dims": [[13, 16, 192], [13, 512], [13, 1, 64], []],
      "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "str"]})";
  CHECK_FALSE(model_op("vllm::unified_mla_attention", noout, &step));
  CHECK(*model_op("vllm::unified_mla_attention", noout, &decode)->flops == 1740800);
}
