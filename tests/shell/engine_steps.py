#!/usr/bin/env python3
"""Serving-engine steps (docs/inference.md): the engine_step view, the steps report and the
@iteration / @phase filters of the ops, kernels and timeline reports. Hand-made traces with the
answers written here; the shared vLLM traces against their raw JSON (steps and graph launches found
by name and time containment, here in Python); the ops report unfiltered against op_summary.
usage: engine_steps.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "engine_steps")
os.makedirs(work, exist_ok=True)


def run(target, *args):
    r = subprocess.run([tlsql, "-q", target, "--csv", *args], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{os.path.basename(target)} {' '.join(args)[:60]}: {r.stderr.strip()[:200]}")
    return r.stdout


def rows(target, *args):
    return list(csv.DictReader(io.StringIO(run(target, *args))))


def x(cat, name, ts, dur, tid=1, **a):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": a}


# Three steps, each an op launching one kernel (µs):
#   0 prefill (2 prefill requests, 16 tokens): aten::mm -> gemm 30
#   1 decode (4 decode requests, 4 tokens):    aten::mm -> gemm 8, aten::add -> add_k 2
#   2 mixed (1 + 3 requests, 10 tokens):       aten::add -> add_k 5
ev, corr = [], [0]


def op(name, kernel, ts, kdur, kts):
    corr[0] += 1
    ev.append(x("cpu_op", name, ts, 10))
    ev.append(x("cuda_runtime", "cudaLaunchKernel", ts + 1, 2, correlation=corr[0]))
    ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": kts, "dur": kdur,
               "args": {"correlation": corr[0], "device": 0, "stream": 7}})


ev.append(x("user_annotation", "execute_16_context_2(sq8sk8sq8sk8)_generation_0()", 0, 100))
op("aten::mm", "gemm", 10, 30, 20)
ev.append(x("user_annotation", "execute_4_context_0()_generation_4(sq1sk20)", 200, 100))
op("aten::mm", "gemm", 210, 8, 220)
op("aten::add", "add_k", 230, 2, 240)
ev.append(x("user_annotation", "execute_10_context_1(sq7sk7)_generation_3(sq1sk9)", 400, 100))
op("aten::add", "add_k", 410, 5, 420)
# A worker frame around everything: not a step here, since the trace has step annotations.
ev.append(x("python_function", "vllm/v1/worker/gpu_worker.py(263): execute_model", 0, 600))
steps = os.path.join(work, "steps.json")
with open(steps, "w") as f:
    json.dump({"traceEvents": ev}, f)

got = [(r["iteration"], r["phase"], r["tokens"], r["prefill_requests"], r["decode_requests"], r["source"],
        r["wall_ms"], r["gpu_busy_ms"], r["kernels"]) for r in rows(steps, "--report", "steps")]
check(got == [("0", "prefill", "16", "2", "0", "annotation", "0.1", "0.03", "1"),
              ("1", "decode", "4", "0", "4", "annotation", "0.1", "0.01", "2"),
              ("2", "mixed", "10", "1", "3", "annotation", "0.1", "0.005", "1")], f"hand-made: steps report ({got})")
ops = rows(steps, "-c", ".parameter set @phase 'decode'", "--report", "ops")
check([(r["name"], r["count"], r["gpu_us"]) for r in ops] == [("aten::mm", "1", "8.0"), ("aten::add", "1", "2.0")],
      f"hand-made: ops of the decode steps ({ops})")
ops = rows(steps, "-c", ".parameter set @iteration 2", "--report", "ops")
check([(r["name"], r["count"], r["gpu_us"], r["gpu_pct"]) for r in ops] == [("aten::add", "1", "5.0", "100.0")],
      f"hand-made: ops of iteration 2 ({ops})")
kernels = rows(steps, "-c", ".parameter set @phase 'prefill'", "--report", "kernels")
check([(r["name"], r["count"], r["total_us"]) for r in kernels] == [("gemm", "1", "30.0")],
      f"hand-made: kernels of the prefill step ({kernels})")
kernels = rows(steps, "--report", "kernels")
check([(r["name"], r["count"], r["total_us"]) for r in kernels] == [("gemm", "2", "38.0"), ("add_k", "2", "7.0")],
      f"hand-made: kernels unfiltered ({kernels})")
tl = {r["type"]: r["time ms"] for r in rows(steps, "-c", ".parameter set @phase 'decode'", "--report", "timeline")}
# decode: gemm [220, 228) and add_k [240, 242): busy 10 µs of a 22 µs span
check((tl.get("busy_time"), tl.get("total_time")) == ("0.01", "0.022"), f"hand-made: timeline of the decode step ({tl})")

# Without step annotations: the worker's per-step frames, phase unknown.
frames = [e for e in ev if e["cat"] != "user_annotation" and e["cat"] != "python_function"]
frames += [x("python_function", "vllm/v1/worker/gpu_worker.py(263): execute_model", 0, 150),
           x("python_function", "vllm/v1/worker/gpu_model_runner.py(1002): execute_model", 5, 140),
           x("python_function", "vllm/v1/worker/gpu_worker.py(263): execute_model", 195, 320)]
fpath = os.path.join(work, "frames.json")
with open(fpath, "w") as f:
    json.dump({"traceEvents": frames}, f)
got = [(r["iteration"], r["phase"], r["source"], r["kernels"]) for r in rows(fpath, "--report", "steps")]
check(got == [("0", "", "frame", "1"), ("1", "", "frame", "3")], f"hand-made: steps from worker frames ({got})")

# vLLM V0: the workers' execute_model is worker_base.py's; under spec decoding the spec-decode
# worker's execute_model calls it (and the draft's) within one step: a step inside a step is not
# one of its own. Steps here: [0, 150) around two worker_base frames, [195, 515) one frame alone.
v0 = [e for e in frames if e["cat"] != "python_function"]
v0 += [x("python_function", "vllm/spec_decode/spec_decode_worker.py(418): execute_model", 0, 150),
       x("python_function", "vllm/worker/worker_base.py(393): execute_model", 5, 60),
       x("python_function", "vllm/worker/worker_base.py(393): execute_model", 70, 70),
       x("python_function", "vllm/worker/worker_base.py(393): execute_model", 195, 320)]
v0path = os.path.join(work, "v0_frames.json")
with open(v0path, "w") as f:
    json.dump({"traceEvents": v0}, f)
got = [(r["iteration"], r["source"], r["kernels"]) for r in rows(v0path, "--report", "steps")]
check(got == [("0", "frame", "1"), ("1", "frame", "3")], f"hand-made: vLLM V0 frames, nested steps as one ({got})")

# A trace attached as `other` (--diff) has the same steps and step GPU work as loaded alone: the
# views walk its own tree, not main's (main here has fewer events than other).
for view in ("engine_step", "engine_step_gpu"):
    alone = run(steps, "-c", f"SELECT * FROM {view} ORDER BY 1, 2, 3, 4")
    attached = run(fpath, "--diff", steps, "-c", f"SELECT * FROM other.{view} ORDER BY 1, 2, 3, 4")
    check(alone == attached and alone.count("\n") > 3, f"hand-made: other.{view} = {view} alone")

# The ops report without filters is op_summary (the view repeats its rollup).
for name in ("tracelens/mi300/resnet_act_checkpoint.json.gz", "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz",
             "a100_switch_moe_batch4.json.gz"):
    path = os.path.join(shared, "traces", name)
    if not os.path.exists(path):
        print(f"skip {name}: not present")
        continue
    a = run(path, "-c", ".parameter set @top 100000", "--report", "ops")
    b = run(path, "-c", "SELECT * FROM op_summary ORDER BY gpu_us DESC")
    check(a == b and a.count("\n") > 2, f"{name}: the ops report unfiltered = op_summary ({a.count(chr(10))} lines)")


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


# H100 vLLM: no step annotations; the steps are vLLM's gpu_worker execute_model frames. The
# reference: those frames in the JSON, and the cudaGraphLaunch calls inside each (same thread).
h100 = os.path.join(shared, "traces", "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz")
if os.path.exists(h100):
    raw = load(h100)
    fr = sorted((e for e in raw if e.get("cat") == "python_function" and e["name"].endswith(": execute_model")
                 and "gpu_worker.py(" in e["name"]), key=lambda e: e["ts"])
    launches = [e for e in raw if e.get("name") == "cudaGraphLaunch"]
    want = [sum(1 for g in launches if g["tid"] == s["tid"] and s["ts"] <= g["ts"] < s["ts"] + s["dur"]) for s in fr]
    got = [int(r["graph_replays"]) for r in rows(h100, "--report", "steps")]
    check(got == want and len(want) == 11, f"H100 vLLM: 11 worker steps, graph replays per step {got} (JSON: {want})")
mi300 = os.path.join(shared, "traces", "tracelens", "mi300", "vllm_decode_graph_execution.json.gz")
if os.path.exists(mi300):
    got = [(r["phase"], r["tokens"], r["decode_requests"], r["graph_replays"]) for r in rows(mi300, "--report", "steps")]
    # the one annotation: execute_32_context_0(...)_generation_32(...), around the one hipGraphLaunch
    check(got == [("decode", "32", "32", "1")], f"MI300 vLLM: one decode step of 32 ({got})")
finish()
