#!/usr/bin/env python3
"""The mfu report (docs/reports.md): per ProfilerStep, model FLOPs over wall and GPU busy time
against the GPU's peak. A hand-made trace with the arithmetic written out; t4_train_fp32 with wall
and busy time recomputed from the raw JSON (the step's annotation; the union of the GPU events
whose launch call starts in the step) and the FLOPs summed from the per-op numbers (flops() of the
counted ops, checked against TraceLens elsewhere), the division done here.
usage: mfu_report.py TLSQL SHARED_DIR WORK_DIR"""
import csv, io, json, os, subprocess, sys
from decimal import Decimal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from intervals import union_length  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "mfu_report")
os.makedirs(work, exist_ok=True)


def rows(path, *args):
    r = subprocess.run([tlsql, "-q", path, "--csv", *args], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{os.path.basename(path)}: {r.stderr.strip()[:200]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


# Hand-made, on a Tesla T4 (fp32 matrix peak 8.1 TFLOP/s in gpu_spec): ProfilerStep#1 lasts
# 1000 µs and holds one fp32 aten::mm of [1024, 1024] x [1024, 1024]: 2 * 1024^3 = 2,147,483,648
# FLOPs, whose kernel runs 500 µs. achieved = 2.147483648e9 / 1e6 ns / 1e3 = 2.147 TFLOP/s,
# mfu = 2.147483648 / 8.1 = 26.51%; over the 500 µs busy: 4.295 TFLOP/s, 53.02%.
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000,
       "args": {}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
       "args": {"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["float", "float"]}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
       "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 100, "dur": 500,
       "args": {"correlation": 1, "device": 0, "stream": 7}}]
hand = os.path.join(work, "mfu.json")
with open(hand, "w") as f:
    json.dump({"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "Tesla T4", "computeMajor": 7,
                                                          "computeMinor": 5, "numSms": 40}]}, f)
got = [(r["step"], r["wall_ms"], r["gpu_busy_ms"], r["model_tflop"], r["dtype"], r["units"], r["peak_tflops"],
        r["achieved_tflops"], r["mfu_pct"], r["busy_tflops"], r["busy_mfu_pct"]) for r in rows(hand, "--report", "mfu")]
check(got == [("1", "1.0", "0.5", "0.002147", "fp32", "matrix", "8.1", "2.147", "26.51", "4.295", "53.02")],
      f"hand-made: one step, 2.147 TFLOP over 1 ms on a T4 ({got})")

# Two dtypes and an op without a model, on the T4 (gpu_spec: fp32 matrix 8.1, fp16 matrix 65).
# ProfilerStep#2 [0, 1000) µs: an fp32 aten::mm of [512, 512] x [512, 512] (2 * 512^3 = 268,435,456
# FLOPs, its kernel 100 µs), an fp16 one of [1024, 1024] x [1024, 1024] (2,147,483,648 FLOPs, 200
# µs) and my::op, no model, launching 300 µs. fp16 holds 2147483648 / 2415919104 = 88.9% of the
# FLOPs: the step reads the fp16 matrix peak; modeled GPU time 300 / 600 µs = 50%.
# ProfilerStep#3 [2000, 3000) µs: an fp32 and an fp16 mm of [1024, 1024] x [1024, 1024], 100 µs
# each: equal FLOPs, the lower dtype by name (fp16) is the step's; all of its GPU time modeled.
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 2000, "dur": 1000}]
corr = 0


def op(name, ts, dims, dtype, kernel_ts, kernel_dur):
    global corr
    corr += 1
    args = {"Input Dims": [dims, dims], "Input type": [dtype, dtype]} if dims else {}
    return [{"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 20, "args": args},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 5, "dur": 5,
             "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": f"gemm_kernel_{corr}", "pid": 0, "tid": 7, "ts": kernel_ts,
             "dur": kernel_dur, "args": {"correlation": corr, "device": 0, "stream": 7}}]


ev += op("aten::mm", 10, [512, 512], "float", 100, 100) + op("aten::mm", 40, [1024, 1024], "c10::Half", 300, 200)
ev += op("my::op", 70, None, None, 600, 300)
ev += op("aten::mm", 2010, [1024, 1024], "float", 2100, 100) + op("aten::mm", 2040, [1024, 1024], "c10::Half", 2300, 100)
mixed = os.path.join(work, "mfu_dtypes.json")
with open(mixed, "w") as f:
    json.dump({"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "Tesla T4", "computeMajor": 7,
                                                          "computeMinor": 5, "numSms": 40}]}, f)
f2, f3 = 268435456 + 2147483648, 2 * 2147483648
want = [("2", "0.002416", "50.0", "fp16", "matrix", "88.9", "65.0", str(round(100 * f2 / 1e6 / 1e3 / 65, 2))),
        ("3", "0.004295", "100.0", "fp16", "matrix", "50.0", "65.0", str(round(100 * f3 / 1e6 / 1e3 / 65, 2)))]
got = [(r["step"], r["model_tflop"], r["modeled_gpu_pct"], r["dtype"], r["units"], r["dtype_flops_pct"],
        r["peak_tflops"], r["mfu_pct"]) for r in rows(mixed, "--report", "mfu")]
check(got == want, f"two dtypes in a step: the dominant dtype, its share and peak, the modeled GPU share {got} "
      f"(by hand: {want})")
saved = os.path.join(work, "mfu_dtypes.db")
if os.path.exists(saved):
    os.remove(saved)
subprocess.run([tlsql, "-q", mixed, "-o", saved], check=True, capture_output=True)
got = [(r["step"], r["model_tflop"], r["modeled_gpu_pct"], r["dtype"], r["units"], r["dtype_flops_pct"],
        r["peak_tflops"], r["mfu_pct"]) for r in rows(saved, "--report", "mfu")]
check(got == want, f"the same from the saved database {got}")

t4 = os.path.join(shared, "traces", "t4_train_fp32.pt.trace.json")
if os.path.exists(t4):
    with open(t4) as f:
        raw = json.load(f)["traceEvents"]

    def ns(v):
        return int(Decimal(str(v)) * 1000)

    steps = {int(e["name"].split("#")[1]): (ns(e["ts"]), ns(e["dur"])) for e in raw
             if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#")}
    launch_ts = {e["args"]["correlation"]: ns(e["ts"]) for e in raw
                 if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    gpu = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), launch_ts.get(e["args"].get("correlation"))) for e in raw
           if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    flops = {int(r["step"]): float(r["f"]) for r in rows(
        t4, "-c", "SELECT o.step, sum(flops(o.uid)) AS f FROM counted_op c JOIN op o ON o.uid = c.uid "
                  "WHERE o.step IS NOT NULL GROUP BY o.step")}
    got = {int(r["step"]): r for r in rows(t4, "--report", "mfu")}
    check(sorted(got) == sorted(steps) == [2, 3, 4], f"t4_train_fp32: one row per ProfilerStep ({sorted(got)})")
    for n, (ts, dur) in sorted(steps.items()):
        busy = union_length((s, e) for s, e, l in gpu if l is not None and ts <= l < ts + dur)
        want = (round(dur / 1e6, 3), round(busy / 1e6, 3), round(100 * flops[n] / dur / 1e3 / 8.1, 2),
                round(100 * flops[n] / busy / 1e3 / 8.1, 2))
        r = got.get(n, {})
        have = (float(r.get("wall_ms", "nan")), float(r.get("gpu_busy_ms", "nan")), float(r.get("mfu_pct", "nan")),
                float(r.get("busy_mfu_pct", "nan")))
        check(have == want and r.get("dtype") == "fp32" and r.get("peak_tflops") == "8.1",
              f"t4_train_fp32 step {n}: wall, busy, mfu %, busy mfu % {have} (JSON and arithmetic: {want})")
finish()
