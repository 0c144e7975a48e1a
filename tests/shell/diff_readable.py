#!/usr/bin/env python3
"""Diffs that say what changed (issue 40, items 9 and 10), through the real binary, with every
expected figure worked out here by hand or from the raw JSON:
- diff_tree_ops: plain column names; an op's FLOPs go down to the group holding its longest kernel
  (a CUDA / HIP flash-attention pair whose HIP side runs a FillFunctor helper first);
- diff_tree_summary: per (op, shapes), largest |delta_us| first, a totals row;
- diff: integer counts, a totals row per device side (sums of the raw JSON), and one stderr line
  when most GPU names are on one side only.
usage: diff_readable.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "diff_readable")
os.makedirs(work, exist_ok=True)


def run(*args):
    return subprocess.run([tlsql, "-q", "--csv", *args], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def rows(*args):
    r = run(*args)
    check(r.returncode == 0, f"{' '.join(os.path.basename(a) for a in args[:4])}: exit 0 {r.stderr.strip()[:300]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


class Trace:
    """Events written as a tree: op(name, children, args) / launch(call, kernel, µs)."""

    def __init__(self, step, device):
        self.ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                    "ts": 0, "dur": 100000, "args": {}}]
        self.device = device
        self.t, self.gpu_t, self.corr = 10, 50000, 0

    def op(self, name, *children, args=None):
        me = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": self.t, "args": args or {}}
        self.ev.append(me)
        self.t += 1
        for c in children:
            c()
        me["dur"] = self.t - me["ts"]
        self.t += 1
        return lambda: None

    def sub(self, name, *children, args=None):  # an op as a child of another
        return lambda: self.op(name, *children, args=args)

    def launch(self, call, kernel, us=10):
        def add():
            self.corr += 1
            self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": 1, "tid": 1, "ts": self.t,
                            "dur": 1, "args": {"correlation": self.corr}})
            self.ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": self.gpu_t,
                            "dur": us, "args": {"correlation": self.corr, "device": 0, "stream": 7}})
            self.t += 2
            self.gpu_t += us + 10
        return add

    def write(self, name):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            json.dump({"deviceProperties": [{"id": 0, "name": self.device}], "traceEvents": self.ev}, f)
        return path


IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")

# ---- diff_tree_ops: the FLOPs carried down past a helper kernel -----------------------------------
# SDPA forward on [B, H, N, d] = [2, 8, 128, 64] q, k, v (no causal flag): QK^T and PV, two GEMMs of
# 2·B·H·N·N·d FLOPs each: 4 · 2 · 8 · 128 · 128 · 64 = 67,108,864 FLOPs (docs/perf_models.md).
FLOPS = 4 * 2 * 8 * 128 * 128 * 64
sdpa = {"Input Dims": [[2, 8, 128, 64]] * 3 + [[], [], [], []],
        "Input type": ["c10::BFloat16"] * 3 + ["Scalar", "Scalar", "Scalar", ""]}
a, b = Trace(1, "NVIDIA H100 80GB HBM3"), Trace(3, "AMD Instinct MI300X")
# CUDA: the op's one kernel. HIP (as ROCm's flash attention does): a zeros buffer filled by a
# FillFunctor kernel (its ops on this side only, so its lowest common ancestor is the SDPA op),
# then the attention kernel under _flash_attention_forward (matched: its own group).
a.op("aten::_scaled_dot_product_flash_attention",
     a.sub("aten::_flash_attention_forward", a.launch("cudaLaunchKernel", "flash_fwd_kernel", 100)), args=sdpa)
b.op("aten::_scaled_dot_product_flash_attention",
     b.sub("aten::zeros", b.sub("aten::zero_", b.sub("aten::fill_", b.launch("hipLaunchKernel", "FillFunctor_kernel", 5)))),
     b.sub("aten::_flash_attention_forward", b.launch("hipModuleLaunchKernel", "attn_fwd", 150)), args=sdpa)
pa, pb = a.write("cuda_flash.json"), b.write("hip_flash.json")
ops = rows(pa, "--diff", pb, "--report", "diff_tree_ops")
check(ops and all(IDENT.match(c) for c in ops[0]), f"diff_tree_ops: plain column names ({list(ops[0]) if ops else []})")
by = {r["lowest_common_ancestor_name"]: r for r in ops}
fa = by.get("aten::_flash_attention_forward", {})
check((fa.get("flops_trace1"), fa.get("flops_trace2")) == (repr(float(FLOPS)),) * 2,
      f"flash attention: the SDPA op's {FLOPS:,} FLOPs on both sides, the HIP one past its FillFunctor "
      f"({fa.get('flops_trace1')}, {fa.get('flops_trace2')})")
check((fa.get("kernel_time_trace1_us"), fa.get("kernel_time_trace2_us"), fa.get("speedup"), fa.get("delta_us")) ==
      ("100.0", "150.0", "0.667", "50.0"), f"flash attention: 100 vs 150 µs, speedup 100/150, delta +50 ({fa})")
fill = by.get("aten::_scaled_dot_product_flash_attention", {})
check(fill.get("name") == "aten::fill_" and fill.get("kernel_time_trace2_us") == "5.0" and
      (fill.get("flops_trace1"), fill.get("flops_trace2")) == ("", ""),
      f"the FillFunctor's group: 5 µs, no FLOPs (the attention's are where its kernel is) ({fill})")
# The totals row: every group's kernels and the counted op's FLOPs once per side.
summ = rows(pa, "--diff", pb, "--report", "diff_tree_summary")
tot = summ[-1] if summ else {}
check(tot.get("name") == "(total)" and
      (tot.get("num_kernels_trace1"), tot.get("num_kernels_trace2"), tot.get("kernel_time_trace1_us"),
       tot.get("kernel_time_trace2_us"), tot.get("delta_us"), tot.get("gflop_trace1"), tot.get("gflop_trace2")) ==
      ("1", "2", "100.0", "155.0", "55.0", repr(round(FLOPS / 1e9, 3)), repr(round(FLOPS / 1e9, 3))),
      f"diff_tree_summary totals: 1 vs 2 kernels, 100 vs 155 µs, the FLOPs once per side ({tot})")
# TFLOP/s = FLOPs over the kernel time of the groups that have them: 67,108,864 / 100 µs = 0.671
# TFLOP/s; / 150 µs = 0.447, in the totals too (the FillFunctor's 5 µs have no FLOPs: left out).
check((tot.get("tflops_trace1"), tot.get("tflops_trace2")) == ("0.671", "0.447"),
      f"diff_tree_summary totals: TFLOP/s over the modeled groups' time ({tot})")
fa = next((r for r in summ if r["lowest_common_ancestor_name"] == "aten::_flash_attention_forward"), {})
check((fa.get("tflops_trace1"), fa.get("tflops_trace2")) == ("0.671", "0.447"),
      f"diff_tree_summary: TFLOP/s per side ({fa.get('tflops_trace1')}, {fa.get('tflops_trace2')})")
# The same with the helper inside _flash_attention_forward (the other place ROCm puts it): one
# group holds both HIP kernels, and the FLOPs.
b = Trace(3, "AMD Instinct MI300X")
b.op("aten::_scaled_dot_product_flash_attention",
     b.sub("aten::_flash_attention_forward",
           b.sub("aten::zeros", b.sub("aten::fill_", b.launch("hipLaunchKernel", "FillFunctor_kernel", 5))),
           b.launch("hipModuleLaunchKernel", "attn_fwd", 150)), args=sdpa)
pb2 = b.write("hip_flash_inside.json")
fa = {r["lowest_common_ancestor_name"]: r for r in rows(pa, "--diff", pb2, "--report", "diff_tree_ops")}
fa = fa.get("aten::_flash_attention_forward", {})
check((fa.get("num_kernels_trace2"), fa.get("kernel_time_trace2_us"), fa.get("flops_trace1"), fa.get("flops_trace2")) ==
      ("2", "155.0", repr(float(FLOPS)), repr(float(FLOPS))),
      f"flash attention with the fill inside: 2 HIP kernels, 155 µs, the FLOPs on both sides ({fa})")
# One stderr line: the two sides share no GPU name (3 names in all).
r = run(pa, "--diff", pb)
check(r.returncode == 0 and r.stderr.count("\n") == 1 and r.stderr.startswith("diff: 3 of 3 GPU names are on one side") and
      "NVIDIA H100 80GB HBM3 vs AMD Instinct MI300X" in r.stderr and "diff_tree_ops" in r.stderr and
      "diff_shapes" in r.stderr, f"diff across vendors: one line pointing at diff_tree_ops / diff_shapes ({r.stderr!r})")
r = run(pa, "--diff", pa)
check(r.returncode == 0 and r.stderr == "", f"diff of a trace with itself: nothing on stderr ({r.stderr!r})")

# ---- diff_tree_summary: per (op, shapes) --------------------------------------------------------
# The pair of tests/shell/diff_tree.py (every kernel 10 µs): A (CUDA) linear > addmm > sgemm; relu;
# conv2d > cudnn_convolution > 2 kernels; gelu x2. B (HIP) linear > [_to_copy > copy, addmm > gemm];
# no relu; conv2d > miopen_convolution > 3 kernels; gelu x3. Groups (lowest common ancestors): addmm
# 10 | 10; linear 0 | 10 (B's cast: name aten::_to_copy); conv2d 20 | 30; two gelus 10 | 10 each;
# the step: A's relu kernel and B's third gelu, 10 | 10 (name: trace1's op, aten::relu).
# Summary, largest |delta| first, then trace1 time: cudnn (+10, 20), _to_copy (+10, 0), gelu (0,
# 20, 2 instances), addmm (0, 10), relu (0, 10); totals: 6 groups, 6 vs 8 kernels, 60 vs 80 µs.
a, b = Trace(1, "NVIDIA T4"), Trace(7, "AMD Instinct MI210")
a.op("aten::linear", a.sub("aten::addmm", a.launch("cudaLaunchKernel", "sgemm_fp32")))
a.op("aten::relu", a.launch("cudaLaunchKernel", "relu_kernel"), a.sub("aten::empty"))
a.op("aten::conv2d", a.sub("aten::cudnn_convolution", a.launch("cudaLaunchKernel", "cudnn_a"),
                           a.launch("cudaLaunchKernel", "cudnn_b")))
for _ in range(2):
    a.op("aten::gelu", a.launch("cudaLaunchKernel", "gelu_kernel"))
b.op("aten::linear", b.sub("aten::_to_copy", b.launch("hipLaunchKernel", "copy_kernel")),
     b.sub("aten::addmm", b.launch("hipLaunchKernel", "Cijk_gemm_fp16")))
b.op("aten::conv2d", b.sub("aten::miopen_convolution", b.launch("hipLaunchKernel", "miopen_a"),
                           b.launch("hipLaunchKernel", "miopen_b"), b.launch("hipLaunchKernel", "miopen_c")))
for _ in range(3):
    b.op("aten::gelu", b.launch("hipLaunchKernel", "gelu_kernel"))
pa, pb = a.write("cuda.json"), b.write("hip.json")
summ = rows(pa, "--diff", pb, "--report", "diff_tree_summary")
got = [(r["name"], r["lowest_common_ancestor_name"], r["count"], r["num_kernels_trace1"], r["num_kernels_trace2"],
        r["kernel_time_trace1_us"], r["kernel_time_trace2_us"], r["delta_us"], r["speedup"]) for r in summ]
want = [("aten::cudnn_convolution", "aten::conv2d", "1", "2", "3", "20.0", "30.0", "10.0", "0.667"),
        ("aten::_to_copy", "aten::linear", "1", "0", "1", "0.0", "10.0", "10.0", "0.0"),
        ("aten::gelu", "aten::gelu", "2", "2", "2", "20.0", "20.0", "0.0", "1.0"),
        ("aten::addmm", "aten::addmm", "1", "1", "1", "10.0", "10.0", "0.0", "1.0"),
        ("aten::relu", "ProfilerStep#1", "1", "1", "1", "10.0", "10.0", "0.0", "1.0"),
        ("(total)", "", "6", "6", "8", "60.0", "80.0", "20.0", "0.75")]
check(got == want, f"diff_tree_summary: per (op, shapes), largest |delta| first, totals last\n  {got}")
check(summ and all(IDENT.match(c) for c in summ[0]), "diff_tree_summary: plain column names")
ex = {r["name"]: r["ex_lca_uid"] for r in summ}
check(ex.get("aten::cudnn_convolution") == str(next(i for i, e in enumerate(a.ev) if e["name"] == "aten::conv2d")),
      f"diff_tree_summary: ex_lca_uid is the instance's ancestor in main ({ex})")
s2 = rows(pa, "--diff", pb, "-c", ".parameter set @top 1", "-c", ".parameter set @totals 0", "--report",
          "diff_tree_summary")
check([r["name"] for r in s2] == ["aten::cudnn_convolution"], f"@top 1, @totals 0: one row, no totals ({s2})")
s3 = rows(pa, "--diff", pb, "-c", ".parameter set @top 1", "--report", "diff_tree_summary")
check([(r["name"], r["count"]) for r in s3] == [("aten::cudnn_convolution", "1"), ("(total)", "6")],
      f"@top 1: the totals still sum every group ({s3})")

# ---- diff: integer counts and a totals row per device side ---------------------------------------
# Two traces without ProfilerSteps (the diff then compares all their events): the totals are the
# raw JSON's event counts and summed durations per side, CPU (ops, annotations, runtime calls) and
# GPU (kernels), worked out here.


def raw(path):
    with (gzip.open(path) if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def side_totals(events):
    cpu = {"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver"}
    gpu = {"kernel", "gpu_memcpy", "gpu_memset"}
    out = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        side = "CPU" if e.get("cat") in cpu else "GPU" if e.get("cat") in gpu else None
        if side:
            n, us = out.get(side, (0, 0))
            out[side] = (n + 1, us + e["dur"])
    return out


for t in (a, b):
    t.ev = t.ev[1:]  # no ProfilerStep
pa, pb = a.write("cuda_nostep.json"), b.write("hip_nostep.json")
d = rows(pa, "--diff", pb, "-c", ".parameter set @top 'all'", "--report", "diff")
ta, tb = side_totals(raw(pa)), side_totals(raw(pb))
totals = [r for r in d if r["name"] == "(total)"]
want = [(side, str(ta[side][0]), repr(float(ta[side][1])), str(tb[side][0]), repr(float(tb[side][1])),
         str(tb[side][0] - ta[side][0])) for side in ("GPU", "CPU")]
got = [(r["device"], r["Control_counts"], r["Control_total_duration"], r["Test_counts"], r["Test_total_duration"],
        r["diff_counts"]) for r in totals]
check(got == want and d[-2:] == totals, f"diff: a totals row per device side, last, from the raw JSON\n  {got}\n  {want}")
counts = [r[k] for r in d for k in ("Control_counts", "Test_counts", "diff_counts")]
check(counts and all(re.fullmatch(r"-?\d+", c) for c in counts), f"diff: counts are integers ({counts[:6]})")
d = rows(pa, "--diff", pb, "-c", ".parameter set @totals 0", "--report", "diff")
check(d and all(r["name"] != "(total)" for r in d), "diff @totals 0: no totals rows")
d = rows(pa, "--diff", pb, "-c", ".parameter set @device 'GPU'", "--report", "diff")
check([r["device"] for r in d if r["name"] == "(total)"] == ["GPU"], "diff @device 'GPU': the GPU totals row only")

# A shared cross-vendor pair: the hint's counts are the distinct kernel names of each raw JSON.
pa = os.path.join(shared, "traces", "tracelens", "h100", "bert_small_uncased.json.gz")
pb = os.path.join(shared, "traces", "tracelens", "mi300", "normalization_layer_test.json.gz")
if os.path.exists(pa) and os.path.exists(pb):
    na = {e["name"] for e in raw(pa) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    nb = {e["name"] for e in raw(pb) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    r = run(pa, "--diff", pb, "--report", "diff")
    check(r.stderr.startswith(f"diff: {len(na ^ nb)} of {len(na | nb)} GPU names are on one side only"),
          f"bert (H100) vs normalization (MI300): {len(na ^ nb)} of {len(na | nb)} ({r.stderr.strip()})")
else:
    print("skip: the shared H100 / MI300 traces are absent")

finish()
