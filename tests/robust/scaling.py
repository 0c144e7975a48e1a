#!/usr/bin/env python3
"""Crafted traces that made a loader stage quadratic load in (near) linear time: each must finish
well inside its time-out, which a quadratic stage overruns many times over (figures next to each,
measured on the quadratic code in a release build). Not a benchmark: a hang check.
usage: scaling.py TLSQL WORK_DIR"""
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, work = sys.argv[1:3]
work = os.path.join(work, "scaling")
os.makedirs(work, exist_ok=True)
TIMEOUT = 120


def load(name, events, query, expect):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(json.dumps({"traceEvents": events}, separators=(",", ":")))
    try:
        r = subprocess.run([tlsql, path, "--csv", "-c", query], capture_output=True, text=True, timeout=TIMEOUT)
        check(r.returncode == 0 and r.stdout == expect, f"{name} ({len(events)} events): {r.stdout!r} == {expect!r} {r.stderr.strip()}")
    except subprocess.TimeoutExpired:
        check(False, f"{name} ({len(events)} events): loads within {TIMEOUT} s")


def x(cat, name, pid, tid, ts, dur, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


# Each event starts inside the previous one and outlives it (600k events: > 100 s quadratic).
n = 600000
load("overlaps.json", [x("cpu_op", "op", 1, 1, i, 2) for i in range(n)],
     "SELECT count(*), count(parent), h.count FROM event, health h WHERE h.\"check\" = 'overlap_not_nested'",
     f"count(*),count(parent),count\n{n},0,{n - 1}\n")

# Graph launches (10 kernels each) under a 30,000-deep python stack (~70 s quadratic).
depth, launches = 30000, 30000
ev = [x("python_function", f"f{d}", 1, 1, d, 10**9 - 2 * d) for d in range(depth)]
for l in range(launches):
    ev.append(x("cuda_runtime", "cudaGraphLaunch", 1, 1, depth + 10 * l, 5, correlation=l + 1))
    ev += [x("kernel", "k", 0, 7, depth + 10 * l + k, 1, correlation=l + 1, stream=7, device=0) for k in range(10)]
load("graphs.json", ev, "SELECT count(*), max(depth) FROM kernel k JOIN launch_link l ON l.gpu = k.uid WHERE l.launcher = l.runtime",
     f"count(*),max(depth)\n{launches * 10},{depth + 1}\n")

# 300,000 processes, each a ProfilerStep on its main thread and an op on a second thread (~220 s quadratic).
procs = 300000
ev = []
for p in range(1, procs + 1):
    ev += [x("user_annotation", "ProfilerStep#1", p, p, 0, 100), x("cpu_op", "op", p, p + 10**7, 5, 1)]
load("processes.json", ev, "SELECT count(*) FROM event e JOIN event a ON a.uid = e.parent WHERE e.name = 'op' AND a.pid = e.pid",
     f"count(*)\n{procs}\n")
finish()
