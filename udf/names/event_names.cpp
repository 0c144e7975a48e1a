#include "udf/names/event_names.h"

#include <algorithm>
#include <cctype>

#include "src/ascii_case.h"

namespace tlsql {

std::string normalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  auto digits = [&](size_t at, bool hex) {
    size_t end = at;
    while (end < name.size() &&
           (hex ? std::isxdigit((unsigned char)name[end]) : std::isdigit((unsigned char)name[end])))
      ++end;
    return end - at;
  };
  for (size_t i = 0; i < name.size();) {
    // 0x followed by 3+ hex digits, not inside a longer word (a kernel's "0x" in an identifier is rare).
    if (name[i] == '0' && i + 1 < name.size() && (name[i + 1] == 'x' || name[i + 1] == 'X') &&
        (i == 0 || !std::isalnum((unsigned char)name[i - 1]))) {
      const size_t n = digits(i + 2, true);
      if (n >= 3) {
        out += "0x?";
        i += 2 + n;
        continue;
      }
    }
    if (name.compare(i, 4, ".py(") == 0) {
      const size_t n = digits(i + 4, false);
      if (n && i + 4 + n < name.size() && name[i + 4 + n] == ')') {
        out += ".py(?)";
        i += 4 + n + 1;
        continue;
      }
    }
    out += name[i++];
  }
  return out;
}

// HTA's shorten_name as its outputs show it: names holding template or argument lists lose
// them (and any return type before the last space, and "->"); other names stay whole, as does
// a name that would shorten to nothing ("Memcpy DtoH (Device -> Pinned)").
std::string short_name(const std::string& name) {
  if (name.find_first_of("<(") == std::string::npos) return name;
  std::string s, out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 2, "->") == 0) {
      ++i;
      continue;
    }
    s += name[i];
  }
  for (char c : s) {
    if (c == '>' || c == ')') {
      char open = c == '>' ? '<' : '(';
      while (!out.empty() && out.back() != open) out.pop_back();
      if (!out.empty()) out.pop_back();
    } else {
      out += c;
    }
  }
  size_t sp = out.rfind(' ');
  std::string last = sp == std::string::npos ? out : out.substr(sp + 1);
  return last.empty() ? name : last;
}

bool names_launch(std::string_view kind, std::string_view name) {
  // A python frame names the launch when it says where in the code it is ("file.py(12): fn"); a
  // built-in method's frame ("<built-in method replay of PyCapsule object at 0x7bc6...>") says
  // only what the call says, with an address that differs between runs.
  if (kind == "python") return name.find(".py(") != std::string_view::npos;
  return kind == "annotation" && !name.starts_with("ProfilerStep#");
}

std::string launch_label(std::string_view frame, std::string_view call) {
  std::string out(frame.empty() ? std::string_view("(no op)") : frame);
  out += " > ";
  out += call;
  return out;
}

namespace {

// Case-insensitive search of an ASCII needle (kernel names are ASCII identifiers and templates).
bool has(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && ascii_lower(hay[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

}  // namespace

namespace {

// The families' names, lower case. Attention first: FlashAttention's and CUTLASS's fmha kernels
// carry cutlass / gemm in their names. Convolutions next: cuDNN's implicit-GEMM convolutions say
// gemm too, and Composable Kernel's grouped_conv kernels live in GEMM templates (MIOpen names its
// batch norms MIOpenBatchNorm*: only its Conv kernels are convolutions). Then GEMM: cuBLAS
// (...gemm..., sm90_xmma_gemm, nvjet, gemv), CUTLASS, rocBLAS / hipBLASLt (Cijk_), DeepGEMM
// (fp8_gemm...), grouped GEMMs, triton_kernels' matmul_ogs.
constexpr std::string_view kAttention[] = {"flash_fwd", "flash_bwd", "flash::", "flashattn", "flash_attn", "fmha",
                                           "attention", "sdpa",      "mha_fwd", "mha_bwd",   "flashinfer"};
constexpr std::string_view kConv[] = {
    "convolve",        "conv1d",         "conv2d",    "conv3d",      "convolution", "conv_fwd",
    "conv_bwd",        "wgrad",          "dgrad",     "miopenconv",  "gcnasmconv",  "naive_conv",
    "igemm_fwd",       "igemm_bwd",      "igemm_wrw", "cudnn::conv", "xmma_fprop",  "fprop_implicit",
    "fprop_optimized", "fprop_analytic", "scudnn",    "winograd"};
constexpr std::string_view kGemm[] = {"cutlass", "cublas", "nvjet", "cijk_", "xmma", "matmul", "gemv"};

}  // namespace

std::string_view kernel_family(std::string_view name) {
  // Only the kernel's own name counts, not its template or argument lists: those name the types it
  // works on (an elementwise kernel over fbgemm_gpu's types, a cuBLAS dot over cublasGemvParams).
  // CUTLASS's wrappers (cutlass::Kernel2<...>, cutlass::device_kernel<...>) are named by their
  // first template argument: "cutlass::device_kernel<flash::FlashAttnFwdSm90<...>>" is attention.
  const size_t open = std::min(name.find('<'), name.find('('));
  std::string_view n = name.substr(0, open);
  if (open != std::string_view::npos && name[open] == '<' && has(n, "cutlass"))
    n = name.substr(0, std::min(name.find(',', open), name.find('(', open)));
  // Inductor's generated kernels are named after the ops fused into them
  // ("triton_poi_fused_convolution_relu_0" is the elementwise tail of a convolution): a word in
  // such a name is not the family of the kernel, so they are not classified by name.
  if (n.starts_with("triton_")) return {};
  for (std::string_view a : kAttention)
    if (has(n, a)) return "SDPA";
  for (std::string_view c : kConv)
    if (has(n, c)) return "CONV";
  // "gemm", but not FBGEMM's namespace (fbgemm_gpu holds embedding and permute kernels too).
  const std::string lower = lowercase(n);
  for (size_t at = lower.find("gemm"); at != std::string::npos; at = lower.find("gemm", at + 1))
    if (at < 2 || lower.compare(at - 2, 2, "fb") != 0) return "GEMM";
  for (std::string_view g : kGemm)
    if (has(n, g)) return "GEMM";
  return {};
}

}  // namespace tlsql
