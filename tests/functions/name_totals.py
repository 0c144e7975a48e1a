#!/usr/bin/env python3
"""name_totals([schema]) (udf/stats/name_totals.cpp): the events per (trace, step, kind, name) with
their count and summed dur, which report_diff reads. It must give what the event table's own GROUP
BY gives (another path over the same rows), rows and order, for several files loaded and saved and
for a diff's second schema; and, on a trace made here, the rows worked out by hand below (a NULL
name, durations missing, one name in two kinds and two steps).
usage: name_totals.py TLSQL DATA_DIR TMP_DIR [SHARED_DIR] (tests/CMakeLists.txt: every tests/functions/*.py)"""
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import function_cases  # noqa: E402
from checks import check, finish  # noqa: E402

tlsql, data, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)
GROUP = ("SELECT trace, step, kind, name, count(*), sum(dur) FROM {s}.event "
         "GROUP BY trace, step, kind, name ORDER BY trace, step, kind, name")


def run(args, *sql):
    return function_cases.run(tlsql, args, *sql)


def both(args, schema):
    return function_cases.two_answers(tlsql, args, f"SELECT * FROM name_totals('{schema}')", GROUP.format(s=schema))


for name in ("launch_small.json", "loader_rules.json", "hta_trace_compare_base.json.gz", "queue_steps.json"):
    for source in function_cases.loaded_and_saved(tlsql, os.path.join(data, name), tmp, "name_totals_"):
        mine, theirs = both([source], "main")
        check(len(mine) > 0 and mine == theirs, f"{os.path.basename(source)}: name_totals == GROUP BY ({len(mine)} rows)")
# Two files in one schema (two traces) and a diff's `other` schema.
a, b = os.path.join(data, "coll_rank0.json"), os.path.join(data, "coll_rank1.json")
mine, theirs = both([a, b], "main")
check(len(mine) > 0 and mine == theirs and {m.split(",")[0] for m in mine} == {"0", "1"}, "two traces: grouped apart")
mine, theirs = both([a, "--diff", b], "other")
check(len(mine) > 0 and mine == theirs, "the diff's other schema")

# By hand: ProfilerStep#1 [0, 100) and #2 [100, 200) (µs) on one thread; under #1 two aten::mm
# (dur 10 and 20), a runtime call named aten::mm (dur 5) and an event with no name (dur 3); under
# #2 an instant aten::mm (kind instant: no dur) and an op aten::mm of dur 7.
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 10},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 20},
      {"ph": "X", "cat": "cuda_runtime", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 50, "dur": 5},
      {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 60, "dur": 3},
      {"ph": "i", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 110, "s": "t"},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 120, "dur": 7}]
small = os.path.join(tmp, "name_totals_small.json")
json.dump({"traceEvents": ev}, open(small, "w"))
r = run([small], "SELECT step, kind, name, events, dur FROM name_totals() WHERE name IS NULL OR name = 'aten::mm' "
        "ORDER BY step, kind, name")
want = ["1,cpu_op,,1,3000",          # the event with no name: a NULL name, its own group
        "1,cpu_op,aten::mm,2,30000",  # 10 + 20 µs
        "1,runtime,aten::mm,1,5000",  # same name, another kind
        "2,cpu_op,aten::mm,1,7000",
        "2,instant,aten::mm,1,"]      # no dur at all: a NULL sum, as sum()'s
check(r.returncode == 0 and r.stdout.splitlines()[1:] == want, f"by hand: {r.stdout.splitlines()[1:]} vs {want} "
      f"({r.stderr.strip()[:160]})")

r = run([small], "SELECT * FROM name_totals('nowhere')")
check(r.returncode == 1 and "name_totals" in r.stderr and "nowhere" in r.stderr,
      f"an unknown schema is refused by name ({r.stderr.strip()[:160]})")
finish()
