#!/usr/bin/env python3
"""The cpu_ops report (docs/reports.md) and `ops` on traces without GPU events, through the real binary.
cpu_ops is torch.profiler's key_averages().table(): per op name, calls, self CPU (the op's duration
less its children's: the host ops nested in it on its own thread, python frames passed over), CPU
total (inclusive), both as % of the sum of all self time, and the average. References:
- a hand-made trace with every figure worked out below (python frames between ops, a second
  thread's root that tlsql hangs under the main thread's ProfilerStep but torch does not count as
  its child);
- the two shared CPU-only traces, recomputed here from the raw JSON: each thread's events nested
  by time (a stack over events sorted by start, longest first), self = dur - children's durs.
`ops` on a trace without GPU events prints the cpu_ops rows and says so on stderr; on a GPU trace
it stays the ops report.
usage: cpu_ops.py TLSQL DATA_DIR SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, subprocess, sys
from decimal import ROUND_HALF_UP, Decimal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared, work = sys.argv[1:5]
work = os.path.join(work, "cpu_ops")
os.makedirs(work, exist_ok=True)


def run(path, report):
    r = subprocess.run([tlsql, "-q", path, "--csv", "-c", ".parameter set @top 100000", "--report", report],
                       capture_output=True, text=True, timeout=300)
    return r, list(csv.DictReader(io.StringIO(r.stdout)))


# Hand-made (µs). Thread 1: ProfilerStep#1 [0, 1000] holds aten::linear [100, 500] and aten::relu
# [600, 700]; aten::linear holds a python frame [150, 450] holding aten::addmm [160, 360] (which
# holds aten::empty [170, 190]) and aten::addmm [370, 420]. Thread 2 (autograd's backward thread):
# evaluate_function [500, 800] holding aten::mm [550, 700].
#   self: ProfilerStep#1 1000 - (400 + 100) = 500 (thread 2's 300 not subtracted: another thread)
#         aten::linear 400 - (200 + 50) = 150 (its addmms, through the python frame)
#         aten::addmm (200 - 20) + 50 = 230, total 250, avg 125; aten::empty 20; aten::relu 100
#         evaluate_function 300 - 150 = 150; aten::mm 150
#   sum of self = 500 + 150 + 230 + 20 + 100 + 150 + 150 = 1300 µs
#   %: ProfilerStep 500/1300 = 38.46, total 1000/1300 = 76.92; addmm 230/1300 = 17.69, 250/1300 =
#   19.23; linear 11.54, 400/1300 = 30.77; mm 11.54; evaluate_function 11.54, 300/1300 = 23.08;
#   relu 100/1300 = 7.69; empty 20/1300 = 1.54. Rows by self time, then name.
def x(name, tid, ts, dur, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": {}}


hand = [x("ProfilerStep#1", 1, 0, 1000, "user_annotation"), x("aten::linear", 1, 100, 400),
        x("model.py(10): forward", 1, 150, 300, "python_function"), x("aten::addmm", 1, 160, 200),
        x("aten::empty", 1, 170, 20), x("aten::addmm", 1, 370, 50), x("aten::relu", 1, 600, 100),
        x("autograd::engine::evaluate_function: AddmmBackward0", 2, 500, 300), x("aten::mm", 2, 550, 150)]
path = os.path.join(work, "hand.json")
with open(path, "w") as f:
    json.dump({"traceEvents": hand}, f)
want = [("ProfilerStep#1", "1", "0.5", "38.46", "1.0", "76.92", "1.0"),
        ("aten::addmm", "2", "0.23", "17.69", "0.25", "19.23", "0.125"),
        ("aten::linear", "1", "0.15", "11.54", "0.4", "30.77", "0.4"),
        ("aten::mm", "1", "0.15", "11.54", "0.15", "11.54", "0.15"),
        ("autograd::engine::evaluate_function: AddmmBackward0", "1", "0.15", "11.54", "0.3", "23.08", "0.3"),
        ("aten::relu", "1", "0.1", "7.69", "0.1", "7.69", "0.1"),
        ("aten::empty", "1", "0.02", "1.54", "0.02", "1.54", "0.02")]
cols = ("name", "count", "self_cpu_ms", "self_cpu_pct", "cpu_total_ms", "cpu_total_pct", "cpu_avg_ms")
r, rows = run(path, "cpu_ops")
check(r.returncode == 0 and [tuple(row[c] for c in cols) for row in rows] == want,
      f"hand-made: cpu_ops as worked out ({[tuple(row[c] for c in cols) for row in rows]} {r.stderr.strip()})")
r, ops_rows = run(path, "ops")
check(r.returncode == 0 and ops_rows == rows and "no GPU events" in r.stderr and "cpu_ops" in r.stderr,
      f"hand-made: ops without GPU events prints cpu_ops and says so ({r.stderr.strip()})")


def ns(v):
    return int(Decimal(str(v)) * 1000)


def ms3(v_ns):
    return Decimal(v_ns) / 10**6


HOST = {"cpu_op", "Operator", "user_annotation", "cuda_runtime", "Runtime", "cuda_driver"}


def reference(events):
    """Per name: [count, self ns, total ns], nesting each thread's host events by time."""
    per_thread = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in HOST and "dur" in e:
            per_thread.setdefault((str(e["pid"]), str(e["tid"])), []).append((ns(e["ts"]), ns(e["dur"]), e["name"]))
    out = {}
    for evs in per_thread.values():
        evs.sort(key=lambda v: (v[0], -v[1]))
        self_ns = [d for _, d, _ in evs]
        stack = []  # indices of the open events
        for k, (ts, dur, _) in enumerate(evs):
            while stack and evs[stack[-1]][0] + evs[stack[-1]][1] < ts + dur:
                stack.pop()  # (a parent must end at or after its child)
            if stack:
                self_ns[stack[-1]] -= dur
            stack.append(k)
        for k, (_, dur, name) in enumerate(evs):
            c = out.setdefault(name, [0, 0, 0])
            c[0] += 1
            c[1] += max(0, self_ns[k])
            c[2] += dur
    return out


def compare(name, events, exact):
    ref = reference(events)
    p = os.path.join(shared, "traces", name)
    r, rows = run(p, "cpu_ops")
    check(r.returncode == 0, f"{name}: cpu_ops runs ({r.stderr.strip()[:200]})")
    total_self = sum(v[1] for v in ref.values())
    got = {row["name"]: row for row in rows}
    check(set(got) == set(ref), f"{name}: the op names ({len(got)} vs {len(ref)} in the JSON)")
    tol = Decimal(0) if exact else Decimal("0.0011")  # float-µs traces: a rounding tie may go either way
    bad = []
    for n, (count, s, t) in ref.items():
        row = got.get(n)
        if not row:
            continue
        ok = (row["count"] == str(count)
              and abs(Decimal(row["self_cpu_ms"]) - ms3(s).quantize(Decimal("0.001"), ROUND_HALF_UP)) <= tol
              and abs(Decimal(row["cpu_total_ms"]) - ms3(t).quantize(Decimal("0.001"), ROUND_HALF_UP)) <= tol
              and abs(float(row["self_cpu_pct"]) - 100.0 * s / total_self) <= 0.0051
              and abs(float(row["cpu_total_pct"]) - 100.0 * t / total_self) <= 0.0051)
        if not ok:
            bad.append((n, count, s, t, row))
    check(not bad, f"{name}: every op's calls, self and total ms and % as the JSON says ({bad[:3]})")
    order = [row["name"] for row in rows]
    check(order == sorted(order, key=lambda n: (-ref[n][1], n)), f"{name}: largest self time first")
    if any(e.get("cat") == "kernel" for e in events):
        return ref
    # ops: the same rows, said on stderr
    r2, ops_rows = run(p, "ops")
    check(ops_rows == rows and "cpu_ops" in r2.stderr, f"{name}: ops prints cpu_ops ({r2.stderr.strip()})")
    return ref


# (resnet_act_checkpoint: a GPU trace, python frames between ops, runtime calls, two CPU threads;
# cpu_ops runs on any trace, and `ops` there stays the ops report)
for name, exact in (("cpu_only_seq2seq_2022.json", True), ("hta/cpu_only_rank34.json.gz", False),
                    ("tracelens/mi300/resnet_act_checkpoint.json.gz", False)):
    p = os.path.join(shared, "traces", name)
    if not os.path.exists(p):
        print(f"skip {p}: not present")
        continue
    with (gzip.open if p.endswith(".gz") else open)(p, "rt") as f:
        ref = compare(name, json.load(f)["traceEvents"], exact)
    if name.startswith("hta/"):
        # By hand from the JSON: ProfilerStep#551 (tid 1074, 210109.162 µs) holds no event of its
        # thread (the aten::empty calls start after it ends); the gloo:all_reduce ranges on threads
        # 3553 / 3554 are their threads' roots, not its children: self = total = 210109162 ns.
        check(ref["ProfilerStep#551"][1:] == [210109162, 210109162], "rank34: ProfilerStep#551 by hand")

# A trace with GPU events: ops stays the ops report (GPU time), and says nothing about cpu_ops.
bert = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
r, rows = run(bert, "ops")
check(r.returncode == 0 and rows and "gpu_us" in rows[0] and "cpu_ops" not in r.stderr,
      f"bert (GPU): ops is the ops report ({r.stderr.strip()[:200]})")
finish()
