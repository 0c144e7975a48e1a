// Event names as a diff keys them. Two runs of the same program differ in what is not the program:
// object addresses ("<function Module.forward at 0x7cc1a2b3c4d0>") and the line numbers of python
// frames ("torch/nn/modules/module.py(1501): _call_impl" after a torch upgrade). The diff report
// matches names with those taken out (diff's @normalize, on by default).
#pragma once

#include <string>
#include <string_view>

namespace tlsql {

// `name` with every hexadecimal address "0x..." (3 or more digits) written "0x?" and the line number
// of a python frame location ".py(123)" written ".py(?)". Other names come back unchanged.
std::string normalize_name(std::string_view name);

// HTA's shorten_name (use_short_name): a name holding template or argument lists without them,
// and without a return type; other names whole ("aten::mm", "Memcpy DtoH (Device -> Pinned)").
std::string short_name(const std::string& name);

// What names GPU work that no op encloses (issue 46). Kernels launched by a runtime call
// (cudaLaunchKernelExC, ...) straight under a record_function annotation or a python frame have
// no op above them, and a runtime call is no op: the innermost annotation or python frame above
// the call names the work, written "frame > call" ("combine(F) > cudaLaunchKernelExC": what the
// user wrote, then how it launched; diff_tree_summary shows the same pair as its row's lowest
// common ancestor and launcher). A ProfilerStep#N annotation is passed over (it says which step,
// not what ran), and so is a python frame without a ".py(" location (a built-in method's, which
// says no more than the call); with no frame left the label is "(no op) > call".
// Whether an event of this kind (event.kind) and name can name a launch:
bool names_launch(std::string_view kind, std::string_view name);
// The label: frame empty when none was found.
std::string launch_label(std::string_view frame, std::string_view call);

// The family a GPU kernel's name says (issue 46): "GEMM", "SDPA" (attention) or "CONV", else
// empty. For work whose op says nothing (a custom autograd Function, an annotation: op_category
// 'other', no Input Dims), so that the gemm / sdpa / conv sheets still list it. Only names that
// public libraries ship: cuBLAS / cuBLASLt (gemm, sm90_xmma, nvjet), CUTLASS, rocBLAS /
// hipBLASLt (Cijk_), DeepGEMM-style fp8_gemm, grouped_gemm; FlashAttention (flash_fwd /
// flash_bwd), xformers / CUTLASS fmha, cuDNN and PyTorch sdpa, vLLM / FlashInfer paged_attention;
// cuDNN convolutions (implicit_convolve, xmma_fprop / dgrad / wgrad, scudnn, winograd), MIOpen
// (MIOpenConv*, igemm, naive_conv). Inductor's triton_* kernels, named after the ops fused into them,
// are none. One list, kernel_family's; the kernel-class rules may take it over.
std::string_view kernel_family(std::string_view kernel_name);

}  // namespace tlsql
