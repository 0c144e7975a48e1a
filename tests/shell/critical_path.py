#!/usr/bin/env python3
"""The critical path (docs/reports.md): the critical_path report, critical_path() and --overlay.
HTA's own result on its critical-path trace (path edges and breakdown), and hand-made CUDA and HIP
traces with float-ns timestamps whose paths are worked out below from HTA's rules.
usage: critical_path.py TLSQL SHARED_DIR WORK_DIR"""
import collections, csv, io, json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "critical_path")
os.makedirs(work, exist_ok=True)


def run(path, *args):
    return subprocess.run([tlsql, "-q", path, "--csv", *args], capture_output=True, text=True, timeout=300)


def rows(path, *args):
    r = run(path, *args)
    check(r.returncode == 0, f"{os.path.basename(path)}: {r.stderr.strip()[:300]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def trace(hip, kernel_us):
    """ProfilerStep#1 holds op A [1000, 1100] us with a launch L [1010.125, 1020.125] of kernel K
    (from 1030.375, on stream 7) and a device synchronize S [1025.25, 1095.25]; CUDA adds the
    Context Sync event that ends S's wait when K is done. Timestamps in float ns."""
    launch, sync = ("hipLaunchKernel", "hipDeviceSynchronize") if hip else ("cudaLaunchKernel", "cudaDeviceSynchronize")
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 999.5,
           "dur": 200, "args": {}},
          {"ph": "X", "cat": "cpu_op", "name": "aten::A", "pid": 1, "tid": 1, "ts": 1000.0, "dur": 100.0, "args": {}},
          {"ph": "X", "cat": "cuda_runtime", "name": launch, "pid": 1, "tid": 1, "ts": 1010.125, "dur": 10.0,
           "args": {"correlation": 1}},
          {"ph": "X", "cat": "cuda_runtime", "name": sync, "pid": 1, "tid": 1, "ts": 1025.25, "dur": 70.0,
           "args": {"correlation": 2}},
          {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1030.375, "dur": kernel_us,
           "args": {"correlation": 1, "device": 0, "stream": 7}}]
    if not hip:
        ev.append({"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": -1, "ts": 1030.375,
                   "dur": kernel_us + 4, "args": {"correlation": 2, "device": 0, "stream": 4294967295}})
    path = os.path.join(work, f"{'hip' if hip else 'cuda'}.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    return path


edges = "SELECT type, uid, dur, bound_by FROM critical_path('ProfilerStep', 0) ORDER BY step"

# CUDA, K 60 us: A.s -> L.s 10.125 us (A's: an edge from a start belongs to that event), launch
# delay L.s -> K.s 20.25 (queue empty at launch and at start), K 60, K.e -> S.e sync 0, S.e -> A.e
# 4.75 (from an end to an end: A's). 95.125 us; the host chain is 10.125 + 10 + 5.125 + 0 (S blocks:
# no weight) + 4.75 = 30.
cuda = trace(False, 60)
got = [(r["type"][14:], r["uid"], r["dur"], r["bound_by"]) for r in rows(cuda, "-c", edges)]
check(got == [("operator", "1", "10125", "cpu_bound"), ("kernel_launch_delay", "", "20250", "gpu_kernel_launch_overhead"),
              ("operator", "4", "60000", "gpu_compute_bound"), ("sync_dependency", "", "0", ""),
              ("operator", "1", "4750", "cpu_bound")], f"CUDA hand-made path ({got})")
# Shares: cpu 14.875 / 95.125 = 15.64%, launch 20.25 / 95.125 = 21.29%, GPU 60 / 95.125 = 63.07%.
got = [(r["bound_by"], r["us"], r["pct"]) for r in rows(cuda, "--report", "critical_path")]
check(got == [("gpu_compute_bound", "60.0", "63.07"), ("gpu_kernel_launch_overhead", "20.25", "21.29"),
              ("cpu_bound", "14.875", "15.64")], f"CUDA hand-made breakdown ({got})")

# HIP, K 5 us, no sync event: the GPU chain A.s -10.125-> L.s -20.25-> K.s -5-> K.e = 35.375 us
# beats the host chain (30) only because hipDeviceSynchronize blocks (else 30 + 70 = 100).
hip = trace(True, 5)
got = [(r["type"][14:], r["dur"]) for r in rows(hip, "-c", edges)]
check(got == [("operator", "10125"), ("kernel_launch_delay", "20250"), ("operator", "5000")], f"HIP path ({got})")

# Errors: one line, exit code 1.
for args, want in [(["-c", "SELECT * FROM critical_path('nosuch', 0)"], "no host event of trace 0 has 'nosuch'"),
                   (["-c", "SELECT * FROM critical_path('ProfilerStep', 3)"], "occurs 1 times in trace 0: instance 3"),
                   (["-c", ".parameter set @rank 5", "--report", "critical_path"], "no trace has the rank")]:
    r = run(cuda, *args)
    check(r.returncode == 1 and want in r.stderr, f"{args}: rc {r.returncode}, {r.stderr.strip()[:200]}")

# --overlay: every original event kept, the four events of the path marked, one arrow pair per
# launch-delay and sync edge; a failing overlay writes nothing.
out = os.path.join(work, "overlay.json")
r = run(cuda, "--overlay", out)
check(r.returncode == 0, f"--overlay: {r.stderr.strip()[:200]}")
with open(out) as f:
    ov = json.load(f)["traceEvents"]
check(len(ov) == 6 + 4, f"overlay: 6 events and 2 arrows, {len(ov)} events")
check([i for i, e in enumerate(ov[:6]) if e.get("args", {}).get("critical") == 1] == [1, 2, 3, 4],
      "overlay: A, L, S and K marked")
arrows = [(e["ph"], e["cat"][14:], e["ts"]) for e in ov[6:]]
check(arrows == [("s", "kernel_launch_delay", 1010.125), ("f", "kernel_launch_delay", 1030.375),
                 ("s", "sync_dependency", 1089.375), ("f", "sync_dependency", 1094.25)],
      f"overlay arrows (ends 1 us inside their events) ({arrows})")
bad = os.path.join(work, "bad_overlay.json")
r = run(cuda, "-c", ".parameter set @annotation 'nosuch'", "--overlay", bad)
check(r.returncode == 1 and not os.path.exists(bad), f"failing --overlay: rc {r.returncode}, file left")

# HTA's result on its own trace: the same path (edges as (event, type, bound_by, us), a multiset:
# HTA keeps them in a set) and the same breakdown.
cp = os.path.join(shared, "traces", "hta", "critical_path_simple_add.json.gz")
if os.path.exists(cp):
    with open(os.path.join(shared, "expected", "hta", "critical_path_simple_add.json")) as f:
        ref = json.load(f)
    ann = ref["annotation"]
    q = f"SELECT uid, type, bound_by, dur FROM critical_path('{ann}', {ref['instance']})"
    got = collections.Counter((r["uid"] or "nan", r["type"], r["bound_by"], float(r["dur"]) / 1000)
                              for r in rows(cp, "-c", q))
    want = collections.Counter((e["event_idx"].removesuffix(".0"), e["type"], e["bound_by"], float(e["duration"]))
                               for e in ref["path"])
    check(got == want, f"HTA's path: {sum((want - got).values())} edges missing, {sum((got - want).values())} extra")
    report = rows(cp, "-c", f".parameter set @annotation '{ann}'", "-c", f".parameter set @instance {ref['instance']}",
                  "--report", "critical_path")
    total = ref["total_us"]
    for r in report:
        share = 100 * ref["by_bound_us"].get(r["bound_by"], 0) / total
        check(abs(float(r["pct"]) - share) < 1, f"{r['bound_by']}: {r['pct']}% vs HTA's {share:.2f}%")
    check({r["bound_by"] for r in report} == set(ref["by_bound_us"]), "HTA's bound_by classes")
    # A saved database answers the same (critical_path reads it through SQL).
    db = os.path.join(work, "cp.db")
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([tlsql, "-q", cp, "-o", db], check=True, stdin=subprocess.DEVNULL, timeout=300)
    check(rows(db, "-c", f".parameter set @annotation '{ann}'", "-c", f".parameter set @instance 1",
               "--report", "critical_path") == report, "saved database: same breakdown")
else:
    print("skip: shared critical-path trace absent")

finish()
