#!/usr/bin/env python3
"""The critical path (docs/reports.md): the critical_path report, critical_path() and --overlay.
HTA's own result on its critical-path trace (path edges and breakdown), and hand-made CUDA and HIP
traces with float-ns timestamps whose paths are worked out below from HTA's rules.
usage: critical_path.py TLSQL SHARED_DIR WORK_DIR"""
import collections, csv, glob, gzip, io, json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from hta_times import rounded_as_hta  # noqa: E402

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
                   (["-c", "SELECT * FROM critical_path('ProfilerStep', 3)"], "occurs 1 time in trace 0: instance 3"),
                   (["-c", ".parameter set @rank 5", "--report", "critical_path"], "no trace has the rank")]:
    r = run(cuda, *args)
    check(r.returncode == 1 and want in r.stderr, f"{args}: rc {r.returncode}, {r.stderr.strip()[:200]}")

# The report's header on stderr, before its rows: the trace (no rank recorded), the occurrence,
# the window (ProfilerStep#1's 200 us) and the path (95.125 us, worked out above).
r = run(cuda, "--report", "critical_path")
check(r.returncode == 0 and r.stderr == "critical_path: trace 0, ProfilerStep#1 (instance 0 of 'ProfilerStep'), "
      "window 0.200 ms, path 0.095 ms (48% of the window)\n", f"header line ({r.stderr.strip()})")

# A trace without ProfilerStep, the report and --overlay together: one error, said once and
# plainly (no line of the report's SQL, the function's name once), exit code 1, no file.
no_step = os.path.join(work, "no_step.json")
with open(cuda) as f:
    ev = json.load(f)["traceEvents"]
with open(no_step, "w") as f:
    json.dump({"traceEvents": ev[1:]}, f)
out = os.path.join(work, "no_step_overlay.json")
r = run(no_step, "--report", "critical_path", "--overlay", out)
lines = r.stderr.splitlines()
check(r.returncode == 1 and lines == ["error: report critical_path: no host event of trace 0 has 'ProfilerStep' in "
                                      "its name: name another annotation (the report's @annotation), or '' for the "
                                      "whole trace"] and not os.path.exists(out),
      f"no ProfilerStep, --report and --overlay: rc {r.returncode}, {lines}")
r = run(no_step, "--overlay", out)
check(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and r.stderr.startswith("tlsql: error: critical_path: ")
      and not os.path.exists(out), f"no ProfilerStep, --overlay alone: {r.stderr.strip()}")

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

# HTA's own critical paths on the shared traces (tests/data/hta_critical_path: HTA's output, made
# by tests/tools/hta_critical_path.py from HTA's source): the same path edge for edge (its nodes,
# type, weight, the event its time belongs to, bound_by), the same breakdown, and the report's
# header with HTA's window and path length. HTA rounds float-ns times to whole us (start up, end
# down) before anything; tlsql keeps the ns (docs/reports.md), so on such traces the comparison
# runs on a copy rounded as HTA rounds.
data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
copies = {"hta/call_stack/backward_thread.json": "hta_backward_thread.json",  # in tests/data too
          "hta/amd_mi250_minitoy.json.gz": "hta_amd_mi250_minitoy.json.gz",
          "tracelens/h100/bert_small_uncased.json.gz": "tracelens_h100_bert_small_uncased.json.gz"}
# Where tlsql departs from HTA on purpose (docs/reports.md): HTA reads any event with a "stream"
# arg as GPU work, so inductor's triton launcher op (uid 3, args.stream = 0) leaves its host stack;
# tlsql keeps it. Same length and breakdown; the path also passes through that op.
departs = {"triton_example": {3}}


for ref_file in sorted(glob.glob(os.path.join(data, "hta_critical_path", "*.json.gz"))):
    name = os.path.basename(ref_file).removesuffix(".json.gz")
    with gzip.open(ref_file, "rt") as f:
        ref = json.load(f)
    src = os.path.join(shared, "traces", ref["trace"])
    if not os.path.exists(src):
        src = os.path.join(data, copies.get(ref["trace"], "-"))
    if not os.path.exists(src):
        print(f"SKIP: {name}: {ref['trace']} absent")
        continue
    path = rounded_as_hta(src, os.path.join(work, f"{name}_rounded.json"))
    ann = ref["annotation"].replace("'", "''")
    got = [[int(r["from_uid"]), 1 - int(r["from_end"]), int(r["to_uid"]), 1 - int(r["to_end"]), r["type"][14:],
            int(r["dur"]) / 1000, int(r["uid"]) if r["uid"] else None, r["bound_by"]]
           for r in rows(path, "-c", f"SELECT * FROM critical_path('{ann}', {ref['instance']}) ORDER BY step")]
    want = ref["path"]
    total = sum(g[5] for g in got)
    bound, types = collections.Counter(), collections.Counter(g[4] for g in got)
    for g in got:
        if g[7]:
            bound[g[7]] += g[5]
    check(total == ref["total_us"] and dict(bound) == ref["by_bound_us"],
          f"{name}: path {total} us {dict(bound)}, HTA's {ref['total_us']} us {ref['by_bound_us']}")
    if name in departs:
        extra = {x for g in got for x in (g[0], g[2])} - {x for w in want for x in (w[0], w[2])}
        check(extra == departs[name], f"{name}: tlsql's path differs from HTA's by events {sorted(extra)} only")
    else:
        check(dict(types) == ref["by_type"], f"{name}: edges per type {dict(types)}, HTA's {ref['by_type']}")
        same = next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
        check(got == want, f"{name}: {len(got)} edges, HTA's {len(want)}, the same for the first {same}"
              + ("" if got == want or same >= min(len(got), len(want)) else f" ({got[same]} vs {want[same]})"))
    # The report: its header (HTA's rank, window and path length) and HTA's share per class.
    r = run(path, "-c", f".parameter set @annotation '{ann}'", "-c", f".parameter set @instance {ref['instance']}",
            "--report", "critical_path")
    head = r.stderr.splitlines()[0] if r.stderr else ""
    rank = rows(path, "-c", "SELECT coalesce(rank, -1) AS rank FROM trace")[0]["rank"]
    who = f"rank {ref['rank']}" if rank != "-1" else "trace 0"  # (HTA calls a trace without distributedInfo rank 0)
    check(r.returncode == 0 and head.startswith(f"critical_path: {who}, ")
          and f", window {ref['window_us'] / 1000:.3f} ms, path {ref['total_us'] / 1000:.3f} ms (" in head,
          f"{name}: header ({head})")
    report = list(csv.DictReader(io.StringIO(r.stdout)))
    mine = {x["bound_by"]: (float(x["us"]), float(x["pct"])) for x in report}
    check(mine.keys() == ref["by_bound_us"].keys() and all(
        mine[b][0] == us and abs(mine[b][1] - 100 * us / ref["total_us"]) <= 0.005 for b, us in ref["by_bound_us"].items()),
        f"{name}: the report's us and % per class are HTA's ({mine})")

# Stream waits without a sync event (docs/reports.md): a hand-made trace, times in us, uid = index.
#  0 ProfilerStep#1 [0, 1000]; 1 aten::pre [1, 9] > 2 launch L0 [2, 7] of 10 P (stream 7, [8, 15]);
#  3 aten::comm [10, 40] > 4 launch L1 [12, 17] of 11 C (stream 20, [20, 520]), 5 cudaEventRecord
#  [18, 19]; 6 aten::wait [41, 50] > 7 cudaStreamWaitEvent [42, 43]; 8 aten::mm [51, 70] > 9 launch
#  L2 [52, 57] of 12 M (stream 7, [520, 620]). No cuda_sync event.
def waits_trace(name, record="cudaEventRecord", c_us=500):
    def x(cat, n, ts, dur, **args):
        return {"ph": "X", "cat": cat, "name": n, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}

    def k(n, stream, ts, dur, corr):
        return {"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                "args": {"correlation": corr, "device": 0, "stream": stream}}
    ev = [x("user_annotation", "ProfilerStep#1", 0, 1000), x("cpu_op", "aten::pre", 1, 8),
          x("cuda_runtime", "cudaLaunchKernel", 2, 5, correlation=5), x("cpu_op", "aten::comm", 10, 30),
          x("cuda_runtime", "cudaLaunchKernel", 12, 5, correlation=1), x("cuda_runtime", record, 18, 1, correlation=2),
          x("cpu_op", "aten::wait", 41, 9), x("cuda_runtime", "cudaStreamWaitEvent", 42, 1, correlation=3),
          x("cpu_op", "aten::mm", 51, 19), x("cuda_runtime", "cudaLaunchKernel", 52, 5, correlation=4),
          k("P", 7, 8, 7, 5), k("C", 20, 20, c_us, 1), k("M", 7, 520, 100, 4)]
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    return path


def breakdown(path):
    r = run(path, "--report", "critical_path")
    check(r.returncode == 0, f"{os.path.basename(path)}: {r.stderr.strip()[:300]}")
    return [(x["bound_by"], x["us"]) for x in csv.DictReader(io.StringIO(r.stdout))], r.stderr


# HTA's graph alone (the record call renamed cudaGetDevice, so nothing says which stream the event
# was on): stream 7 was empty when L2 launched M (P ran at 8) and when M started, so M gets HTA's
# launch delay L2.s -> M.s = 520 - 52 = 468 us. The host chain to L2.s: pre.s -1-> L0.s -5-> L0.e
# -2-> pre.e -0-> comm.s -2-> L1.s -5-> L1.e -1-> G.s -1-> G.e -21-> comm.e -0-> wait.s -1-> W.s
# -1-> W.e -7-> wait.e -0-> mm.s -1-> L2.s = 48; path 48 + 468 + 100 = 616 us (C's chain: 10 + 8
# + 500 = 518).
hta_only = waits_trace("waits_no_record.json", record="cudaGetDevice")
got, err = breakdown(hta_only)
check(got == [("gpu_kernel_launch_overhead", "468.0"), ("gpu_compute_bound", "100.0"), ("cpu_bound", "48.0")],
      f"waits, no record: HTA's path ({got})")
check("; 1 stream wait (cudaStreamWaitEvent / hipStreamWaitEvent) without a GPU-side sync event, invisible to "
      "HTA's graph: 0 inferred (critical_path's inferred = 1), 1 not placed (1: no event record (cudaEventRecord, "
      "hipEventRecord) before it on its thread; uid 7)\n" in err, f"waits, no record: the header names the wait ({err.strip()})")

# With the record: the wait's thread last launched on stream 20 (C) before the record, and next
# launches on stream 7 (M), so M waits for C: an inferred weightless edge C.e -> M.s, and no
# kernel-kernel delay (the gap ends when C does). Path: pre.s -1-> L0.s -5-> L0.e -2-> pre.e -0->
# comm.s -2-> L1.s -8 (launch delay)-> C.s -500-> C.e -0 (inferred)-> M.s -100-> M.e = 618 us:
# cpu 1 + 5 + 2 + 2 = 10, launch 8, GPU 600.
inferred = waits_trace("waits_inferred.json")
got, err = breakdown(inferred)
check(got == [("gpu_compute_bound", "600.0"), ("cpu_bound", "10.0"), ("gpu_kernel_launch_overhead", "8.0")],
      f"waits inferred: the path through C ({got})")
check("window 1.000 ms, path 0.618 ms (62% of the window); 1 stream wait (cudaStreamWaitEvent / "
      "hipStreamWaitEvent) without a GPU-side sync event, invisible to HTA's graph: 1 inferred (critical_path's "
      "inferred = 1)\n" in err, f"waits inferred: header ({err.strip()})")
got = [(r["type"][14:], r["from_uid"], r["to_uid"], r["dur"]) for r in rows(
    inferred, "-c", "SELECT type, from_uid, to_uid, dur FROM critical_path('ProfilerStep', 0) WHERE inferred")]
check(got == [("sync_dependency", "11", "12", "0")], f"waits inferred: the one inferred edge C -> M ({got})")

# C running 550 us (to 570) while M starts at 520: the GPU did not wait for C, the guess is wrong and
# adds nothing: HTA's path as without the record (616 us; C's chain 10 + 8 + 550 = 568). Taken, the
# edge would have made it 568 + 100 = 668 us through C.
late = waits_trace("waits_contradicted.json", c_us=550)
got, err = breakdown(late)
check(got == [("gpu_kernel_launch_overhead", "468.0"), ("gpu_compute_bound", "100.0"), ("cpu_bound", "48.0")]
      and "1 not placed (1: the next work on the waiting stream started before the inferred one ended; uid 7)" in err,
      f"waits contradicted ({got}, {err})")

finish()
