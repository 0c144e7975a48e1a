#!/usr/bin/env python3
"""Analysis reports through the real binary against the reference tools' outputs:
- timeline vs TraceLens gpu_timeline.csv (bert shipped, Falconsai from ../shared): every row within 5 ns
  / 1e-4 % (TraceLens sums float microseconds, so its figures carry sub-ns noise);
- temporal and idle vs HTA's temporal / idle breakdown of hta/trace_diff/control.json.gz: exact
  (HTA rows come out per stream in order of appearance; tlsql orders streams by number).
usage: check_reports.py TLSQL DATA_DIR SHARED_DIR"""
import csv, io, os, subprocess, sys

tlsql, data, shared = sys.argv[1:4]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


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

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
