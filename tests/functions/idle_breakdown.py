#!/usr/bin/env python3
"""idle_breakdown([steps [, threshold_us [, schema]]]) (udf/analysis/idle_breakdown.cpp): HTA's GPU
idle time breakdown per trace, stream and category, which the idle report reads. It must give what
HTA's rule written as SQL gives (below: the gpu_steps view in scope, lag() over each stream, the
CASE), for files loaded and saved, each scope and two thresholds; and, on a trace made here, the
figures worked out by hand below.
usage: idle_breakdown.py TLSQL DATA_DIR TMP_DIR [SHARED_DIR] (tests/CMakeLists.txt: every tests/functions/*.py)"""
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import function_cases  # noqa: E402
from checks import check, finish  # noqa: E402

tlsql, data, tmp = sys.argv[1:4]
shared = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(tmp, exist_ok=True)
# HTA's rule in SQL: a gap before each GPU event on its stream, in (ts, uid) order; host_wait when
# its launch call started after the previous event ended, kernel_wait under the threshold, else other.
RULE = """WITH sel AS (SELECT g.uid, g.trace, g.stream AS strm, g.ts AS g_ts, g.end AS g_end, r.ts AS launch_ts
             FROM gpu_steps g LEFT JOIN launch_link l ON l.gpu = g.uid LEFT JOIN event r ON r.uid = l.runtime
             WHERE CASE coalesce({steps}, 'complete') WHEN 'all' THEN 1 WHEN 'complete' THEN g.complete
                   ELSE g.step = {steps} END),
gaps AS (SELECT trace, strm, g_ts - prev_end AS gap,
                CASE WHEN launch_ts > prev_end THEN 'host_wait'
                     WHEN g_ts - prev_end < coalesce({threshold}, 30) * 1000 THEN 'kernel_wait' ELSE 'other' END AS category
         FROM (SELECT *, lag(g_end) OVER (PARTITION BY trace, strm ORDER BY g_ts, uid) AS prev_end FROM sel)
         WHERE prev_end IS NOT NULL),
c(category) AS (VALUES ('host_wait'), ('kernel_wait'), ('other')),
streams AS (SELECT DISTINCT trace, strm FROM sel)
SELECT s.trace, s.strm AS stream, c.category,
       coalesce((SELECT sum(gap) FROM gaps x WHERE x.trace = s.trace AND x.strm IS s.strm AND x.category = c.category),
                0) AS idle_ns
FROM streams s, c ORDER BY 1, 2, 3"""


def run(args, *sql):
    return function_cases.run(tlsql, args, *sql)


def both(args, steps, threshold):
    return function_cases.two_answers(tlsql, args, f"SELECT * FROM idle_breakdown({steps}, {threshold}) ORDER BY 1, 2, 3",
                                      RULE.format(steps=steps, threshold=threshold))


files = [os.path.join(data, n) for n in ("queue_steps.json", "hta_trace_compare_base.json.gz", "stragglers_rank0.json")]
if shared and os.path.isdir(os.path.join(shared, "traces")):  # several streams, NCCL, many steps
    files += [os.path.join(shared, "traces", "dlrm_8xv100", "rank0.pt.trace.json"),
              os.path.join(shared, "traces", "hta", "trace_diff", "control.json.gz")]
for path in files:
    first = run([path], "SELECT min(step) FROM gpu").stdout.splitlines()[-1]  # a step as a number and as text
    for source in function_cases.loaded_and_saved(tlsql, path, tmp, "idle_breakdown_"):
        for steps, threshold in (("NULL", "NULL"), ("'all'", "NULL"), ("'all'", "2.5"), (first, "'30'"),
                                 (f"'{first}'", "NULL")):
            mine, theirs = both([source], steps, threshold)
            check(len(mine) > 0 and mine == theirs,
                  f"{os.path.basename(source)} steps {steps}, threshold {threshold}: == HTA's rule ({len(mine)} rows)")

# By hand (us). ProfilerStep#1 [0, 1000), #2 [1000, 2000). Stream 7: k1 launched at 10 runs [100,
# 110); k2 launched at 20 (before k1 ended) runs [115, 125): a 5 us gap, kernel_wait; k3 launched
# at 200, after k2 ended, runs [205, 215): 80 us, host_wait; k4 launched at 30 runs [300, 310): 85
# us, over 30: other. Stream 9: one kernel, no gap. In step 2, k5 launched at 1010 runs [1100,
# 1110): 790 us after k4, host_wait, counted only with steps 'all' ('complete' keeps the work
# launched before the last ProfilerStep's start, 1000).
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000}]
for i, (name, launch, ts, dur, stream) in enumerate([("k1", 10, 100, 10, 7), ("k2", 20, 115, 10, 7),
                                                      ("k3", 200, 205, 10, 7), ("k4", 30, 300, 10, 7),
                                                      ("k9", 40, 100, 50, 9), ("k5", 1010, 1100, 10, 7)]):
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": launch,
               "dur": 2, "args": {"correlation": i + 1}})
    ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
               "args": {"correlation": i + 1, "device": 0, "stream": stream}})
small = os.path.join(tmp, "idle_breakdown_small.json")
json.dump({"traceEvents": ev}, open(small, "w"))
for args, want in [("", ["0,7,host_wait,80000", "0,7,kernel_wait,5000", "0,7,other,85000",
                         "0,9,host_wait,0", "0,9,kernel_wait,0", "0,9,other,0"]),
                   ("'all'", ["0,7,host_wait,870000", "0,7,kernel_wait,5000", "0,7,other,85000",
                              "0,9,host_wait,0", "0,9,kernel_wait,0", "0,9,other,0"]),
                   ("NULL, 4", ["0,7,host_wait,80000", "0,7,kernel_wait,0", "0,7,other,90000",  # 5 us >= 4
                                "0,9,host_wait,0", "0,9,kernel_wait,0", "0,9,other,0"]),
                   ("2", ["0,7,host_wait,0", "0,7,kernel_wait,0", "0,7,other,0"])]:  # k5 alone
    r = run([small], f"SELECT * FROM idle_breakdown({args})")
    got = r.stdout.splitlines()[1:]
    check(r.returncode == 0 and got == want, f"by hand, idle_breakdown({args}): {got} vs {want} ({r.stderr.strip()[:160]})")

# Where it departs from the report's old SQL (idle_breakdown.cpp): kernels with no stream are one
# stream and their gaps count (k2 launched at 200 us after k1 ended at 110: 100 us host_wait; the
# old join on `stream =` said 0), and the threshold is compared exactly: a gap of 10^16 - 1 ns is
# kernel_wait under a threshold of 10^13 us given as a real (10^16 ns), which a double comparison
# rounds to other.
def trace(name, kernels):
    ev = []
    for i, (launch, ts, dur, stream) in enumerate(kernels):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": launch,
                   "dur": 0.1, "args": {"correlation": i + 1}})
        k = {"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 0, "tid": 7, "ts": ts, "dur": dur,
             "args": {"correlation": i + 1, "device": 0}}
        if stream is not None:
            k["args"]["stream"] = stream
        ev.append(k)
    path = os.path.join(tmp, name)
    json.dump({"traceEvents": ev}, open(path, "w"))
    return path


r = run([trace("idle_no_stream.json", [(10, 100, 10, None), (200, 210, 10, None)])],
        "SELECT * FROM idle_breakdown('all')")
check(r.stdout.splitlines()[1:] == ["0,,host_wait,100000", "0,,kernel_wait,0", "0,,other,0"],
      f"no stream: one stream, its gap counted ({r.stdout.strip()} {r.stderr.strip()[:160]})")
far = trace("idle_far.json", [(0, 0, 1, 7), (0.5, "10000000000000.999", 1, 7)])  # k1 ends at 1,000 ns
r = run([far], "SELECT category, idle_ns FROM idle_breakdown('all', 10000000000000.0)")
check(r.stdout.splitlines()[1:] == ["host_wait,0", "kernel_wait,9999999999999999", "other,0"],
      f"a gap of 10^16 - 1 ns is under 10^16.0 ({r.stdout.strip()} {r.stderr.strip()[:160]})")
r = run([far], "SELECT category, idle_ns FROM idle_breakdown('all', 10000000000000)")  # the same as an integer
check(r.stdout.splitlines()[1:] == ["host_wait,0", "kernel_wait,9999999999999999", "other,0"],
      f"and under 10^16 ({r.stdout.strip()} {r.stderr.strip()[:160]})")

r = run([small], "SELECT * FROM idle_breakdown(NULL, NULL, 'nowhere')")
check(r.returncode == 1 and "idle_breakdown" in r.stderr and "nowhere" in r.stderr,
      f"an unknown schema is refused by name ({r.stderr.strip()[:160]})")
finish()
