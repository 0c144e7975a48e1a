#!/usr/bin/env python3
"""Serving-engine steps (docs/inference.md): the engine_step view, the steps report and the
@iteration / @phase filters of the ops, kernels and timeline reports. Hand-made traces with the
answers written here; the shared vLLM traces against their raw JSON (steps and graph launches found
by name and time containment, here in Python), their GPU busy time and span re-done from the JSON,
a training trace's ProfilerSteps (the fallback) from its JSON; saved databases against loaded
traces; the ops report unfiltered against op_summary.
usage: engine_steps.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, subprocess, sys
from decimal import Decimal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from intervals import union_length  # noqa: E402

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
# GPU span: first start to last end of the step's GPU work (µs): [20, 50), [220, 242), [420, 425).
got = [r["gpu_span_ms"] for r in rows(steps, "--report", "steps")]
check(got == ["0.03", "0.022", "0.005"], f"hand-made: GPU span per step ({got})")
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

# The host loop (no annotation, no frame): the thread that launches graphs waits for the GPU once
# per step (cudaStreamSynchronize); a step is that thread's host events from the end of one wait to
# the end of the next (µs):
#   step 0: aten::mm -> gemm 30, graph launch replaying k1, k2, aten::item -> sync ending at 100
#   step 1: graph launch replaying k1, k2, sync ending at 200 (an op starting at 100 is step 1's)
#   after the last wait: aten::add -> add_k (not a finished step)
ev, corr[0] = [], 0
op("aten::mm", "gemm", 10, 30, 15)


def replay(ts, *kernels):
    corr[0] += 1
    ev.append(x("cuda_runtime", "cudaGraphLaunch", ts, 5, correlation=corr[0]))
    for i, k in enumerate(kernels):
        ev.append({"ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7, "ts": ts + 10 + 5 * i, "dur": 4,
                   "args": {"correlation": corr[0], "device": 0, "stream": 7}})


replay(50, "k1", "k2")
ev.append(x("cpu_op", "aten::item", 80, 22))
ev.append(x("cuda_runtime", "cudaStreamSynchronize", 90, 10))
op("aten::mul", "mul_k", 100, 3, 105)
replay(150, "k1", "k2")
ev.append(x("cuda_runtime", "cudaStreamSynchronize", 190, 10))
op("aten::add", "add_k", 210, 5, 220)
looppath = os.path.join(work, "loop.json")
with open(looppath, "w") as f:
    json.dump({"traceEvents": ev}, f)
got = [(r["iteration"], r["source"], r["start_ms"], r["wall_ms"], r["kernels"], r["graph_replays"])
       for r in rows(looppath, "--report", "steps")]
check(got == [("0", "loop", "0.0", "0.09", "3", "1"), ("1", "loop", "0.09", "0.1", "3", "1")],
      f"hand-made: host-loop steps ({got})")
ops = rows(looppath, "-c", ".parameter set @iteration 1", "--report", "ops")
# (The replay matches no capture nor eager run: its launch call is its own launcher, counted with k1 + k2's 8 µs;
# no annotation or python frame is above it, so ops names it "(no op) > cudaGraphLaunch": a runtime call is never
# an op name.)
check([(r["name"], r["count"], r["gpu_us"]) for r in ops] == [("(no op) > cudaGraphLaunch", "1", "8.0"),
                                                               ("aten::mul", "1", "3.0")],
      f"hand-made: ops of loop step 1 ({ops})")
kernels = rows(looppath, "-c", ".parameter set @iteration 0", "--report", "kernels")
check(sorted((r["name"], r["count"]) for r in kernels) == [("gemm", "1"), ("k1", "1"), ("k2", "1")],
      f"hand-made: kernels of loop step 0, replays included ({kernels})")
for view in ("engine_step", "engine_step_gpu", "engine_step_member"):
    alone = run(looppath, "-c", f"SELECT * FROM {view} ORDER BY 1, 2, 3, 4")
    attached = run(steps, "--diff", looppath, "-c", f"SELECT * FROM other.{view} ORDER BY 1, 2, 3, 4")
    check(alone == attached and alone.count("\n") > 2, f"hand-made: other.{view} = {view} alone (loop steps)")

# SGLang's and ATOM's step labels (src/kind.cpp; TraceLens's formats): one op each, so each step
# is found, numbered by start, with the counts its label gives.
labels = [("step[EXTEND bs=2 toks=14721]", "prefill", "14721", "2", "0"),
          ("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]", "decode", "128", "0", "64"),
          ("step[MIXED bs=2]", "mixed", "", "", ""),
          ("prefill[bs=2 tok=14721 ctx=[7803, 6918]]", "prefill", "14721", "2", "0"),
          ("decode[bs=117/128 tok=117 d=117]", "decode", "117", "0", "117"),
          ("decode[bs=128 tok=384 p=2 d=126 sqsq=132612 sqsk=1114112 sk=258048 tbo=1]", "mixed", "384", "2", "126"),
          ("execute_context_2(14721)_generation_3(3)", "mixed", "14724", "2", "3")]
ev, corr[0] = [], 0
for i, (label, *_) in enumerate(labels):
    ev.append(x("user_annotation", label, 100 * i, 50))
    op("aten::mm", "gemm", 100 * i + 5, 10, 100 * i + 10)
lpath = os.path.join(work, "labels.json")
with open(lpath, "w") as f:
    json.dump({"traceEvents": ev}, f)
got = [(r["phase"], r["tokens"], r["prefill_requests"], r["decode_requests"], r["kernels"])
       for r in rows(lpath, "--report", "steps")]
check(got == [(p, t, pr, d, "1") for _, p, t, pr, d in labels], f"hand-made: SGLang / ATOM / vLLM native labels ({got})")

# Attention of a serving step (docs/perf_models.md): vllm::unified_attention_with_output records
# heads and head sizes, the step annotation the requests' lengths. Step 0: one prefill chunk of
# sq 10 over sk 30 (sqsq 100, sqsk 300) and 3 decode tokens over 50 keys; q [16, 4, 8], k and v
# [16, 2, 8] bf16: Hq 4, Hkv 2, D 8.
#   FLOPs = 4 · 2 · (8 + 8) · (300 + 50) - 4 · (8 + 8) · 100 = 38400
#   bytes = 13 · (32 + 32 + 16 + 16) · 2 + (30 - 10 + 50 - 3) · 2 · 16 · 2 = 2496 + 4288 = 6784
# Step 1 (SGLang's detailed DECODE label): 2 tokens over 40 keys: FLOPs 4 · 2 · 16 · 40 = 5120,
# bytes 2 · 96 · 2 + 38 · 64 = 2816. Step 2: no aggregates (vLLM native): no model, GPU time kept.
dims = [[16, 4, 8], [16, 2, 8], [16, 2, 8], [16, 4, 8], []]
types = ["c10::BFloat16"] * 4 + ["str"]
ev, corr[0] = [], 0
for i, label in enumerate(["execute_13_context_1(sq10sk30sqsq100sqsk300)_generation_3(sq3sk50sqsq3sqsk50)",
                           "step[DECODE bs=2 g_sq=2 g_sk=40 g_sqsq=2 g_sqsk=40]",
                           "execute_context_0(0)_generation_2(2)"]):
    ev.append(x("user_annotation", label, 100 * i, 50))
    ev.append(x("cpu_op", "vllm::unified_attention_with_output", 100 * i + 5, 20,
                **{"Input Dims": dims, "Input type": types}))
    corr[0] += 1
    ev.append(x("cuda_runtime", "cudaLaunchKernel", 100 * i + 6, 2, correlation=corr[0]))
    ev.append({"ph": "X", "cat": "kernel", "name": "kernel_unified_attention_2d", "pid": 0, "tid": 7,
               "ts": 100 * i + 10, "dur": 4, "args": {"correlation": corr[0], "device": 0, "stream": 7}})
apath = os.path.join(work, "attention.json")
with open(apath, "w") as f:
    json.dump({"traceEvents": ev}, f)
got = [(r["f"], r["b"], r["src"]) for r in rows(apath, "-c", "SELECT flops(uid) AS f, bytes(uid) AS b, "
                                                "perf_source(uid) AS src FROM op ORDER BY ts")]
check(got == [("38400.0", "6784.0", "model"), ("5120.0", "2816.0", "model"), ("", "", "")],
      f"hand-made: attention FLOPs / bytes from the step's lengths ({got})")
ops = rows(apath, "--report", "ops")
check([(r["name"], r["category"], r["count"], r["gpu_us"]) for r in ops] ==
      [("vllm::unified_attention_with_output", "SDPA_fwd", "3", "12.0")],
      f"hand-made: the ops report counts all three ops' GPU time ({ops})")
# The same from a saved database (its perf pass reads the event table, not the store).
adb = os.path.join(work, "attention.db")
if os.path.exists(adb):
    os.remove(adb)
run(apath, "-o", adb, "-c", "SELECT 1")
got_db = [(r["f"], r["b"], r["src"]) for r in rows(adb, "-c", "SELECT flops(uid) AS f, bytes(uid) AS b, "
                                                   "perf_source(uid) AS src FROM op ORDER BY ts")]
check(got_db == got, f"hand-made: attention models from the saved database ({got_db})")
# The same database edited by hand so that step 0's annotation and its op are each other's parent:
# the walk up from the op ends (the loop is reported, as for any op on one), nothing hangs.
import shutil, sqlite3  # noqa: E401
loopdb = os.path.join(work, "attention_loop.db")
shutil.copy(adb, loopdb)
with sqlite3.connect(loopdb) as c:
    op_uid, ann_uid = c.execute("SELECT o.uid, o.parent FROM event o WHERE o.name = "
                                "'vllm::unified_attention_with_output' ORDER BY o.ts LIMIT 1").fetchone()
    c.execute("UPDATE event SET parent = ? WHERE uid = ?", (op_uid, ann_uid))
r = subprocess.run([tlsql, "-q", loopdb, "--csv", "-c", f"SELECT flops({op_uid})"], capture_output=True, text=True,
                   timeout=60)
check(r.returncode == 1 and "loop" in r.stderr, f"hand-made: a looped step annotation is an error ({r.stderr.strip()})")
r = subprocess.run([tlsql, "-q", loopdb, "--csv", "--report", "steps"], capture_output=True, text=True, timeout=60)
check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "parent links loop" in r.stderr,
      f"hand-made: the steps of a database whose parent links loop: one-line error ({r.stderr.strip()})")

# Fused MoE with its weights recorded (vllm::outplace_fused_experts; docs/perf_models.md), through
# the binary: hidden [4, 8] bf16, w1 [6, 10, 8], w2 [6, 8, 5], top-2: 2016 FLOPs, 1568 bytes (the
# arithmetic in tests/unit/perf_model_test.cpp); vllm::moe_forward (no weights): none.
ev, corr[0] = [], 0
moe_args = {"Input Dims": [[4, 8], [6, 10, 8], [6, 8, 5], [4, 2], [4, 2]],
            "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "float", "int"]}
ev.append(x("cpu_op", "vllm::moe_forward", 0, 40, **{"Input Dims": [[4, 8], [4, 6], []],
                                                      "Input type": ["c10::BFloat16", "c10::BFloat16", "str"]}))
ev.append(x("cpu_op", "vllm::outplace_fused_experts", 2, 30, **moe_args))
corr[0] += 1
ev.append(x("cuda_runtime", "cudaLaunchKernel", 5, 2, correlation=1))
ev.append({"ph": "X", "cat": "kernel", "name": "fused_moe_kernel", "pid": 0, "tid": 7, "ts": 10, "dur": 4,
           "args": {"correlation": 1, "device": 0, "stream": 7}})
mpath = os.path.join(work, "moe.json")
with open(mpath, "w") as f:
    json.dump({"traceEvents": ev}, f)
got = [(r["name"], r["f"], r["b"], r["src"]) for r in rows(mpath, "-c", "SELECT name, flops(uid) AS f, bytes(uid) AS b, "
                                                            "perf_source(uid) AS src FROM op ORDER BY ts")]
check(got == [("vllm::moe_forward", "2016.0", "1568.0", "beneath"),
              ("vllm::outplace_fused_experts", "2016.0", "1568.0", "model")], f"hand-made: fused MoE model ({got})")

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
    # The same trace without its python frames: the host loop's steps. Reference: the rule re-done
    # on the raw JSON (graph launches between the ends of consecutive waits of the launching
    # thread), and the frame steps: each of the 10 waits (sampled tokens' tolist) ends one of frame
    # steps 0-9, whose GPU work and replays the loop steps must have too.
    tid = launches[0]["tid"]
    waits = sorted(e["ts"] + e["dur"] for e in raw if e.get("tid") == tid and e.get("name") in
                   ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"))
    want = [sum(1 for g in launches if (i == 0 or waits[i - 1] <= g["ts"]) and g["ts"] < w) for i, w in enumerate(waits)]
    noframes = os.path.join(work, "h100_noframes.json")
    with open(noframes, "w") as f:
        json.dump({"traceEvents": [e for e in raw if e.get("cat") != "python_function"]}, f)
    loop = rows(noframes, "--report", "steps")
    got = [int(r["graph_replays"]) for r in loop]
    check(got == want and len(want) == 11 and {r["source"] for r in loop} == {"loop"},
          f"H100 vLLM without frames: {len(got)} host-loop steps, graph replays {got} (JSON: {want})")
    framed = rows(h100, "--report", "steps")
    key = lambda r: (r["iteration"], r["gpu_busy_ms"], r["kernels"], r["graph_replays"])  # noqa: E731
    check([key(r) for r in loop[:10]] == [key(r) for r in framed[:10]],
          "H100 vLLM without frames: loop steps 0-9 launch the frame steps' GPU work")
    a = run(noframes, "-c", ".parameter set @iteration 4", "--report", "kernels")
    b = run(h100, "-c", ".parameter set @iteration 4", "--report", "kernels")
    check(a == b and a.count("\n") > 5, "H100 vLLM without frames: kernels of step 4 = the frame step's")
    os.remove(noframes)
mi300 = os.path.join(shared, "traces", "tracelens", "mi300", "vllm_decode_graph_execution.json.gz")
if os.path.exists(mi300):
    got = [(r["phase"], r["tokens"], r["decode_requests"], r["graph_replays"]) for r in rows(mi300, "--report", "steps")]
    # the one annotation: execute_32_context_0(...)_generation_32(...), around the one hipGraphLaunch
    check(got == [("decode", "32", "32", "1")], f"MI300 vLLM: one decode step of 32 ({got})")
    # With its capture trace, the replay's attention ops (copied from the capture) take the step's
    # lengths. Reference: TraceLens's InferenceAttention rule, re-done here from the raw JSON (the
    # step annotation's aggregates, the captured op's shapes and dtypes).
    import re
    capdir = os.path.join(os.path.dirname(mi300), "vllm_decode_capture")
    ann = [e["name"] for e in load(mi300) if e.get("cat") == "user_annotation" and e["name"].startswith("execute_")]
    m = re.fullmatch(r"execute_\d+_context_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)"
                     r"_generation_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)", ann[0])
    c_sq, c_sk, c_sqsq, c_sqsk, g_sq, g_sk, g_sqsq, g_sqsk = map(int, m.groups())
    want = set()
    for name in os.listdir(capdir):
        if name.endswith(".json.gz"):
            for e in load(os.path.join(capdir, name)):
                if e.get("name") == "vllm::unified_attention_with_output":
                    q, k, v = e["args"]["Input Dims"][:3]
                    hq, dqk, hkv, dv = q[1], q[2], k[-2], v[-1]
                    bpe = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4}
                    f = hq * 2 * (dqk + dv) * (c_sqsk + g_sqsk) - hq * (dqk + dv) * c_sqsq
                    b = ((c_sq + g_sq) * (hq * dqk + hq * dv + hkv * dqk + hkv * dv) * bpe[e["args"]["Input type"][0]]
                         + (c_sk - c_sq + g_sk - g_sq) * hkv * (dqk + dv) * bpe[e["args"]["Input type"][1]])
                    want.add((float(f), float(b)))
    got = rows(mi300, "--capture", capdir, "-c", "SELECT flops(uid) AS f, bytes(uid) AS b FROM op "
               "WHERE name = 'vllm::unified_attention_with_output'")
    check(len(got) == 24 and {(float(r["f"]), float(r["b"])) for r in got} == want and len(want) == 1,
          f"MI300 vLLM: 24 replayed attention ops, FLOPs / bytes from the step's lengths ({want})")
    # AITER's fused add + RMS norm (out, input, residual_in, residual_out, weight, ...): N elements
    # in rows of H (the weight's): 5·N + 2·N/H FLOPs, 4·N + H elements moved (docs/perf_models.md).
    want = set()
    for name in os.listdir(capdir):
        if name.endswith(".json.gz"):
            for e in load(os.path.join(capdir, name)):
                if e.get("name") == "aiter::rmsnorm2d_fwd_with_add_ck":
                    dx, w = e["args"]["Input Dims"][1], e["args"]["Input Dims"][4]
                    n = dx[0] * dx[1]
                    want.add((float(5 * n + 2 * n // w[0]), float((4 * n + w[0]) * 2)))
    got = rows(mi300, "--capture", capdir, "-c", "SELECT flops(uid) AS f, bytes(uid) AS b FROM op "
               "WHERE name = 'aiter::rmsnorm2d_fwd_with_add_ck'")
    check(len(got) == 48 and {(float(r["f"]), float(r["b"])) for r in got} == want and len(want) == 1,
          f"MI300 vLLM: 48 replayed fused add + RMS norms ({want})")


# GPU busy and span per step from the raw JSON: a step's GPU work is what launch calls (same
# correlation) inside it launched; for an annotation or frame step, the calls on its thread within
# its span (its subtree); for a ProfilerStep, the calls that start within it (the loader's step
# column). Exact ns, compared with engine_steps() (ns) and the report (ms, 3 decimals).
def ns(v):
    return int(Decimal(str(v)) * 1000)


def step_gpu(raw, windows, same_thread=True):
    """[(busy, first start, last end, kernels, graph launches)] per (ts, end, pid, tid) window, ns."""
    launches = {e["args"]["correlation"]: e for e in raw if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and "correlation" in e.get("args", {})}
    gpu = [e for e in raw if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    out = []
    for ts, end, pid, tid in windows:
        def inside(c):
            if same_thread:
                return (c["pid"], c["tid"]) == (pid, tid) and ts <= ns(c["ts"]) and ns(c["ts"]) + ns(c["dur"]) <= end
            return ts <= ns(c["ts"]) < end
        mine = [g for g in gpu if (c := launches.get(g.get("args", {}).get("correlation"))) is not None and inside(c)]
        iv = [(ns(g["ts"]), ns(g["ts"]) + ns(g["dur"])) for g in mine]
        graphs = sum(1 for c in launches.values() if c["name"] in ("cudaGraphLaunch", "hipGraphLaunch") and inside(c))
        out.append((union_length(iv), min((a for a, _ in iv), default=None), max((b for _, b in iv), default=None),
                    sum(1 for g in mine if g["cat"] == "kernel"), graphs))
    return out


def engine_steps(target, *args):
    return [(int(r["gpu_busy"]), int(r["gpu_start"]) if r["gpu_start"] else None,
             int(r["gpu_end"]) if r["gpu_end"] else None, int(r["kernels"]), int(r["graph_replays"]))
            for r in rows(target, *args, "-c", "SELECT * FROM engine_steps() ORDER BY trace, iteration")]


def report_ms(target, *args):
    return [(r["gpu_busy_ms"], r["gpu_span_ms"]) for r in rows(target, *args, "--report", "steps")]


def as_ms(want):
    return [(str(round(b / 1e6, 3)), str(round((e - s) / 1e6, 3)) if s is not None else "") for b, s, e, _, _ in want]


if os.path.exists(h100):
    raw = load(h100)
    fr = sorted((e for e in raw if e.get("cat") == "python_function" and e["name"].endswith(": execute_model")
                 and "gpu_worker.py(" in e["name"]), key=lambda e: e["ts"])
    want = step_gpu(raw, [(ns(f["ts"]), ns(f["ts"]) + ns(f["dur"]), f["pid"], f["tid"]) for f in fr])
    got = engine_steps(h100)
    check(got == want and len(got) == 11, f"H100 vLLM: GPU busy, first start, last end, kernels, replays per step "
                                          f"= the JSON's ({got[:2]} ...; JSON: {want[:2]} ...)")
    check(report_ms(h100) == as_ms(want), f"H100 vLLM: the report's busy and span ms ({report_ms(h100)[:3]} ...)")
piecewise = os.path.join(shared, "traces", "tracelens", "mi300", "vllm_piecewise", "graph_execution.json.gz")
if os.path.exists(piecewise):
    # One mixed step whose host side takes 26 ms and whose GPU work (25 graph replays) 156: the span
    # says the GPU ran on long after the host had queued the step.
    raw = load(piecewise)
    ann = [e for e in raw if e.get("cat") == "user_annotation" and e["name"].startswith("execute_")]
    want = step_gpu(raw, [(ns(a["ts"]), ns(a["ts"]) + ns(a["dur"]), a["pid"], a["tid"]) for a in ann])
    got = engine_steps(piecewise)
    check(got == want and len(got) == 1 and got[0][4] == 25, f"MI300 PIECEWISE: the step's GPU work = the JSON's "
                                                             f"({got}; JSON: {want})")
    r = rows(piecewise, "--report", "steps")[0]
    check(float(r["gpu_span_ms"]) > float(r["wall_ms"]) and (r["gpu_busy_ms"], r["gpu_span_ms"]) == as_ms(want)[0],
          f"MI300 PIECEWISE: wall {r['wall_ms']}, busy {r['gpu_busy_ms']}, span {r['gpu_span_ms']} ms")

# A trace with no serving step: its ProfilerSteps, numbered N, wall = the step's duration; GPU
# work: what launch calls starting within the step launched.
t4 = os.path.join(shared, "traces", "t4_train_fp32.pt.trace.json")
if os.path.exists(t4):
    with open(t4) as f:
        raw = json.load(f)["traceEvents"]
    ps = sorted((e for e in raw if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
                key=lambda e: int(e["name"].split("#")[1]))
    want = step_gpu(raw, [(ns(p["ts"]), ns(p["ts"]) + ns(p["dur"]), None, None) for p in ps], same_thread=False)
    got = engine_steps(t4)
    check(got == want and len(got) == 3, f"t4_train_fp32: per ProfilerStep, GPU work = the JSON's ({got}; {want})")
    rep = rows(t4, "--report", "steps")
    have = [(r["iteration"], r["source"], r["wall_ms"]) for r in rep]
    check(have == [(p["name"].split("#")[1], "profiler_step", str(round(ns(p["dur"]) / 1e6, 3))) for p in ps],
          f"t4_train_fp32: the steps report falls back to its ProfilerSteps ({have})")
    check([(r["gpu_busy_ms"], r["gpu_span_ms"]) for r in rep] == as_ms(want), "t4_train_fp32: busy and span ms")
    # ... which are no serving steps: the views and the step filters see none.
    check(run(t4, "-c", "SELECT count(*) AS n FROM engine_step").strip().endswith("0"),
          "t4_train_fp32: engine_step is empty")

# Neither: the report says why, one line on stderr, exit 0.
ev, corr[0] = [], 0
op("aten::mm", "gemm", 10, 30, 20)
plain = os.path.join(work, "plain.json")
with open(plain, "w") as f:
    json.dump({"traceEvents": ev}, f)
r = subprocess.run([tlsql, "-q", plain, "--csv", "--report", "steps"], capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and r.stderr.strip().startswith("steps: no rows: no serving-engine steps") and
      "ProfilerStep" in r.stderr and r.stdout.startswith("trace,iteration"), f"no steps: why ({r.stderr.strip()})")

# Two traces in one load, each its own rule: the hand-made annotation steps, the loop steps and a
# plain trace with a ProfilerStep (source profiler_step), numbered per trace.
ev, corr[0] = [x("user_annotation", "ProfilerStep#5", 0, 100)], 0
op("aten::mm", "gemm", 10, 30, 20)
ps5 = os.path.join(work, "ps5.json")
with open(ps5, "w") as f:
    json.dump({"traceEvents": ev}, f)
got = [(r["trace"], r["iteration"], r["source"], r["kernels"]) for r in rows(steps, looppath, ps5, "--report", "steps")]
check(got == [("0", "0", "annotation", "1"), ("0", "1", "annotation", "2"), ("0", "2", "annotation", "1"),
              ("1", "0", "loop", "3"), ("1", "1", "loop", "3"), ("2", "5", "profiler_step", "1")],
      f"three traces, three rules ({got})")

# Saved databases (read through SQL) give what the loaded traces give (read from the store).
for name, target in (("h100", h100), ("loop", looppath), ("three", None)):
    if name == "h100" and not os.path.exists(h100):
        continue
    targets = [steps, looppath, ps5] if target is None else [target]
    db = os.path.join(work, f"saved_{name}.db")
    if os.path.exists(db):
        os.remove(db)
    run(targets[0], *targets[1:], "-o", db, "-c", "SELECT 1")
    for q in ("SELECT * FROM engine_steps() ORDER BY 1, 2", "SELECT * FROM engine_step_member ORDER BY 1, 2, 3, 4",
              "SELECT * FROM engine_step_gpu ORDER BY 1, 2, 3, 4", "SELECT * FROM engine_loop_event ORDER BY uid"):
        a, b = run(targets[0], *targets[1:], "-c", q), run(db, "-c", q)
        check(a == b and a.count("\n") > 1, f"{name}: saved = loaded: {q[14:40]}")
    os.remove(db)
finish()
