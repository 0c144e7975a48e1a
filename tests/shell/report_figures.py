#!/usr/bin/env python3
"""Issue 40, items 1-4: one definition per figure in every report, and what was not modeled said.
Through the real binary; the expected figures come from hand arithmetic written next to each
check, from the raw JSON of shared traces read here, or from TraceLens's / HTA's outputs.
  1. tflops / gbps / achieved_pct of a kernel = the FLOPs (bytes) of its launches that have them
     over those launches' time, in kernels, diff_kernels, tflops(uid) and the sheets alike; the
     kernels report shows how many launches that is (modeled_count).
  2. a memset beside a GEMM (cuBLAS's workspace) does not take the GEMM kernel's numbers away.
  3. kernels @steps (HTA's kernel breakdown drops the last ProfilerStep); ops.count = instances
     that ran GPU work (TraceLens's Count); gflop a total, gflop_per_call per call; every column
     name of the perf reports in docs/reports.md's glossary.
  4. modeled_gpu_pct in ops, mfu and summary, a stderr note below half, and the reason a
     convolution without Concrete Inputs has no model.
usage: report_figures.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, re, subprocess, sys
from decimal import Decimal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "report_figures")
os.makedirs(work, exist_ok=True)
docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "reports.md")


def run(path, *args):
    r = subprocess.run([tlsql, path, "--csv", *args], capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"{os.path.basename(path)} {' '.join(args)[:80]}: exit 0 {r.stderr.strip()[:200]}")
    return list(csv.DictReader(io.StringIO(r.stdout))), r.stderr


def report(path, name, *params):
    args = []
    for k, v in params:
        args += ["-c", f".parameter set {k} {v}"]
    return run(path, *args, "--report", name)


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=Decimal)["traceEvents"]


def ns(v):
    return int(Decimal(str(v)) * 1000)


def num(s):
    return None if s in ("", None) else float(s)


def x(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}


def gpu(cat, name, ts, dur, corr):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "device": 0, "stream": 7}}


H100 = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0, "numSms": 132}]


def write(name, events):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "deviceProperties": H100}, f)
    return path


# ---- Hand-made H100 trace (gpu_spec: H100 SXM bf16 dense 989.4 TFLOP/s, HBM3 3.35 TB/s, from NVIDIA's
# datasheet). aten::mm of two bf16 [1024, 1024]: 2 * 1024^3 = 2,147,483,648 FLOPs, (3 * 1024^2) * 2 =
# 6,291,456 bytes. Each mm launches cuBLAS's workspace Memset (1 us) and the GEMM kernel gemm_k (10 us,
# then 30 us); a third gemm_k (40 us) was launched before the window (no runtime call, no op).
# split_mm launches two kernels (split-K: gemm_part 20 us, reduce_part 5 us): neither takes its numbers.
# aten::mul on the host (no launch) beside one that runs mul_k (4 us).
MM = {"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}
MUL = {"Input Dims": [[1024], [1024]], "Input type": ["float", "float"]}
ev = [x("user_annotation", "ProfilerStep#1", 0, 1000),
      x("cpu_op", "aten::mm", 10, 50, **MM),
      x("cuda_runtime", "cudaMemsetAsync", 12, 2, correlation=1), gpu("gpu_memset", "Memset (Device)", 100, 1, 1),
      x("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=2), gpu("kernel", "gemm_k", 101, 10, 2),
      x("cpu_op", "aten::mm", 100, 50, **MM),
      x("cuda_runtime", "cudaMemsetAsync", 102, 2, correlation=3), gpu("gpu_memset", "Memset (Device)", 200, 1, 3),
      x("cuda_runtime", "cudaLaunchKernel", 110, 5, correlation=4), gpu("kernel", "gemm_k", 201, 30, 4),
      gpu("kernel", "gemm_k", 300, 40, 99),
      x("cpu_op", "aten::mm", 200, 50, **MM),
      x("cuda_runtime", "cudaLaunchKernel", 210, 5, correlation=5), gpu("kernel", "gemm_part", 400, 20, 5),
      x("cuda_runtime", "cudaLaunchKernel", 220, 5, correlation=6), gpu("kernel", "reduce_part", 420, 5, 6),
      x("cpu_op", "aten::mul", 300, 10, **MUL),
      x("cpu_op", "aten::mul", 320, 10, **MUL),
      x("cuda_runtime", "cudaLaunchKernel", 322, 5, correlation=7), gpu("kernel", "mul_k", 500, 4, 7)]
hand = write("one_definition.json", ev)
F, B = 2 * 1024 ** 3, 3 * 1024 ** 2 * 2

kernels = {r["name"]: r for r in report(hand, "kernels")[0]}
k = kernels.get("gemm_k", {})
# modeled: the 10 and 30 us launches: 2F / 40,000 ns / 1e3 = 107.374 TFLOP/s; 2B / 40,000 ns = 314.573 GB/s;
# intensity F / B = 341.3 >= ridge 989.4 / 3.35 = 295.3: compute-bound, 100 * 107.374 / 989.4 = 10.85 %.
# (The old figures: 2F over all 80 us = 53.687; the mean of the two launches' % = (21.70 + 7.23) / 2 = 14.47.)
tf = round(2 * F / 40000 / 1e3, 3)
check((k.get("count"), k.get("modeled_count"), num(k.get("tflops")), num(k.get("gbps")), num(k.get("achieved_pct")))
      == ("3", "2", tf, round(2 * B / 40000, 3), round(100 * 2 * F / 40000 / 1e3 / 989.4, 2)),
      f"kernels gemm_k: 3 launches, 2 with numbers, {tf} TFLOP/s over their 40 us (got {k})")
check(kernels.get("gemm_part", {}).get("modeled_count") == "0" and kernels.get("reduce_part", {}).get("tflops") == "",
      "kernels: an op that launched two kernels gives neither its numbers (split-K)")
rows, _ = run(hand, "-c", "SELECT tflops(uid) AS t, achieved_pct(uid) AS p FROM kernel WHERE name = 'gemm_k' ORDER BY uid")
check([round(num(r["t"]) or 0, 3) for r in rows] == [round(F / 10000 / 1e3, 3), round(F / 30000 / 1e3, 3), 0],
      f"tflops(uid): each launch is a group of one: F / 10 us, F / 30 us, NULL ({rows})")
r = subprocess.run([tlsql, hand, "--diff", hand, "--csv", "-c", ".parameter set @name 'gemm_k'", "--report",
                    "diff_kernels"], capture_output=True, text=True, timeout=120)
d = (list(csv.DictReader(io.StringIO(r.stdout))) or [{}])[0]
# diff_kernels: the same definition: 107.374 TFLOP/s, 314.6 GB/s, flops_pct 10.85, bw_pct 100 * 0.314573 / 3.35 = 9.39
check((num(d.get("main_tflops")), num(d.get("main_gbps")), num(d.get("main_flops_pct")), num(d.get("main_bw_pct")),
       d.get("main_count"), d.get("other_tflops")) ==
      (tf, round(2 * B / 40000, 1), round(100 * tf / 989.4, 2), round(100 * 2 * B / 40000 / 1e3 / 3.35, 2), "3",
       d.get("main_tflops")),
      f"diff_kernels gemm_k: the kernels report's figures on both sides ({d})")

ops = {r["name"]: r for r in report(hand, "ops")[0]}
mm, mul = ops.get("aten::mm", {}), ops.get("aten::mul", {})
# aten::mm: three instances ran GPU work: 1 + 10, 1 + 30 and the split 20 + 5 us = 67 us; two have a model
# of their own and FLOPs (42 us), the split one too (its own model: it launched its kernels itself):
# gflop = 3F / 1e9 = 6.442451; tflops = 3F / 67,000 ns / 1e3 = 96.157.
check((mm.get("count"), num(mm.get("gpu_us")), num(mm.get("gflop")), num(mm.get("tflops")), num(mm.get("modeled_gpu_pct")))
      == ("3", 67.0, round(3 * F / 1e9, 6), round(3 * F / 67000 / 1e3, 3), 100.0),
      f"ops aten::mm: 3 instances, 67 us, gflop the total, tflops over their time ({mm})")
check(mul.get("count") == "1" and num(mul.get("gpu_us")) == 4.0 and num(mul.get("gflop")) == round(1024 / 1e9, 6),
      f"ops aten::mul: the instance on the host is not counted (count 1, 4 us, 1024 FLOPs of the one that ran) ({mul})")
gemm = report(hand, "gemm")[0]
g = gemm[0] if gemm else {}
# gemm sheet, one shape: 3 calls, gflop_per_call F / 1e9 = 2.147484, the same TFLOP/s as the ops row.
check(len(gemm) == 1 and (g.get("count"), num(g.get("gflop_per_call")), num(g.get("gpu_us")), num(g.get("tflops")))
      == ("3", round(F / 1e9, 6), 67.0, round(3 * F / 67000 / 1e3, 3)),
      f"gemm: gflop_per_call is one call's, tflops the sums' ({gemm})")

# ---- @steps: two ProfilerSteps; the last one's kernel (launched in it) is left out by 'complete'.
steps = write("steps.json", [
    x("user_annotation", "ProfilerStep#1", 0, 100), x("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1),
    gpu("kernel", "k", 20, 7, 1),
    x("user_annotation", "ProfilerStep#2", 100, 100), x("cuda_runtime", "cudaLaunchKernel", 110, 5, correlation=2),
    gpu("kernel", "k", 120, 11, 2), gpu("kernel", "k", 150, 13, 42)])
want = {"all": ("3", 31.0), "'complete'": ("1", 7.0), "2": ("1", 11.0)}
for steps_param, (n, us) in want.items():
    got = report(steps, "kernels", ("@steps", steps_param))[0]
    check([(r["count"], num(r["total_us"])) for r in got] == [(n, us)],
          f"kernels @steps {steps_param}: {n} launches, {us} us ({got})")

# ---- Item 4: a 2021-style step: a convolution without Concrete Inputs (600 us) and a bf16 mm (400 us).
legacy = write("no_concrete.json", [
    x("user_annotation", "ProfilerStep#5", 0, 2000),
    x("cpu_op", "aten::cudnn_convolution", 10, 50, **{"Input Dims": [[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []],
                                                      "Input type": ["float", "float", "", "", "", "", ""]}),
    x("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=1), gpu("kernel", "conv_k", 100, 600, 1),
    x("cpu_op", "aten::mm", 100, 50, **MM),
    x("cuda_runtime", "cudaLaunchKernel", 110, 5, correlation=2), gpu("kernel", "gemm_k", 800, 400, 2)])
ops, err = report(legacy, "ops")
conv = next((r for r in ops if r["name"] == "aten::cudnn_convolution"), {})
check(conv.get("modeled_gpu_pct") == "0.0" and conv.get("note") == "no model: Concrete Inputs missing"
      and conv.get("gflop") == "", f"ops: the convolution says why it has no model ({conv})")
# 400 / (600 + 400) = 40 % of the GPU time had a model: one line on stderr, naming the convolution (60 %).
note = "40% of the GPU time ran in ops with a FLOPs model"
check(err.startswith("ops: " + note) and "(the largest part: aten::cudnn_convolution, 60%, no model: Concrete Inputs missing)" in err
      and err.count("\n") == 1, f"ops: one stderr line below half ({err.strip()})")
mfu, err = report(legacy, "mfu")
check(mfu and mfu[0].get("modeled_gpu_pct") == "40.0" and err.startswith("mfu: " + note + "; the rest adds no FLOPs to MFU"),
      f"mfu: modeled_gpu_pct 40.0 and the note ({mfu}, {err.strip()})")
summ, err = report(legacy, "summary")
check(summ and summ[0].get("modeled_gpu_pct") == "40.0" and err.startswith("summary: " + note),
      f"summary: modeled_gpu_pct 40.0 and the note ({summ}, {err.strip()})")
_, err = report(hand, "ops")
check(err == "", f"no note when most GPU time is modeled ({err.strip()})")
_, err = report(legacy, "conv")
check("Concrete Inputs missing" in err, f"conv: empty, and says the convolutions lack Concrete Inputs ({err.strip()})")

# ---- One meaning per column name: every column of the perf reports is in docs/reports.md's glossary.
text = open(docs).read()
glossary = text[text.index("## Column names"):]
names = {n for cell in re.findall(r"^\| ([^|]+) \|", glossary, re.M) for n in re.findall(r"`([a-z_]+)`", cell)}
cols = set()
for name in ("kernels", "ops", "gemm", "mfu", "summary"):
    r = subprocess.run([tlsql, hand, "--csv", "--report", name], capture_output=True, text=True, timeout=120)
    cols |= set(next(csv.reader(io.StringIO(r.stdout)), []))
r = subprocess.run([tlsql, hand, "--diff", hand, "--csv", "--report", "diff_kernels"], capture_output=True, text=True)
cols |= {re.sub(r"^(main|other)_", "", c) for c in next(csv.reader(io.StringIO(r.stdout)), [])}
missing = sorted(c for c in cols if c not in names)
check(not missing and len(cols) > 30, f"docs/reports.md's glossary names every column of the perf reports ({missing})")

# ---- Shared traces.
qwen = os.path.join(shared, "traces", "tracelens", "h100", "Qwen1.5_0.5B_chat.json.gz")
if os.path.exists(qwen):
    # Item 2, from the raw JSON: the sm90 GEMM kernel's launches whose runtime call lies in an aten::mm /
    # aten::addmm (same thread); FLOPs 2MNK (+ MN for addmm's bias); the rate is their sum over those
    # launches' time. The shapes' FLOPs are TraceLens's GFLOPS_first (checked below).
    raw = [e for e in load(qwen) if e.get("ph") == "X"]
    runtime = {e["args"]["correlation"]: e for e in raw if e.get("cat") == "cuda_runtime" and "correlation" in e["args"]}
    mms = [e for e in raw if e.get("cat") == "cpu_op" and e["name"] in ("aten::mm", "aten::addmm")]
    by_tid = {}
    for o in mms:
        by_tid.setdefault((o["pid"], o["tid"]), []).append((ns(o["ts"]), ns(o["ts"]) + ns(o["dur"]), o))

    def op_flops(o):
        d = o["args"]["Input Dims"]
        if o["name"] == "aten::mm":
            (m, kk), (_, n) = d[0], d[1]
            return 2 * m * n * kk
        (m, kk), (_, n) = d[1], d[2]
        return 2 * m * n * kk + m * n

    name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
    launches, f_sum, t_sum = 0, 0, 0
    for kern in (e for e in raw if e.get("cat") == "kernel" and e["name"] == name):
        launches += 1
        rt = runtime.get(kern["args"].get("correlation"))
        if rt is None:
            continue
        t = ns(rt["ts"])
        op = next((o for a, b, o in by_tid.get((rt["pid"], rt["tid"]), []) if a <= t < b), None)
        if op is not None:
            f_sum, t_sum = f_sum + op_flops(op), t_sum + ns(kern["dur"])
    got = {r["name"]: r for r in report(qwen, "kernels", ("@top", "5"))[0]}.get(name, {})
    modeled = sum(1 for kern in raw if kern.get("cat") == "kernel" and kern["name"] == name
                  and kern["args"].get("correlation") in runtime
                  and any(a <= ns(runtime[kern["args"]["correlation"]]["ts"]) < b
                          for a, b, _ in by_tid.get((runtime[kern["args"]["correlation"]]["pid"],
                                                     runtime[kern["args"]["correlation"]]["tid"]), [])))
    check((got.get("count"), got.get("modeled_count"), num(got.get("tflops"))) ==
          (str(launches), str(modeled), round(f_sum / t_sum / 1e3, 3)),
          f"Qwen H100 top GEMM kernel: {launches} launches, {modeled} under mm / addmm despite their Memsets, "
          f"{round(f_sum / t_sum / 1e3, 3)} TFLOP/s from the JSON ({ {k: got.get(k) for k in ('count', 'modeled_count', 'tflops')} })")
    # ops.count against TraceLens's ops_summary Count (instances with GPU work), every op both list
    # (TraceLens lists aten::_flash_attention_forward where tlsql counts the modeled
    # aten::_scaled_dot_product_flash_attention above it: docs/perf_models.md).
    ref = list(csv.DictReader(open(os.path.join(shared, "expected", "tracelens", "h100_Qwen1.5_0.5B_chat", "ops_summary.csv"))))
    ours = {r["name"]: r for r in run(qwen, "-c", "SELECT name, count, gpu_us FROM op_summary")[0]}
    both = [r for r in ref if r["name"] in ours]
    bad = [(r["name"], r["Count"], ours[r["name"]]["count"]) for r in both if r["Count"] != ours[r["name"]]["count"]
           or abs(float(r["total_direct_kernel_time_sum"]) - float(ours[r["name"]]["gpu_us"])) > 5e-3]
    check(len(both) >= 19 and not bad, f"Qwen ops: count and GPU us = TraceLens's Count and kernel time, {len(both)} ops ({bad})")
    # gemm sheet against TraceLens's GEMM sheet: count, one call's GFLOPs, kernel time; TFLOP/s the sums'
    # (GFLOPS_first * count over Kernel Time sum), where TraceLens averages each call's rate.
    tl = list(csv.DictReader(open(os.path.join(shared, "expected", "tracelens", "h100_Qwen1.5_0.5B_chat", "GEMM.csv"))))
    sheet = report(qwen, "gemm", ("@top", "100"))[0]
    mine = {(r["name"], r["input_dims"].replace(" ", "")): r for r in sheet}
    bad, seen = [], 0
    for w in tl:
        key = (w["name"], w["Input Dims_first"].replace(" ", "").replace("(", "[").replace(")", "]"))
        m = mine.get(key)
        if m is None:
            bad.append(("missing", key))
            continue
        seen += 1
        n, gf, us = int(w["name_count"]), float(w["GFLOPS_first"]), float(w["Kernel Time (µs)_sum"])
        if (int(m["count"]) != n or abs(float(m["gflop_per_call"]) - gf) > 1e-6 * gf + 1e-6
                or abs(float(m["gpu_us"]) - us) > 1e-4 * us + 2e-3
                or abs(float(m["tflops"]) - gf * n / us * 1e3) > 1e-4 * gf * n / us * 1e3 + 1e-3):  # GFLOP/us = 1e3 TFLOP/s
            bad.append((key[0], m["count"], n, m["gflop_per_call"], gf, m["tflops"], round(gf * n / us * 1e3, 3)))
    check(seen == len(tl) and seen >= 5 and not bad, f"Qwen gemm sheet = TraceLens's GEMM sheet, {seen} shapes ({bad[:3]})")
else:
    print("skip Qwen H100: ../shared absent")

control = os.path.join(shared, "traces", "hta", "trace_diff", "control.json.gz")
if os.path.exists(control):
    # HTA's kernel breakdown reads the trace as its TraceAnalysis does: the last ProfilerStep dropped
    # (the launch calls from its start on and what they launched) and GPU work with no launch call.
    # Per kernel name here from the raw JSON (µs), against kernels @steps 'complete'.
    raw = [e for e in load(control) if e.get("ph") == "X"]
    step_starts = sorted(ns(e["ts"]) for e in raw if re.fullmatch(r"ProfilerStep#\d+", e.get("name", ""))
                         and e.get("cat") in ("user_annotation", "cpu_op"))
    cut = step_starts[-1] if len(step_starts) > 1 else None
    launch = {e["args"]["correlation"]: ns(e["ts"]) for e in raw
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    want = {}
    for e in raw:
        if e.get("cat") != "kernel":
            continue
        t = launch.get(e["args"].get("correlation"))
        if t is None or (cut is not None and t >= cut):
            continue
        n, s = want.get(e["name"], (0, 0))
        want[e["name"]] = (n + 1, s + ns(e["dur"]))
    got = {r["name"]: (int(r["count"]), round(float(r["total_us"]) * 1000))
           for r in report(control, "kernels", ("@steps", "'complete'"), ("@top", "100000"))[0]}
    check(got == want and len(got) > 50, f"kernels @steps 'complete' = HTA's rule from the JSON, {len(want)} kernel names "
                                         f"({[(k, got.get(k), w) for k, w in want.items() if got.get(k) != w][:2]})")
    top = max(want, key=lambda k: want[k][1])
    every = sum(ns(e["dur"]) for e in raw if e.get("cat") == "kernel" and e["name"] == top)
    check(every != want[top][1], f"the top kernel's time differs between all steps and complete ones "
                                 f"({every / 1e3} vs {want[top][1] / 1e3} us)")
else:
    print("skip hta/trace_diff/control: ../shared absent")

resnet = os.path.join(shared, "traces", "v100_resnet50_2021_legacy.pt.trace.json.gz")
if os.path.exists(resnet):
    # The convolutions (every op whose name holds "convolution") launched this share of the linked GPU
    # time, read from the JSON; the summary's modeled share cannot exceed the rest, and each conv row says why.
    raw = [e for e in load(resnet) if e.get("ph") == "X"]
    ops_by_tid = {}
    for o in raw:
        if o.get("cat") in ("cpu_op", "Operator") and "convolution" in o["name"]:
            ops_by_tid.setdefault((o["pid"], o["tid"]), []).append((ns(o["ts"]), ns(o["ts"]) + ns(o["dur"])))
    rt = {e["args"]["correlation"]: e for e in raw if e.get("cat") in ("cuda_runtime", "Runtime")
          and "correlation" in e.get("args", {})}
    conv_ns = all_ns = 0
    for e in raw:
        if e.get("cat") not in ("kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset"):
            continue
        r = rt.get(e.get("args", {}).get("correlation"))
        if r is None:
            continue
        all_ns += ns(e["dur"])
        if any(a <= ns(r["ts"]) < b for a, b in ops_by_tid.get((r["pid"], r["tid"]), [])):
            conv_ns += ns(e["dur"])
    conv_pct = 100 * conv_ns / all_ns
    ops, err = report(resnet, "ops", ("@top", "1000"))
    rows = [r for r in ops if r["category"].startswith("CONV")]
    summ, _ = report(resnet, "summary")
    check(rows and all(r["note"] == "no model: Concrete Inputs missing" for r in rows)
          and abs(sum(float(r["gpu_pct"]) for r in rows) - conv_pct) < 0.05
          and float(summ[0]["modeled_gpu_pct"]) <= 100 - conv_pct + 0.05 and "ops: " in err,
          f"2021 ResNet-50: the convolutions ({conv_pct:.2f}% of the GPU time from the JSON) say why they have no "
          f"model; modeled_gpu_pct {summ[0]['modeled_gpu_pct'] if summ else None}; {err.strip()[:120]}")
else:
    print("skip v100_resnet50_2021_legacy: ../shared absent")
finish()
