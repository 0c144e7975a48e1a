#!/usr/bin/env python3
"""Analysis reports through the real binary against the reference tools' outputs:
- timeline vs TraceLens gpu_timeline.csv (bert shipped, Falconsai from ../shared): every row within 5 ns
  / 1e-4 % (TraceLens sums float microseconds, so its figures carry sub-ns noise);
- temporal and idle vs HTA's temporal / idle breakdown of hta/trace_diff/control.json.gz: exact
  (HTA rows come out per stream in order of appearance; tlsql orders streams by number);
- collectives on the 8 DLRM ranks: the first AllReduce against numbers read by hand from the JSON.
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

control = os.path.join(shared, "traces", "hta", "trace_diff", "control.json.gz")
if os.path.exists(control):
    hta = os.path.join(shared, "expected", "hta")
    got, want = report(control, "temporal"), list(csv.reader(open(os.path.join(hta, "temporal_trace_diff_control.csv"))))
    check(got[1:] == want[1:], f"temporal vs HTA: {got[1:]} vs {want[1:]}")
    check([c.replace("(us)", "") for c in got[0]] == [c.replace("(us)", "") for c in want[0]], "temporal: HTA's columns")
    got, want = report(control, "idle"), list(csv.reader(open(os.path.join(hta, "idle_trace_diff_control.csv"))))
    check(got[0] == want[0], "idle: HTA's columns")
    check(sorted(got[1:]) == sorted(want[1:]), "idle vs HTA: every (stream, category) row equal")
    got = report(control, "idle", ("@threshold_us", "1000000"))
    check(all(r[2] != "other" or float(r[3]) == 0 for r in got[1:]), "idle: a huge threshold leaves no 'other' time")
else:
    print("skip HTA comparisons: ../shared absent")

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

finish()
