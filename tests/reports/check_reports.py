#!/usr/bin/env python3
"""Analysis reports through the real binary against the reference tools' outputs:
- timeline vs TraceLens gpu_timeline.csv (bert shipped, Falconsai from ../shared): every row within 5 ns
  / 1e-4 % (TraceLens sums float microseconds, so its figures carry sub-ns noise);
- temporal and idle vs HTA's temporal / idle breakdown of hta/trace_diff/control.json.gz: exact
  (HTA rows come out per stream in order of appearance; tlsql orders streams by number); launch
  stats vs HTA's describe() of get_cuda_kernel_launch_stats for that trace, every cell; temporal and
  launch stats on the two H100 traces whose steps open under python frames (tests/data/hta_step_cut.json);
- kernels vs TraceLens kernel_summary.csv (bert, Falconsai, Qwen): launches and µs per kernel name;
- collectives on the 8 DLRM ranks: the first AllReduce against numbers read by hand from the JSON;
- timeline on the vLLM TP4 trace: communication = NCCL and vLLM's custom all-reduce kernels
  (cross_device_reduce), their union computed here from the JSON, which is TraceLens's 24.18 ms
  (issue 17); inductor's fused triton_..._all_reduce_... kernels stay computation.
usage: check_reports.py TLSQL DATA_DIR SHARED_DIR"""
import csv, io, json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared = sys.argv[1:4]


def report(trace, name, *params):
    args = [tlsql, trace, "--csv"]
    for k, v in params:
        args += ["-c", f".parameter set {k} {v}"]
    r = subprocess.run(args + ["-c", f".report {name}"], capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"{name} on {os.path.basename(trace)}: exit 0 {r.stderr.strip()}")
    return list(csv.reader(io.StringIO(r.stdout)))


def describe(xs):
    """pandas' describe(): sample std (n - 1), quartiles by linear interpolation."""
    xs, n = sorted(xs), len(xs)
    mean = sum(xs) / n
    q = lambda p: xs[int((n - 1) * p)] + ((n - 1) * p % 1) * (xs[min(int((n - 1) * p) + 1, n - 1)] - xs[int((n - 1) * p)])
    return [n, mean, (sum((x - mean) ** 2 for x in xs) / (n - 1)) ** 0.5, xs[0], q(0.25), q(0.5), q(0.75), xs[-1]]


def tracelens(name):
    return os.path.join(shared, "expected", "tracelens", name, "gpu_timeline.csv")


timelines = [(os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz"), tracelens("h100_gaunernst_bert-small-uncased")),
             (os.path.join(shared, "traces", "tracelens", "h100", "Falconsai_nsfw_image_detection.json.gz"),
              tracelens("h100_Falconsai_nsfw_image_detection"))]
for trace, ref in timelines:
    if not os.path.exists(trace) or not os.path.exists(ref):
        print(f"skip {trace}: not present")
        continue
    got, want = report(trace, "timeline"), list(csv.reader(open(ref)))
    check(got[0] == want[0] and [r[0] for r in got] == [r[0] for r in want], f"timeline {os.path.basename(trace)}: layout")
    for g, w in zip(got[1:], want[1:]):
        check(abs(float(g[1]) - float(w[1])) <= 5e-6 and abs(float(g[2]) - float(w[2])) <= 1e-4,
              f"timeline {os.path.basename(trace)} {w[0]}: {g[1:]} vs TraceLens {w[1:]}")

# kernels (every launch, @steps 'all') against TraceLens's kernel_summary.csv, summed per kernel name over
# its parent-op rows: launches and µs of every name (TraceLens sums float µs: within 1e-3 µs).
summaries = [(os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz"), "h100_gaunernst_bert-small-uncased"),
             (os.path.join(shared, "traces", "tracelens", "h100", "Falconsai_nsfw_image_detection.json.gz"),
              "h100_Falconsai_nsfw_image_detection"),
             (os.path.join(shared, "traces", "tracelens", "h100", "Qwen1.5_0.5B_chat.json.gz"), "h100_Qwen1.5_0.5B_chat")]
for trace, ref in summaries:
    ref = os.path.join(shared, "expected", "tracelens", ref, "kernel_summary.csv")
    if not os.path.exists(trace) or not os.path.exists(ref):
        print(f"skip {trace}: not present")
        continue
    want = {}
    for r in csv.DictReader(open(ref, encoding="utf-8")):
        n, us = want.get(r["Kernel name"], (0, 0.0))
        want[r["Kernel name"]] = (n + int(r["Kernel duration (µs)_count"]), us + float(r["Kernel duration (µs)_sum"]))
    rows = report(trace, "kernels", ("@top", "100000"))
    got = {r[0]: (int(r[1]), float(r[2])) for r in rows[1:]}
    bad = [k for k, (n, us) in want.items() if k not in got or got[k][0] != n or abs(got[k][1] - us) > 1e-3]
    check(not bad and len(got) == len(want),
          f"kernels {os.path.basename(trace)} vs TraceLens's kernel summary: {len(want)} kernel names' launches and µs ({bad[:2]})")

control = os.path.join(shared, "traces", "hta", "trace_diff", "control.json.gz")
if os.path.exists(control):
    hta = os.path.join(shared, "expected", "hta")
    got, want = report(control, "temporal"), list(csv.reader(open(os.path.join(hta, "temporal_trace_diff_control.csv"))))
    check(got[1:] == want[1:], f"temporal vs HTA: {got[1:]} vs {want[1:]}")
    check([c.replace("(us)", "") for c in got[0]] == [c.replace("(us)", "") for c in want[0]], "temporal: HTA's columns")
    got, want = report(control, "idle"), list(csv.reader(open(os.path.join(hta, "idle_trace_diff_control.csv"))))
    check(got[0] == want[0], "idle: HTA's columns")
    check(sorted(got[1:]) == sorted(want[1:]), "idle vs HTA: every (stream, category) row equal")
    # launch: HTA's get_cuda_kernel_launch_stats(...).describe() for the same trace, every cell. The
    # rows come from the launch_stats view (the report's own rows), described here as pandas does:
    # sample std (n - 1), quartiles by linear interpolation.
    r = subprocess.run([tlsql, control, "--csv", "-c",
                        "SELECT correlation, cpu_duration, gpu_duration, launch_delay FROM launch_stats "
                        "WHERE hta_call AND complete"], capture_output=True, text=True, timeout=600)
    rows = list(csv.reader(io.StringIO(r.stdout)))[1:]
    want = list(csv.reader(open(os.path.join(hta, "launch_stats_describe_trace_diff_control.csv"))))

    cols = [describe([float(row[c]) for row in rows]) for c in range(4)]
    check(want[0][1:] == ["correlation", "cpu_duration", "gpu_duration", "launch_delay"] and
          [w[0] for w in want[1:]] == ["count", "mean", "std", "min", "25%", "50%", "75%", "max"], "launch: HTA's layout")
    for i, w in enumerate(want[1:]):
        for c in range(4):
            check(abs(cols[c][i] - float(w[c + 1])) <= 1e-9 * max(1, abs(float(w[c + 1]))),
                  f"launch vs HTA {w[0]} {want[0][c + 1]}: {cols[c][i]} vs {w[c + 1]}")
    got = report(control, "launch")
    check(got[1][1] == "7875" and got[1][5:8] == ["14.61", "52.565", "2014.605"] and got[1][8] == "11527.0",
          f"launch report vs HTA (7875 launches, means 14.61 / 52.565 / 2014.605 us, max delay 11527): {got[1]}")
    got = report(control, "launch", ("@steps", "'all'"), ("@launches", "'all'"))
    check(got[1][1] == "9450", f"launch with @steps 'all' @launches 'all': every linked launch (9450): {got[1]}")
    got = report(control, "idle", ("@threshold_us", "1000000"))
    check(all(r[2] != "other" or float(r[3]) == 0 for r in got[1:]), "idle: a huge threshold leaves no 'other' time")
else:
    print("skip HTA comparisons: ../shared absent")

# The step cut where the ProfilerSteps open under python frames (with_stack=True traces, depth 2
# here): HTA's temporal breakdown and launch stats, run as they are (they drop the last step), from
# tests/data/hta_step_cut.json (tests/tools/hta_step_cut.py). A cut that missed the steps kept the
# last step's launches (48, not HTA's 32, on hostA).
hta_cut = json.load(open(os.path.join(data, "hta_step_cut.json")))
for case, rel in [("h100_transformer_hostA", "h100_transformer_step_hostA.pt.trace.json"),
                  ("h100_transformer_hostB", "h100_transformer_step_hostB.pt.trace.json")]:
    trace = os.path.join(shared, "traces", rel)
    if not os.path.exists(trace):
        continue
    want = hta_cut[case]
    got = report(trace, "temporal")
    row = dict(zip(got[0], got[1]))
    check(all(abs(float(row[k]) - v) < 1e-9 for k, v in want["temporal"].items()),
          f"temporal vs HTA on {case}: {row} vs {want['temporal']}")
    r = subprocess.run([tlsql, trace, "--csv", "-c", "SELECT cpu_duration, gpu_duration, launch_delay FROM launch_stats "
                        "WHERE hta_call AND complete"], capture_output=True, text=True, timeout=600)
    rows = list(csv.reader(io.StringIO(r.stdout)))[1:]
    keys = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]
    for c, col in enumerate(["cpu_duration", "gpu_duration", "launch_delay"]):
        got_d = describe([float(x[c]) for x in rows]) if rows else [0] * 8
        check(all(abs(g - want["launch_describe"][col][k]) <= 1e-9 * max(1, abs(g)) for g, k in zip(got_d, keys)),
              f"launch stats vs HTA on {case}, {col}: {got_d} vs {want['launch_describe'][col]}")

# collectives on the 8 DLRM ranks: the first AllReduce, read by hand from each rankN.pt.trace.json
# (ts, dur in µs): 0 (...436304, 246) 1 (...436240, 307) 2 (...436347, 198) 3 (...436255, 291)
# 4 (...436454, 95) 5 (...436451, 96) 6 (...436336, 213) 7 (...436463, 86), ts prefix 1694128201.
# latency = min dur = 86; skew = 436463 - 436240 = 223; straggler = rank 7 (started last).
dlrm = [os.path.join(shared, "traces", "dlrm_8xv100", f"rank{r}.pt.trace.json") for r in range(8)]
if all(os.path.exists(p) for p in dlrm):
    r = subprocess.run([tlsql] + dlrm + ["--csv", "-c", ".report collectives"], capture_output=True, text=True, timeout=600)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    ar = [x for x in rows if x["collective"] == "AllReduce" and x["seq"] == "1"]
    check(len(ar) == 1, "collectives: one first AllReduce instance")
    if ar:
        x = ar[0]
        want = {"0": 246, "1": 307, "2": 198, "3": 291, "4": 95, "5": 96, "6": 213, "7": 86}
        check(x["ranks"] == "8" and {k: float(v) for k, v in json.loads(x["durations_us"]).items()} == want,
              "collectives: per-rank durations " + x["durations_us"])
        check(float(x["latency_us"]) == 86 and float(x["skew_us"]) == 223 and x["straggler_rank"] == "7",
              f"collectives: latency {x['latency_us']}, skew {x['skew_us']}, straggler {x['straggler_rank']}")
        check(x["size_bytes"] == "" and x["algbw_gbps"] == "", "collectives: no size recorded -> no bandwidth")

vllm = os.path.join(shared, "traces", "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz")
if os.path.exists(vllm):
    import gzip
    events = json.loads(gzip.open(vllm).read())["traceEvents"]
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "kernel"
                   and ("nccl" in e["name"] or "cross_device_reduce" in e["name"]))
    comm_us, end = 0.0, None
    for a, b in spans:
        comm_us += max(0.0, b - max(a, end if end is not None else a))
        end = b if end is None else max(end, b)
    got = {r[0]: float(r[1]) for r in report(vllm, "timeline")[1:]}
    # (1 µs: tlsql rounds each float-µs ts and dur to whole ns, 1,620 kernels)
    check(abs(got["total_comm_time"] - comm_us / 1e3) < 1e-3 and abs(got["total_comm_time"] - 24.18) < 0.005,
          f"vLLM timeline: communication {got['total_comm_time']} ms = NCCL + custom all-reduce {comm_us / 1e3} ms "
          "(TraceLens 24.18 ms)")
    # gpu_class_of(kind, name), which the reports use, is gpu_class(uid) under every rule
    r = subprocess.run([tlsql, vllm, "--csv", "-c",
                        "SELECT count(*) FROM gpu g, (SELECT 'tlsql' AS r UNION ALL SELECT 'tracelens' UNION ALL "
                        "SELECT 'hta') WHERE gpu_class(g.uid, r) IS NOT gpu_class_of(g.kind, g.name, r)"],
                       capture_output=True, text=True, timeout=600)
    check(r.returncode == 0 and r.stdout.split() == ["count(*)", "0"], f"gpu_class_of = gpu_class: {r.stdout} {r.stderr}")

finish()
