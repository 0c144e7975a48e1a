#!/usr/bin/env python3
"""Writes the hand-made traces of issue 49's reports (tests/shell/issue49_reports.py) beside this
script: annotations_nested.json (nested GPU user annotations, a kernel straddling the inner one's
end, a kernel on a stream without annotations, a second ProfilerStep whose GPU annotation HTA's step cut drops, aten::linear calls for kernel_sequences) and
cupti_counters.json (CUPTI profiler ranges, one lacking two of the SASS counters, one with none),
and torch.profiler memory timelines (export_memory_timeline): memory_timeline_small.raw.json (the raw
layout: preexisting memory, a version bump moving bytes between categories, a destroy),
memory_timeline_odd.raw.json (a null category, rows of the wrong shape) and
memory_timeline_plot.json (the [times, sizes] layout); stragglers_rank{0,1,2}.json (three ranks,
three steps, one NCCL 2.19+ all-reduce kernel per step, starting at different times).
Run: python3 tests/data/issue49_traces.py"""
import json, os

here = os.path.dirname(os.path.abspath(__file__))
T0 = 1_000_000  # µs


def x(cat, name, pid, tid, ts, dur, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": T0 + ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def launch(ts, corr, name="cudaLaunchKernel"):
    return x("cuda_runtime", name, 1, 1, ts, 4, correlation=corr)


def kernel(name, ts, dur, corr, stream=7):
    return x("kernel", name, 0, stream, ts, dur, correlation=corr, stream=stream, device=0)


meta = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]

# Host: ProfilerStep#1 [0, 1000) holds outer [10, 600) > inner [20, 200) > aten::mm; ProfilerStep#2
# [1000, 2000) launches one more kernel. GPU stream 7: ProfilerStep#1 [100, 900) > outer [110, 560)
# > inner [120, 170) and a second inner [300, 330); stream 8 has no annotation.
ev = meta + [
    x("user_annotation", "ProfilerStep#1", 1, 1, 0, 1000),
    x("user_annotation", "outer", 1, 1, 10, 590),
    x("user_annotation", "inner", 1, 1, 20, 180),
    x("cpu_op", "aten::mm", 1, 1, 30, 100),
    launch(35, 1), launch(45, 2), launch(55, 4), launch(65, 5),
    x("user_annotation", "inner", 1, 1, 250, 100),
    x("cpu_op", "aten::add", 1, 1, 260, 20),
    launch(265, 6),
    x("user_annotation", "ProfilerStep#2", 1, 1, 1000, 1000),
    x("cpu_op", "aten::mm", 1, 1, 1010, 15),
    launch(1020, 3),
    x("gpu_user_annotation", "ProfilerStep#1", 0, 7, 100, 800),
    x("gpu_user_annotation", "outer", 0, 7, 110, 450),
    x("gpu_user_annotation", "inner", 0, 7, 120, 50),
    x("gpu_user_annotation", "inner", 0, 7, 300, 30),
    x("gpu_user_annotation", "ProfilerStep#2", 0, 7, 1100, 500),
    kernel("k_inner", 125, 10, 1),          # inside inner [120, 170): inner
    kernel("k_outer", 200, 10, 2),          # outer only
    kernel("k_straddle", 160, 20, 4),       # [160, 180) overlaps inner's end: inner (HTA: overlap)
    kernel("k_other_stream", 130, 10, 5, stream=8),  # no annotation on stream 8
    kernel("k_inner2", 305, 10, 6),         # the second inner
    kernel("k_step2", 1150, 10, 3),         # launched in the last step, before HTA's cut (1100)
    # kernel_sequences: aten::linear right under each ProfilerStep (depth 1): gemm, bias, gemm in the
    # first step, gemm, bias in the second.
    x("cpu_op", "aten::linear", 1, 1, 700, 200),
    launch(710, 7), launch(720, 8), launch(730, 9),
    kernel("gemm", 600, 40, 7), kernel("bias", 640, 5, 8), kernel("gemm", 650, 40, 9),
    x("cpu_op", "aten::linear", 1, 1, 1030, 50),
    launch(1040, 10), launch(1050, 11),
    kernel("gemm", 1060, 30, 10), kernel("bias", 1095, 5, 11),
    # a 70 ms kernel on stream 7 (over 64 of the report's 1 ms buckets: its other path), launched
    # inside the first aten::mm: it overlaps all four annotations of step 1, the shortest (30 µs) wins
    launch(75, 20), kernel("k_long", 50, 70_000, 20),
]
with open(os.path.join(here, "annotations_nested.json"), "w") as f:
    json.dump({"schemaVersion": 1, "traceEvents": ev}, f, indent=1)

# CUPTI profiler mode: ranges on pid 0 / tid 0 with the counters in args, no correlation; three
# launches under aten::linear > aten::addmm, aten::relu, aten::linear > aten::addmm.
S = "smsp__sass_thread_inst_executed_op_%s_pred_on.sum"
full = {S % op: 0 for op in ["dadd", "dfma", "dmul", "hadd", "hfma", "hmul", "fadd", "ffma", "fmul"]}
r1 = dict(full, **{S % "ffma": 1000, S % "fmul": 10, S % "hfma": 7})       # 2*1000 + 10 + 2*7 = 2024
r2 = {k: v for k, v in full.items() if k not in (S % "fadd", S % "ffma")}  # 7 of 9, all 0
r2[S % "fmul"] = 300                                                      # 300
r2["dram__bytes_read.sum"] = 4096
r3 = {"dram__bytes_read.sum": 8192}                                       # no SASS counter
ev = meta + [
    x("cpu_op", "aten::linear", 1, 1, 0, 100, **{"Input Dims": [[8, 16], [32, 16], [32]]}),
    x("cpu_op", "aten::addmm", 1, 1, 5, 80, **{"Input Dims": [[32], [8, 16], [16, 32], [], []],
                                            "Input type": ["float", "float", "float", "Scalar", "Scalar"]}),
    x("cuda_runtime", "cudaLaunchKernel", 1, 1, 10, 20, correlation=11),
    x("cpu_op", "aten::relu", 1, 1, 200, 50),
    x("cuda_runtime", "cudaLaunchKernel", 1, 1, 210, 20, correlation=12),
    x("cpu_op", "aten::linear", 1, 1, 300, 100),
    x("cpu_op", "aten::addmm", 1, 1, 305, 80),
    x("cuda_runtime", "cudaLaunchKernelExC", 1, 1, 310, 20, correlation=13),
    x("cuda_profiler_range", "sgemm_a", 0, 0, 1000, 50, **r1),
    x("cuda_profiler_range", "relu_kernel", 0, 0, 2000, 50, **r2),
    x("cuda_profiler_range", "sgemm_b", 0, 0, 3000, 50, **r3),
]
with open(os.path.join(here, "cupti_counters.json"), "w") as f:
    json.dump({"schemaVersion": 1, "traceEvents": ev}, f, indent=1)

# Memory timelines: [ts ns (-1: before profiling), action (1 PREEXISTING, 2 CREATE, 3 INCREMENT_VERSION,
# 4 DESTROY), bytes, category (0 Parameter, 1 Optimizer state, 3 Temporary, 4 Activation, 7 Unknown)].
raw = [[-1, 1, 1000, 0], [-1, 1, 500, 1],
       [100_000, 2, 2000, 4], [100_000, 2, 300, 3],
       [150_000, 3, -300, 3], [150_000, 3, 300, 4],   # a version bump: Temporary -> Activation
       [200_000, 4, -2300, 4],                        # destroy
       [250_000, 2, 64, 7]]
with open(os.path.join(here, "memory_timeline_small.raw.json"), "w") as f:
    json.dump(raw, f)
odd = [[-1, 1, 1000, 0], [100_000, 2, 64, None], ["x"], [100_000, 9, 1, 0], [200_000, 2, 8, 4]]
with open(os.path.join(here, "memory_timeline_odd.raw.json"), "w") as f:
    json.dump(odd, f)
plot = [[100_000, 200_000, 300_000],
        [[1000, 500, 0, 0, 0, 0, 0, 0], [1000, 500, 0, 0, 2000, 0, 0, 0], [1000, 500, 0, 0, 0, 0, 0, 64]]]
with open(os.path.join(here, "memory_timeline_plot.json"), "w") as f:
    json.dump(plot, f)

# Stragglers: three ranks, ProfilerStep#1..3 of 1000 µs each (the last left out: HTA's step cut);
# per step an all-reduce kernel ending at 800 µs into the step on every rank, starting (µs into
# the step): step 1: 500, 600, 550; step 2: 700, 500, 600; step 3: 100, 100, 100.
starts = {0: [500, 700, 100], 1: [600, 500, 100], 2: [550, 600, 100]}
coll = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
for r, st in starts.items():
    ev = list(meta)
    for i, k in enumerate(st):
        base = 1000 * i
        ev += [x("user_annotation", f"ProfilerStep#{i + 1}", 1, 1, base, 1000),
               x("cpu_op", "nccl:all_reduce", 1, 1, base + 10, 50),
               launch(base + 20, 100 + i),
               kernel(coll, base + k, 800 - k, 100 + i, stream=20)]
    with open(os.path.join(here, f"stragglers_rank{r}.json"), "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"rank": r, "world_size": 3, "backend": "nccl"},
                   "traceEvents": ev}, f, indent=1)
