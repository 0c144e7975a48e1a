#!/usr/bin/env python3
"""Writes custom_launches.json: a hand-made trace of work no aten op encloses (issue 46).

An expert-parallel step as frontier labs profile it: a custom communication library's kernels
(mylib::ep::...) launched by cudaLaunchKernelExC directly under record_function annotations
(dispatch(F), combine(F), combine(B)) or a python frame; GEMM and flash-attention kernels under
custom autograd Functions (cpu_op MyFP8Linear / FlashAttnFunc: op_category 'other', no Input Dims);
one aten::mm with shapes (a GEMM with a FLOPs model) and one aten::add. Three streams (7 compute,
20 communication, 24 side). Each launch carries its correlation id and an ac2g flow pair, the
way Kineto writes them. Times are µs.

Run: python3 tests/data/custom_launches.py > tests/data/custom_launches.json
"""
import json

HOST = dict(pid=1, tid=1)
events = []
corr = 100


def x(cat, name, ts, dur, args=None, **where):
    e = {"ph": "X", "cat": cat, "name": name, **(where or HOST), "ts": ts, "dur": dur}
    if args is not None:
        e["args"] = args
    events.append(e)


def launch(call, ts, kernel, stream, kts, kdur):
    """A runtime call at ts (4 µs) launching `kernel` on `stream` at kts for kdur, with its flow."""
    global corr
    corr += 1
    x("cuda_runtime", call, ts, 4, {"correlation": corr})
    events.append({"ph": "s", "id": corr, **HOST, "ts": ts, "cat": "ac2g", "name": "ac2g"})
    x("kernel", kernel, kts, kdur, {"correlation": corr, "device": 0, "stream": stream}, pid=0, tid=stream)
    events.append({"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": kts, "cat": "ac2g", "name": "ac2g",
                   "bp": "e"})


DISPATCH = "void mylib::ep::internode::dispatch<8, 1024>(int*, __nv_bfloat16*, int const*)"
COMBINE = "void mylib::ep::internode::combine<__nv_bfloat16, 8>(__nv_bfloat16*, float const*, int const*)"
NOTIFY = "void mylib::ep::internode::notify_dispatch<8>(int const*, int*)"
XMMA = ("sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1_"
        "execute_segment_k_off_kernel__5x_cublas")
CUTLASS = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(Params)"
FLASH = ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, "
         "false, true, false, false, true, true, false>(Flash_fwd_params)")
MM = "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn"
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, float*)"

# The step is 200 µs on the host; the GPU work it launches runs to 780 µs (past its end).
x("user_annotation", "ProfilerStep#1", 0, 200)
# dispatch(F) > cudaLaunchKernelExC > dispatch kernel on the communication stream
x("user_annotation", "dispatch(F)", 10, 20)
launch("cudaLaunchKernelExC", 12, DISPATCH, 20, 50, 350)             # [50, 400)
# a custom autograd Function with two GEMM kernels, no Input Dims
x("cpu_op", "MyFP8Linear", 40, 30, {"External id": 1})
launch("cudaLaunchKernel", 42, XMMA, 7, 60, 200)                      # [60, 260)
launch("cudaLaunchKernel", 50, CUTLASS, 7, 260, 100)                  # [260, 360)
# flash attention under a custom Function
x("cpu_op", "FlashAttnFunc", 80, 20, {"External id": 2})
launch("cudaLaunchKernel", 82, FLASH, 7, 360, 150)                    # [360, 510)
# combine(F) > cudaLaunchKernelExC > combine kernel
x("user_annotation", "combine(F)", 110, 20)
launch("cudaLaunchKernelExC", 112, COMBINE, 20, 520, 120)             # [520, 640)
# an aten GEMM with shapes: the one op with a FLOPs model (2*64*128*256 = 4,194,304 FLOP)
x("cpu_op", "aten::mm", 135, 10, {"External id": 3, "Input Dims": [[64, 128], [128, 256]],
                                  "Input type": ["c10::BFloat16", "c10::BFloat16"],
                                  "Input Strides": [[128, 1], [256, 1]], "Concrete Inputs": ["", ""]})
launch("cudaLaunchKernel", 137, MM, 7, 520, 20)                       # [520, 540)
x("cpu_op", "aten::add", 148, 8, {"External id": 4, "Input Dims": [[1024], [1024], []],
                                  "Input type": ["float", "float", "Scalar"],
                                  "Input Strides": [[1], [1], []], "Concrete Inputs": ["", "", "1"]})
launch("cudaLaunchKernel", 150, ADD, 24, 530, 10)                     # [530, 540)
# a launch under a python frame only (the library's own python, no annotation)
x("python_function", "mylib/ep/buffer.py(412): notify", 158, 12, {"Python id": 7})
launch("cudaLaunchKernelExC", 160, NOTIFY, 20, 650, 30)               # [650, 680)
# combine(B) > cudaLaunchKernelExC > combine kernel, second instance of the same kernel
x("user_annotation", "combine(B)", 175, 20)
launch("cudaLaunchKernelExC", 177, COMBINE, 20, 700, 80)              # [700, 780)

events.sort(key=lambda e: (e["ts"], e["ph"] != "X"))
doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
       "traceEvents": events}
print("{\"schemaVersion\": 1, \"deviceProperties\": " + json.dumps(doc["deviceProperties"]) +
      ", \"traceEvents\": [\n" + ",\n".join(json.dumps(e) for e in events) + "\n]}")
