#!/usr/bin/env python3
"""kind_names(kind [, schema]) (udf/stats/name_totals.cpp): the distinct names of one kind's events,
which the sheets' kernel families (op_sheet_kernels) and empty_report's op names read. It must give
what the event table's own DISTINCT gives (another path over the same rows), in SQL's order (a NULL
name first, then the bytes), for several files loaded and saved, two traces in one schema and a
diff's second schema; and, on a trace made here, the names listed by hand below.
usage: kind_names.py TLSQL DATA_DIR TMP_DIR [SHARED_DIR] (tests/CMakeLists.txt: every tests/functions/*.py)"""
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import function_cases  # noqa: E402
from checks import check, finish  # noqa: E402

tlsql, data, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)
# Every kind the event table has (src/trace_model.h, kind_name).
KINDS = ("cpu_op", "python", "annotation", "runtime", "driver", "kernel", "memcpy", "memset", "sync", "gpu_annotation",
         "instant", "counter", "flow", "meta", "other")


def run(args, *sql):
    return function_cases.run(tlsql, args, *sql)


def both(args, schema, kind):
    # (quote() keeps a NULL name apart from an empty one and from the text 'NULL')
    return function_cases.two_answers(
        tlsql, args, f"SELECT quote(name) FROM kind_names('{kind}', '{schema}')",
        f"SELECT quote(name) FROM (SELECT DISTINCT name FROM {schema}.event WHERE kind = '{kind}') ORDER BY name")


for name in ("launch_small.json", "loader_rules.json", "hta_trace_compare_base.json.gz", "queue_steps.json"):
    for source in function_cases.loaded_and_saved(tlsql, os.path.join(data, name), tmp, "kind_names_"):
        total = 0
        for kind in KINDS:
            mine, theirs = both([source], "main", kind)
            total += len(mine)
            check(mine == theirs, f"{os.path.basename(source)} {kind}: kind_names == DISTINCT ({len(mine)} names)")
        check(total > 0, f"{os.path.basename(source)}: names found ({total})")
# Two traces in one schema whose kernels are named apart (NCCL kernels; k_a .. k_e): the list
# holds both traces' names, so a fast path that read one trace, or placed the second's rows
# wrongly, fails it. And a diff's second schema.
a, b = os.path.join(data, "coll_rank0.json"), os.path.join(data, "launch_small.json")
mine, theirs = both([a, b], "main", "kernel")
check(len(mine) > 5 and mine == theirs and "'k_e'" in mine and any("nccl" in m for m in mine),
      f"two traces: one list of both ({len(mine)} names)")
for source in function_cases.loaded_and_saved(tlsql, b, tmp, "kind_names_b_"):
    mine, theirs = both([a, "--diff", source], "other", "kernel")
    check(mine == theirs and mine == ["'k_a'", "'k_b'", "'k_c'", "'k_d'", "'k_e'"],
          f"the diff's other schema ({os.path.basename(source)}): {mine}")

# By hand: two ops named aten::mm and one aten::add (so aten::mm once), an op with no name, a
# runtime call named aten::mm (another kind), names that sort by bytes ("B" before "a", "é" after).
ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 10},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 20},
      {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 45, "dur": 2},
      {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 60, "dur": 3},
      {"ph": "X", "cat": "cpu_op", "name": "Bop", "pid": 1, "tid": 1, "ts": 70, "dur": 1},
      {"ph": "X", "cat": "cpu_op", "name": "\u00e9op", "pid": 1, "tid": 1, "ts": 80, "dur": 1},
      {"ph": "X", "cat": "cuda_runtime", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 50, "dur": 5}]
small = os.path.join(tmp, "kind_names_small.json")
json.dump({"traceEvents": ev}, open(small, "w"))
for source in function_cases.loaded_and_saved(tlsql, small, tmp, "kind_names_small_"):
    r = run([source], "SELECT quote(name) FROM kind_names('cpu_op')")
    want = ["NULL", "'Bop'", "'aten::add'", "'aten::mm'", "'\u00e9op'"]
    check(r.returncode == 0 and r.stdout.splitlines()[1:] == want,
          f"{os.path.basename(source)} by hand: {r.stdout.splitlines()[1:]} vs {want} ({r.stderr.strip()[:160]})")
    r = run([source], "SELECT quote(name) FROM kind_names('runtime')")
    check(r.returncode == 0 and r.stdout.splitlines()[1:] == ["'aten::mm'"], f"{os.path.basename(source)}: one kind's")
    r = run([source], "SELECT count(*) FROM kind_names('kernel')", "SELECT count(*) FROM kind_names('no_such_kind')",
            "SELECT count(*) FROM kind_names(NULL)")
    check(r.returncode == 0 and r.stdout.split() == ["count(*)", "0"] * 3,
          f"{os.path.basename(source)}: a kind no event has, or NULL, gives no rows ({r.stdout.split()})")

r = run([small], "SELECT * FROM kind_names('cpu_op', 'nowhere')")
check(r.returncode == 1 and "kind_names" in r.stderr and "nowhere" in r.stderr,
      f"an unknown schema is refused by name ({r.stderr.strip()[:160]})")
r = run([small], "SELECT * FROM kind_names()")
check(r.returncode == 1 and "kind" in r.stderr, f"kind is required ({r.stderr.strip()[:160]})")
finish()
