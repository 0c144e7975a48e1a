#!/usr/bin/env python3
"""step_busy([schema]) (udf/stats/step_busy.cpp): per (trace, step) the GPU events and the ns their
union covers, which `mfu` and its note read. It must give what the gpu view's own GROUP BY with
union_ns gives (another path over the same rows), rows and order, for files loaded and saved, two
traces and a diff's second schema; and, on a trace made here, the figures worked out by hand below.
usage: step_busy.py TLSQL DATA_DIR TMP_DIR [SHARED_DIR] (tests/CMakeLists.txt: every tests/functions/*.py)"""
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import function_cases  # noqa: E402
from checks import check, finish  # noqa: E402

tlsql, data, tmp = sys.argv[1:4]
shared = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(tmp, exist_ok=True)
GROUP = ("SELECT trace, step, count(*), union_ns(ts, end) FROM {s}.gpu WHERE step IS NOT NULL "
         "GROUP BY trace, step ORDER BY trace, step")


def run(args, *sql):
    return function_cases.run(tlsql, args, *sql)


def both(args, schema):
    return function_cases.two_answers(tlsql, args, f"SELECT * FROM step_busy('{schema}')", GROUP.format(s=schema))


files = [os.path.join(data, n) for n in ("queue_steps.json", "hta_trace_compare_base.json.gz", "stragglers_rank0.json")]
if shared and os.path.isdir(os.path.join(shared, "traces")):  # overlapping streams, NCCL, many steps
    files += [os.path.join(shared, "traces", "dlrm_8xv100", "rank0.pt.trace.json"),
              os.path.join(shared, "traces", "hta", "trace_diff", "control.json.gz")]
for path in files:
    for source in function_cases.loaded_and_saved(tlsql, path, tmp, "step_busy_"):
        mine, theirs = both([source], "main")
        check(len(mine) > 0 and mine == theirs, f"{os.path.basename(source)}: step_busy == GROUP BY ({len(mine)} rows)")
a, b = os.path.join(data, "queue_steps.json"), os.path.join(data, "hta_trace_compare_base.json.gz")
mine, theirs = both([a, b], "main")
check(len(mine) > 0 and mine == theirs and {m.split(",")[0] for m in mine} == {"0", "1"}, "two traces: grouped apart")
mine, theirs = both([a, "--diff", b], "other")
check(len(mine) > 0 and mine == theirs, "the diff's other schema")

# By hand: ProfilerStep#1 [0, 100) and #2 [100, 200) us. Step 1 launches k1 [10, 30), k2 [20, 50)
# (overlapping: [10, 50) = 40 us) and a copy [60, 70): 50 us busy from 3 events. Step 2 launches k3
# [150, 160) and a memset [155, 170): [150, 170) = 20 us from 2. k4, launched at 300 us after both
# steps, has no step: in neither.
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100}]
for i, (cat, name, call, cpu, ts, dur) in enumerate([
        ("kernel", "k1", "cudaLaunchKernel", 1, 10, 20), ("kernel", "k2", "cudaLaunchKernel", 3, 20, 30),
        ("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", "cudaMemcpyAsync", 5, 60, 10),
        ("kernel", "k3", "cudaLaunchKernel", 101, 150, 10),
        ("gpu_memset", "Memset (Device)", "cudaMemsetAsync", 103, 155, 15),
        ("kernel", "k4", "cudaLaunchKernel", 300, 300, 5)]):
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": 1, "tid": 1, "ts": cpu, "dur": 2,
               "args": {"correlation": i + 1}})
    ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
               "args": {"correlation": i + 1, "device": 0, "stream": 7}})
small = os.path.join(tmp, "step_busy_small.json")
json.dump({"traceEvents": ev}, open(small, "w"))
r = run([small], "SELECT * FROM step_busy()")
want = ["0,1,3,50000", "0,2,2,20000"]
check(r.returncode == 0 and r.stdout.splitlines()[1:] == want,
      f"by hand: {r.stdout.splitlines()[1:]} vs {want} ({r.stderr.strip()[:160]})")
# What mfu's note makes of it: two traces (ranks 0 and 1), each with ProfilerStep#1 [0, 20) and #2
# [100, 120) us whose kernel runs 40 us from 5 us into the step: busy longer than the step in all
# four. The note lists the capped steps by step, then trace, loaded or saved.
late = []
for t in (0, 1):
    ev2 = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}", "pid": 1, "tid": 1, "ts": 100 * (k - 1),
            "dur": 20} for k in (1, 2)]
    for k in (1, 2):
        ev2.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                    "ts": 100 * (k - 1) + 1, "dur": 2, "args": {"correlation": k}})
        ev2.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100 * (k - 1) + 5, "dur": 40,
                    "args": {"correlation": k, "device": 0, "stream": 7}})
    late.append(os.path.join(tmp, f"step_busy_late{t}.json"))
    json.dump({"traceEvents": ev2, "distributedInfo": {"rank": t}}, open(late[-1], "w"))
late_db = os.path.join(tmp, "step_busy_late.db")
check(run(late + ["-o", late_db], "SELECT 1").returncode == 0, "late: saved")
notes = []
for source in (late, [late_db]):
    r = subprocess.run([tlsql, *source, "--report", "mfu"], capture_output=True, text=True, timeout=120)
    notes.append([line for line in r.stderr.splitlines() if "capped at 100" in line])
check(notes[0] and notes[0] == notes[1] and "in 4 step(s) (1, 1, 2, 2)" in notes[0][0],
      f"mfu's capped steps by step, then trace, loaded and saved: {notes}")

r = run([small], "SELECT * FROM step_busy('nowhere')")
check(r.returncode == 1 and "step_busy" in r.stderr and "nowhere" in r.stderr,
      f"an unknown schema is refused by name ({r.stderr.strip()[:160]})")
finish()
