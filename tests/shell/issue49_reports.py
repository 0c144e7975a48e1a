#!/usr/bin/env python3
"""Issue 49's HTA analyses through the tlsql binary: the reports annotations, annotation_kernels,
kernel_sequences, stragglers and counters against HTA's own numbers (tests/data/hta_*: made by
running HolisticTraceAnalysis, tests/tools/hta_issue49.py) on shared traces (skipped when the
shared folder is absent) and on hand-made traces (tests/data/annotations_nested.json,
cupti_counters.json: tests/data/issue49_traces.py) with the arithmetic written out here.
HTA rounds float timestamps to whole µs (start up, end down: each duration loses under 2 µs), so
times on float traces are compared within 2 µs per event summed.
usage: issue49_reports.py TLSQL DATA_DIR SHARED_DIR"""
import csv, io, json, os, subprocess, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared = sys.argv[1:4]
traces = os.path.join(shared, "traces")
have_shared = os.path.isdir(traces)


def report(trace, name, **params):
    cmd = [tlsql, "-q", *(trace if isinstance(trace, list) else [trace]), "--csv"]
    for k, v in params.items():
        cmd += ["-c", f".parameter set @{k} {v}"]
    cmd += ["-c", f".report {name}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"{name} on {os.path.basename(str(trace))} exits 0 ({r.stderr.strip()[:200]})")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def hta(kind, name):
    with open(os.path.join(data, kind, name + ".json")) as f:
        return json.load(f)


def num(v):
    return None if v in ("", None) else float(v)


def rank_of(v):
    return 0 if v in ("", None) else int(v)  # HTA calls a trace without distributedInfo rank 0


# --- annotations -----------------------------------------------------------------------------
def compare_breakdown(label, rows, ref, tol_us):
    got = {(rank_of(r["rank"]), r["name"]): r for r in rows}
    want = {(r["rank"], r["name"]): r for r in ref}
    check(set(got) == set(want), f"{label}: the annotation names HTA lists ({len(want)}; tlsql {len(got)})")
    tol_us = max(tol_us, 1e-9)
    for key in sorted(set(got) & set(want)):
        g, w = got[key], want[key]
        n = int(g["count"])
        ok = (abs(num(g["sum_us"]) - w["sum_us"]) <= tol_us * n and abs(num(g["max_us"]) - w["max_us"]) <= tol_us
              and abs(num(g["min_us"]) - w["min_us"]) <= tol_us and abs(num(g["mean_us"]) - w["mean_us"]) <= tol_us
              and abs(num(g["stddev"]) - w["stddev"]) <= tol_us)
        check(ok, f"{label} {key[1][:40]}: sum {g['sum_us']} / {w['sum_us']}, mean {g['mean_us']} / {w['mean_us']}, "
                  f"stddev {g['stddev']} / {w['stddev']}")


def compare_kernels(label, rows, ref):
    if "hta_error" in ref:
        check(len(rows) > 0 and any(r["user_annotation"] for r in rows),
              f"{label}: HTA fails ({ref['hta_error'][:60]}); tlsql answers ({len(rows)} GPU events)")
        return
    # HTA keeps a few more GPU events than its step cut's intent on some traces (see docs/reports.md):
    # every event tlsql lists is in HTA's list, with HTA's annotation.
    missing = [r["uid"] for r in rows if r["uid"] not in ref]
    wrong = [r for r in rows if r["uid"] in ref and (r["user_annotation"] or None) != ref[r["uid"]]]

    def rounded_away(r):  # HTA's whole µs: start rounded up, end down; an event left with no length
        ts, end = int(r["ts"]), int(r["ts"]) + int(r["dur"])  # on an annotation's edge overlaps nothing
        return -(-ts // 1000) >= end // 1000
    unexplained = [(r["uid"], r["user_annotation"], ref[r["uid"]]) for r in wrong if not rounded_away(r)]
    check(not missing and not unexplained and len(rows) > 0 and len(wrong) <= len(rows) // 100,
          f"{label}: {len(rows)} GPU events, each HTA's annotation (not in HTA: {missing[:3]}, differ: "
          f"{unexplained[:3]}; {len(wrong) - len(unexplained)} that HTA's rounding leaves without length)")


nested = os.path.join(data, "annotations_nested.json")
ref = hta("hta_annotations", "nested")
gpu = report(nested, "annotations")
compare_breakdown("nested gpu", gpu, ref["breakdown_gpu"], 0)
compare_breakdown("nested cpu", report(nested, "annotations", side="cpu"), ref["breakdown_cpu"], 0)
# By hand: the GPU annotations before the last step's start (1000 µs): ProfilerStep#1 800, outer 450,
# inner 50 and 30 (nested twice: each counted): sum 80, mean 40, sample stddev sqrt(2 * 10^2 / 1) = 14.142.
inner = [r for r in gpu if r["name"] == "inner"][0]
check((inner["count"], num(inner["sum_us"]), round(num(inner["stddev"]), 3)) == ("2", 80.0, 14.142),
      f"nested: inner counted twice, 80 µs, stddev 14.142 ({inner})")
check(not any(r["name"] == "ProfilerStep#2" for r in gpu), "nested: the last step's GPU annotation left out")
kern = report(nested, "annotation_kernels")
compare_kernels("nested kernels", kern, ref["kernels"])
by_name = {r["name"]: r for r in kern}
check(by_name["k_straddle"]["user_annotation"] == "inner",
      "nested: a kernel overlapping the inner annotation's end is under inner (HTA: overlap, the shortest wins)")
check(by_name["k_outer"]["user_annotation"] == "outer" and by_name["k_inner2"]["user_annotation"] == "inner",
      "nested: outer only; the second inner")
# HTA's step cut is the last ProfilerStep#N start of either side: the GPU annotation ProfilerStep#2
# at 1100 µs; the launch at 1020 is before it (k_step2 stays), that annotation is not (left out).
check(by_name["k_other_stream"]["user_annotation"] == "" and by_name["k_step2"]["user_annotation"] == "",
      "nested: no annotation on stream 8; the last step's kernel stays, its GPU annotation (the cut) does not")
check(by_name["k_inner"]["annotations"] == "ProfilerStep#1 > outer > inner", "nested: the annotation path")
check(by_name["k_long"]["user_annotation"] == "inner"
      and by_name["k_long"]["annotations"] == "ProfilerStep#1 > outer > inner > inner",
      "nested: a 70 ms kernel overlapping every annotation of step 1 is under the shortest")
every = {r["name"]: r for r in report(nested, "annotation_kernels", steps="all")}
check(every["k_step2"]["user_annotation"] == "ProfilerStep#2", "nested @steps all: the last step's kernel and annotation")

if have_shared:
    for name, trace in [("t4_train_fp32", "t4_train_fp32.pt.trace.json"),
                        ("ns_resolution", "hta/ns_resolution_rank0.json.gz"),
                        ("mi250_minitoy", "hta/amd_mi250_minitoy.json.gz"),
                        ("vllm_cudagraph", "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz")]:
        ref = hta("hta_annotations", name)
        path = os.path.join(traces, trace)
        compare_breakdown(name + " gpu", report(path, "annotations"), ref["breakdown_gpu"], 2)
        compare_breakdown(name + " cpu", report(path, "annotations", side="cpu"), ref["breakdown_cpu"], 2)
        compare_kernels(name + " kernels", report(path, "annotation_kernels"), ref["kernels"])
else:
    print("SKIP: shared traces absent (annotations on shared traces)")

# --- kernel sequences --------------------------------------------------------------------------
def compare_sequences(label, rows, ref):
    if "hta_error" in ref:
        check(len(rows) > 0, f"{label}: HTA fails ({ref['hta_error'][:60]}); tlsql answers ({len(rows)} patterns)")
        return
    got = {r["pattern"]: r for r in rows}
    want = {p["pattern"]: p for p in ref["patterns"]}
    check(set(got) == set(want), f"{label}: HTA's {len(want)} patterns (tlsql {len(got)})")
    for p in sorted(set(got) & set(want)):
        g, w = got[p], want[p]
        n, k = int(g["count"]), int(g["kernels"])
        check(n == w["count"] and abs(num(g["gpu_us"]) - w["gpu_us"]) <= 2 * n * k
              and abs(num(g["cpu_us"]) - w["cpu_us"]) <= 2 * n,
              f"{label} {p[:50]}: count {n} / {w['count']}, gpu {g['gpu_us']} / {w['gpu_us']}, "
              f"cpu {g['cpu_us']} / {w['cpu_us']}")
    order = [r["pattern"] for r in rows]
    check(order == [p["pattern"] for p in ref["patterns"]], f"{label}: HTA's order (count, then pattern)")


# Hand-made: the shallowest aten::mm is the one directly under ProfilerStep#2 (depth 1; the first
# step's is under two annotations, depth 3; HTA's cut at 1100 µs keeps it), and it launched one
# kernel: fewer than @length 2, no pattern (HTA: none either).
compare_sequences("nested aten::mm", report(nested, "kernel_sequences", op="aten::mm", length=2),
                  hta("hta_kernel_sequences", "nested"))
# aten::linear right under each ProfilerStep (depth 1): the first launched gemm 600, bias 640, gemm 650
# (by GPU start): 40 + 5 + 40 = 85 µs under 200 µs; the second gemm, bias: 30 + 5 = 35 µs under 50 µs.
# Equal counts: by pattern ('aten::linear|gemm|bias' is a prefix of the other, so first).
rows = report(nested, "kernel_sequences", op="aten::linear", length=2)
compare_sequences("nested aten::linear", rows, hta("hta_kernel_sequences", "nested_linear"))
check([(r["pattern"], r["count"], num(r["gpu_us"]), num(r["cpu_us"]), r["kernels"]) for r in rows]
      == [("aten::linear|gemm|bias", "1", 35.0, 50.0, "2"), ("aten::linear|gemm|bias|gemm", "1", 85.0, 200.0, "3")],
      f"nested aten::linear: the two patterns by hand ({rows})")
check([r["kernels"] for r in report(nested, "kernel_sequences", op="aten::linear", length=3)] == ["3"],
      "nested aten::linear @length 3: the 3-kernel pattern only")

if have_shared:
    for name in ["t4_fp32_linear", "t4_amp_linear", "t4_fp32_backward", "control_optimizer", "ns_resolution"]:
        ref = hta("hta_kernel_sequences", name)
        trace, op, length = (ref["trace"], ref["op"], ref["length"]) if "trace" in ref else \
            ("hta/ns_resolution_rank0.json.gz", "aten::linear", 2)
        compare_sequences(name, report(os.path.join(traces, trace), "kernel_sequences", op=op, length=length), ref)
    top = report(os.path.join(traces, "t4_train_fp32.pt.trace.json"), "kernel_sequences", op="aten::linear",
                 length=2, top=1)
    check(len(top) == 1 and top[0]["count"] == "4", "t4_fp32 @top 1: the most frequent pattern only")
else:
    print("SKIP: shared traces absent (kernel sequences on shared traces)")

# --- stragglers ---------------------------------------------------------------------------------
if have_shared:
    ref = hta("hta_stragglers", "dlrm_8xv100")
    dlrm = os.path.join(traces, "dlrm_8xv100")
    rows = report(dlrm, "stragglers")
    want = {m["rank"]: m for m in ref["metric"]}
    got = {int(r["rank"]): r for r in rows}
    check(set(got) == set(want), f"dlrm: a row per rank HTA measured ({sorted(want)})")
    for rk in sorted(set(got) & set(want)):
        # HTA's times are whole µs over a ~20 ms mean step: 1e-4 of a step is 2 µs.
        check(abs(num(got[rk]["mean_normalized_start"]) - want[rk]["normalized_start"]) < 1e-4
              and got[rk]["kernel"] == want[rk]["kernel"] and int(got[rk]["stream"]) == want[rk]["stream"],
              f"dlrm rank {rk}: normalized start {got[rk]['mean_normalized_start']} / {want[rk]['normalized_start']}")
    for k, ranks in ref["stragglers"].items():
        rows = report(dlrm, "stragglers", candidates=k)
        flagged = sorted(int(r["rank"]) for r in rows if r["potential_straggler"] == "1")
        check(flagged == sorted(ranks), f"dlrm @candidates {k}: HTA's potential stragglers {sorted(ranks)} ({flagged})")
else:
    print("SKIP: shared traces absent (stragglers on the DLRM ranks)")

# Hand-made: three ranks, ProfilerStep#1..3 of 1000 µs (the third left out), one NCCL 2.19+
# all-reduce kernel per step (ncclDevKernel_*: HTA, which takes names starting ncclKernel, finds none).
# t_min = the first step's start; mean step = 2000 µs / 2 steps = 1000 µs; normalized starts:
# step 1: 0.5, 0.6, 0.55; step 2: 1.7, 1.5, 1.6 (ranks 0, 1, 2); means 1.1, 1.05, 1.075.
# @candidates 1: late are rank 1 (step 1) and rank 0 (step 2): a tie at 1 broken by the lower rank: [0].
# @candidates 2: step 1 ranks 1, 2 (>= 0.55), step 2 ranks 0, 2 (>= 1.6): rank 2 twice, then 0: [0, 2].
# @candidates 3: every rank late in both steps: all three.
ranks = [os.path.join(data, f"stragglers_rank{r}.json") for r in range(3)]
for k, late, flagged in [(1, [1, 1, 0], [0]), (2, [1, 1, 2], [0, 2]), (3, [2, 2, 2], [0, 1, 2])]:
    rows = report(ranks, "stragglers", candidates=k)
    check([int(r["late_steps"]) for r in rows] == late
          and [int(r["rank"]) for r in rows if r["potential_straggler"] == "1"] == flagged
          and [round(num(r["mean_normalized_start"]), 6) for r in rows] == [1.1, 1.05, 1.075],
          f"hand-made 3 ranks @candidates {k}: late steps {late}, stragglers {flagged} "
          f"({[(r['late_steps'], r['potential_straggler'], r['mean_normalized_start']) for r in rows]})")
rows = report(ranks[:1], "stragglers")
check([(r["late_steps"], r["steps"], r["potential_straggler"]) for r in rows] == [("2", "2", "1")],
      "one rank (no deviation across ranks; HTA fails): its kernel is the metric, late in both steps")

# --- counters -----------------------------------------------------------------------------------
cupti = os.path.join(data, "cupti_counters.json")
ref = hta("hta_cupti_counters", "cupti_counters")
rows = report(cupti, "counters")
check(len(rows) == len(ref["rows"]) == 3, "cupti: a row per profiler range")
for g, w in zip(rows, ref["rows"]):
    check(int(g["uid"]) == w["index"] and g["name"] == w["name"] and g["top_level_op"] == w["top_level_op"]
          and g["bottom_level_op"] == w["bottom_level_op"] and g["op_stack"] == " > ".join(w["op_stack"]),
          f"cupti {g['name']}: HTA's ops ({g['top_level_op']} / {g['bottom_level_op']})")
    # HTA fills a counter the range lacks with -1; the present ones are equal.
    present = {c: v for c, v in w["counters"].items() if v != -1}
    check(json.loads(g["counters"]) == present, f"cupti {g['name']}: the counters present, HTA's values")
# By hand (HTA's formula: x2 for the fma counters): sgemm_a 2 * 1000 (ffma) + 10 (fmul) + 2 * 7 (hfma)
# = 2024 from 9 counters; relu_kernel lacks fadd and ffma: 300 (fmul) from 7; sgemm_b has none: NULL.
check([(r["sass_flops"], r["sass_counters"]) for r in rows] == [("2024", "9"), ("300", "7"), ("", "0")],
      f"cupti: sass_flops and sass_counters by hand ({[(r['sass_flops'], r['sass_counters']) for r in rows]})")
# The perf model's FLOPs of the bottom op: aten::addmm of [8,16] x [16,32] plus a [32] bias:
# 2*8*16*32 + 8*32 = 8448 FLOP; the second addmm records no Input Dims: NULL.
check(abs(num(rows[0]["model_gflop"]) - 8448e-9) < 1e-15 and rows[2]["model_gflop"] == "",
      f"cupti: model_gflop beside ({rows[0]['model_gflop']}, {rows[2]['model_gflop']!r})")
r = subprocess.run([tlsql, "-q", cupti, "--csv", "-c",
                    "SELECT count(*), count(DISTINCT uid) FROM cupti_counter"], capture_output=True, text=True)
check(r.stdout.split() == ["count(*),count(DISTINCT", "uid)", "18,3"],
      f"cupti_counter: 9 + 8 + 1 values over 3 ranges ({r.stdout.strip()!r})")
# One range more than launches: HTA refuses the rank; tlsql pairs nothing (launch and ops NULL) and
# still gives each range's counters and SASS FLOPs.
with open(cupti) as f:
    doc = json.load(f)
extra = dict(doc["traceEvents"][-1], ts=doc["traceEvents"][-1]["ts"] + 1000, name="unpaired")
doc["traceEvents"].append(extra)
unpaired = os.path.join(tempfile.mkdtemp(prefix="issue49_"), "cupti_unpaired.json")
with open(unpaired, "w") as f:
    json.dump(doc, f)
rows = report(unpaired, "counters")
check(len(rows) == 4 and all(r["launch"] == "" and r["top_level_op"] == "" for r in rows)
      and [r["sass_flops"] for r in rows] == ["2024", "300", "", ""],
      "cupti: 4 ranges, 3 launches: nothing paired, the counters still there")
r = subprocess.run([tlsql, "-q", nested, "--csv", "--report", "counters"], capture_output=True, text=True)
check(r.returncode == 0 and r.stdout.strip().startswith("rank,uid,name") and len(r.stdout.strip().splitlines()) == 1,
      "counters on a trace without profiler ranges: the header, no rows, exit 0")

# --- memory timeline ----------------------------------------------------------------------------
def plot_csv(path, name):
    out = os.path.join(work, name + ".csv")
    r = subprocess.run([tlsql, "-q", path, "-c", f".plot memory {out}"], capture_output=True, text=True)
    check(r.returncode == 0, f".plot memory on {os.path.basename(path)} ({r.stderr.strip()[:200]})")
    with open(out) as f:
        return list(csv.DictReader(f))


def sql_rows(path, sql):
    r = subprocess.run([tlsql, "-q", path, "--csv", "-c", sql], capture_output=True, text=True)
    check(r.returncode == 0, f"{sql[:50]} on {os.path.basename(path)} ({r.stderr.strip()[:200]})")
    return list(csv.DictReader(io.StringIO(r.stdout)))


work = tempfile.mkdtemp(prefix="issue49_")
cats = ["Parameter", "Optimizer state", "Input", "Temporary", "Activation", "Gradient", "Autograd", "Unknown"]
small = os.path.join(data, "memory_timeline_small.raw.json")
ref = hta("hta_memory_timeline", "small")
last = {}  # HTA's sizes after the last of its entries at each time (preexisting memory at the first time)
for t, sz in zip(ref["times"], ref["sizes"]):
    last[t] = sz
got = plot_csv(small, "small")
t0 = min(last)
check([(round(float(r["ms"]) * 1e6) + t0, [int(r[c + "_bytes"]) for c in cats]) for r in got] == sorted(last.items()),
      f"memory timeline: HTA's bytes per category at each time ({len(last)} times)")
# By hand: at 150 µs the version bump moved 300 B from Temporary to Activation (2000 + 300); the
# destroy at 200 µs leaves Parameter 1000 + Optimizer state 500; the view's running totals agree.
rows = sql_rows(small, "SELECT ts, action, bytes, category, category_bytes, total_bytes FROM memory_timeline "
                       "ORDER BY ts, uid")
check([(r["action"], r["category"], r["category_bytes"], r["total_bytes"]) for r in rows]
      == [("PREEXISTING", "Parameter", "1000", "1000"), ("PREEXISTING", "Optimizer state", "500", "1500"),
          ("CREATE", "Activation", "2000", "3500"), ("CREATE", "Temporary", "300", "3800"),
          ("INCREMENT_VERSION", "Temporary", "0", "3500"), ("INCREMENT_VERSION", "Activation", "2300", "3800"),
          ("DESTROY", "Activation", "0", "1500"), ("CREATE", "Unknown", "64", "1564")]
      and rows[0]["ts"] == "100000", f"memory_timeline view by hand ({[tuple(r.values()) for r in rows][:3]})")
odd = os.path.join(data, "memory_timeline_odd.raw.json")
h = sql_rows(odd, 'SELECT "check", count FROM health')
check([(r["check"], r["count"]) for r in h] == [("memory_timeline_bad_row", "2")],
      f"odd timeline: the row that is no 4-array and the action 9 skipped and counted ({h})")
check([r["category"] for r in sql_rows(odd, "SELECT category FROM memory_timeline ORDER BY ts, uid")]
      == ["Parameter", "Unknown", "Activation"], "odd timeline: a null category is Unknown (torch's None)")
plot = os.path.join(data, "memory_timeline_plot.json")
got = plot_csv(plot, "plot")
check([[int(r[c + "_bytes"]) for c in cats] for r in got] == json.load(open(plot))[1]
      and [r["ms"] for r in got] == ["0", "0.1", "0.2"], "plot layout [times, sizes]: the sizes back, per time")
bad = os.path.join(work, "truncated.json")
with open(bad, "w") as f:
    f.write("[[1, 2, 3, 4], [5,")
r = subprocess.run([tlsql, "-q", bad, "-c", "SELECT 1"], capture_output=True, text=True)
check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "truncated.json" in r.stderr,
      f"a truncated timeline: one-line error, exit 1 ({r.stderr.strip()[:120]})")
r = subprocess.run([tlsql, "-q", nested, "-c", f".plot memory {os.path.join(work, 'none.svg')}"],
                   capture_output=True, text=True)
check(r.returncode != 0 and "no [memory] events" in r.stderr, "plot memory on a trace with neither: the error says so")
finish()
