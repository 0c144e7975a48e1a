// How the diff report keys names (udf/names/event_names.h), on names from real traces.
#include "udf/names/event_names.h"

#include <doctest/doctest.h>

using tlsql::normalize_name;

TEST_CASE("addresses and python line numbers are taken out") {
  CHECK(normalize_name("<built-in method apply of FunctionMeta object at 0x7cc1a2b3c4d0>") ==
        "<built-in method apply of FunctionMeta object at 0x?>");
  CHECK(normalize_name("torch/nn/modules/module.py(1501): _call_impl") == "torch/nn/modules/module.py(?): _call_impl");
  CHECK(normalize_name("/home/me/model.py(42): forward") == "/home/me/model.py(?): forward");
  CHECK(normalize_name("a 0xDEADBEEF and 0x1f2e3d") == "a 0x? and 0x?");
}

TEST_CASE("everything else stays") {
  for (const char* n : {"aten::mm", "ProfilerStep#1010", "void gemm<0x10>(int)", "model.py(x): f", "v0x1234",
                        "cudaLaunchKernel", "nn.Module: Linear_0", "Memcpy DtoH (Device -> Pinned)", "ab.py(12"}) {
    CAPTURE(n);
    CHECK(normalize_name(n) == n);
  }
}

// Kernel names as the libraries that ship them spell them (cuBLAS, CUTLASS, hipBLASLt, cuDNN,
// MIOpen, FlashAttention, PyTorch's mem-efficient attention, vLLM).
TEST_CASE("kernel_family: GEMM, attention and convolution kernels by name") {
  using tlsql::kernel_family;
  for (const char* gemm :
       {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
        "kernel__5x_cublas",
        "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT",
        "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB0", "volta_sgemm_128x64_nn",
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(Params)",
        "void deep_gemm::fp8_gemm_kernel<128u, 128u>(float*, int*, unsigned int)",
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(Params)"})
    CHECK_MESSAGE(kernel_family(gemm) == "GEMM", gemm);
  for (const char* sdpa :
       {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, "
        "true>(Flash_fwd_params)",
        "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64>>(Params)",
        "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<cute::tuple<cute::C<128>>, "
        "true>>>(flash::FlashAttnFwdSm90::Params)",
        "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t>::"
        "Params)",
        "void vllm::paged_attention_v1_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128>(Params)"})
    CHECK_MESSAGE(kernel_family(sdpa) == "SDPA", sdpa);
  for (const char* conv :
       {"void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, true>(int)",
        "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32",
        "sm80_xmma_wgrad_implicit_gemm_indexed_bf16bf16_bf16f32_f32_nhwckrsc_nhwc",
        "sm80_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc", "naive_conv_fwd_nchw",
        "igemm_fwd_gtcx_nchw_fp16_bx0_ex1_bt128x128x32", "MIOpenConvUni",
        "cudnn_infer_ampere_scudnn_128x64_relu_interior_nn_v1",
        "void "
        "cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_64x64_32x6_nhwc_align8>(Params)",
        "_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_"})
    CHECK_MESSAGE(kernel_family(conv) == "CONV", conv);
  // Neither: elementwise work, communication, copies (whatever their template arguments hold).
  for (const char* none : {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)",
                           "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Memcpy DtoH (Device -> Pinned)",
                           "void mylib::ep::internode::combine<__nv_bfloat16, 8>(__nv_bfloat16*)", "Im2d2Col_v2",
                           // inductor's kernels carry the fused ops' names, not their own family
                           "triton_poi_fused_convolution_relu_0", "MIOpenBatchNormFwdTrainSpatial",
                           // a type in a template or argument list is not the kernel's family
                           "void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu>(int)",
                           "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*)",
                           "void dot_kernel<float, 128, 0, cublasDotParams<cublasGemvTensorStridedBatched<float>>>()",
                           "triton_per_fused__scaled_dot_product_efficient_attention_1"})
    CHECK_MESSAGE(kernel_family(none).empty(), none);
}

TEST_CASE("launch_label: the frame above a launch no op encloses, then the call") {
  using tlsql::launch_label;
  using tlsql::names_launch;
  CHECK(launch_label("combine(F)", "cudaLaunchKernelExC") == "combine(F) > cudaLaunchKernelExC");
  CHECK(launch_label("", "cudaMemsetAsync") == "(no op) > cudaMemsetAsync");
  CHECK(names_launch("annotation", "dispatch(B)"));
  CHECK(names_launch("python", "mylib/ep/buffer.py(412): notify"));
  CHECK_FALSE(names_launch("annotation", "ProfilerStep#3"));  // the step, not what ran
  CHECK_FALSE(names_launch("python", "<built-in method replay of PyCapsule object at 0x7bc642558ff0>"));
  CHECK_FALSE(names_launch("runtime", "cudaLaunchKernel"));
}
