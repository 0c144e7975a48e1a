#!/usr/bin/env python3
"""trace_kinds(trace [, schema]) (udf/stats/trace_kinds.cpp, the example of udf/table_function.h): a
trace's events per kind, counted in the perf pass, must equal what the event table itself gives
(SELECT kind, count(*) FROM event GROUP BY kind: another path over the same rows), for every
trace of several files, loaded and saved; and its argument errors follow the shared format.
usage: trace_kinds.py TLSQL DATA_DIR TMP_DIR [SHARED_DIR] (tests/CMakeLists.txt: every tests/functions/*.py)"""
import os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)


def run(args, *sql):
    cmd = [tlsql, "-q", "--csv"] + args
    for s in sql:
        cmd += ["-c", s]
    return subprocess.run(cmd, capture_output=True, text=True)


for name in ("launch_small.json", "coll_rank0.json", "hta_amd_mi250_minitoy.json.gz", "loader_rules.json"):
    path = os.path.join(data, name)
    saved = os.path.join(tmp, "trace_kinds_" + name.split(".")[0] + ".db")
    r = run([path, "-o", saved], "SELECT 1")
    check(r.returncode == 0, f"{name}: saved")
    for source in (path, saved):
        # Both sides as (trace, kind, events) lines, in one order: the function's own order (most
        # first, ties by kind descending) is checked against the event table's ORDER BY.
        r = run([source],
                "SELECT t.id, k.kind, k.events FROM trace t, trace_kinds(t.id) k",
                "SELECT trace, kind, count(*) FROM event GROUP BY trace, kind ORDER BY trace, count(*) DESC, kind DESC")
        check(r.returncode == 0, f"{source}: runs ({r.stderr.strip()[:120]})")
        out = r.stdout.splitlines()
        half = out.index("trace,kind,count(*)") if "trace,kind,count(*)" in out else -1
        mine, theirs = out[1:half], out[half + 1:]
        check(half > 0 and len(mine) > 0 and mine == theirs,
              f"{os.path.basename(source)}: trace_kinds == the event table's counts ({len(mine)} rows)")

path = os.path.join(data, "launch_small.json")
r = run([path], "SELECT count(*) FROM trace_kinds(12345)")
check(r.stdout.splitlines()[1:] == ["0"], "no rows for a trace that is not there")
for sql, msg in (("SELECT * FROM trace_kinds", "trace_kinds(trace [, schema]): the trace argument is missing"),
                 ("SELECT * FROM trace_kinds('x')", "trace_kinds(trace [, schema]): trace must be an integer"),
                 ("SELECT * FROM trace_kinds(0, 'nowhere')", "trace_kinds(trace [, schema]): no tlsql event table")):
    r = run([path], sql)
    check(r.returncode == 1 and msg in r.stderr, f"{sql}: {msg} ({r.stderr.strip()[:120]})")
finish()
