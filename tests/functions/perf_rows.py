#!/usr/bin/env python3
"""perf_rows([schema]) (udf/perf/perf_table.cpp): the perf pass's passes over the tree run on the
load's threads, each on whole subtrees (parts of at least 32K rows). On a trace made here with
enough roots for five parts, every row of perf_rows is the same with --threads 1, 2 and 5, loaded
and saved, and the counted ops, their FLOPs and GPU time and the roots' inclusive FLOPs are the
figures worked out by hand below. And an op is taken for a wrapper only of its own family,
whatever the number of op categories (user perf models add their own).
usage: perf_rows.py TLSQL DATA_DIR TMP_DIR [SHARED_DIR] (tests/CMakeLists.txt: every tests/functions/*.py)"""
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import function_cases  # noqa: E402
from checks import check, finish  # noqa: E402

tlsql, data, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)

# Root i (an annotation "block" [100 i, 100 i + 90) us) holds aten::mm [+2, +42) with Input Dims
# [[M, 32], [32, 64]], M = 16 (i % 7 + 1), which launches gemm_kernel [+10, +30) (20 us on the
# GPU). Every fifth root also holds aten::copy_ [+50, +60) launching a host-to-device copy [+60,
# +64) (4 us): a copy over a link, which gives copy_ no model. 4 or 7 rows a root, 36,001 roots:
# 165,607 rows, five parts of at least 32K (an even 36,000 would put each even cut at a root by
# chance, where a cut inside a subtree, the bug this is here to catch, would not show).
ROOTS = 36001
ev = []
for i in range(ROOTS):
    t, m = 100 * i, 16 * (i % 7 + 1)
    ev.append({"ph": "X", "cat": "user_annotation", "name": "block", "pid": 1, "tid": 1, "ts": t, "dur": 90})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t + 2, "dur": 40,
               "args": {"Input Dims": [[m, 32], [32, 64]], "Input type": ["float", "float"]}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 3, "dur": 2,
               "args": {"correlation": 2 * i + 1}})
    ev.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": t + 10, "dur": 20,
               "args": {"correlation": 2 * i + 1, "device": 0, "stream": 7}})
    if i % 5 == 0:
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 1, "ts": t + 50, "dur": 10})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": t + 51,
                   "dur": 2, "args": {"correlation": 2 * i + 2}})
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7,
                   "ts": t + 60, "dur": 4, "args": {"correlation": 2 * i + 2, "device": 0, "stream": 7}})
path = os.path.join(tmp, "perf_rows_roots.json")
json.dump({"traceEvents": ev}, open(path, "w"))
db = os.path.join(tmp, "perf_rows_roots.db")
if os.path.exists(db):
    os.remove(db)
check(function_cases.run(tlsql, [path, "-o", db], "SELECT 1").returncode == 0, "saved")

ALL = "SELECT * FROM perf_rows('main') ORDER BY uid"
FIGURES = ("SELECT count(*), sum(flops), sum(gpu_ns) FROM perf_rows('main') WHERE counted = 1; "
           "SELECT count(p.flops), sum(p.flops), count(*) FROM perf_rows('main') p JOIN event e ON e.uid = p.uid "
           "WHERE e.name = 'block'")
copies = len(range(0, ROOTS, 5))
mm_flops = sum(2 * (16 * (i % 7 + 1)) * 64 * 32 for i in range(ROOTS))
# Counted: every aten::mm (modeled, and it launches) and every copy_ (it launches; no op above it):
# their GPU time 20 us and 4 us. A block's FLOPs are its mm's, except where a copy_ with GPU work
# and no numbers sits beside it (the block's sum would leave that work out: no numbers at all).
want = [f"{ROOTS + copies},{mm_flops}.0,{ROOTS * 20000 + copies * 4000}",
        f"{ROOTS - copies},{sum(2 * (16 * (i % 7 + 1)) * 64 * 32 for i in range(ROOTS) if i % 5)}.0,{ROOTS}"]
for source in (path, db):
    name = os.path.basename(source)
    one = function_cases.run(tlsql, ["--threads", "1", source], ALL)
    check(one.returncode == 0 and len(one.stdout.splitlines()) == ROOTS * 4 + copies * 3 + 1,
          f"{name}: perf_rows has every row ({len(one.stdout.splitlines())}; {one.stderr.strip()[:160]})")
    for threads in ("2", "5"):
        other = function_cases.run(tlsql, ["--threads", threads, source], ALL)
        check(other.returncode == 0 and other.stdout == one.stdout,
              f"{name}: perf_rows with --threads {threads} == with --threads 1")
        r = function_cases.run(tlsql, ["--threads", threads, source], *FIGURES.split("; "))
        got = [x for x in r.stdout.splitlines() if x and x[0].isdigit()]
        check(r.returncode == 0 and got == want, f"{name}, --threads {threads}: by hand {got} vs {want}")

# An op is a wrapper, leaving its numbers to the op below, only when a modeled op of its own family
# is below it. my::W (category catW, 100 FLOPs) holds my::B (catB, 50): W keeps its model, is the
# counted op, and B under it is not counted. Beside them, k more ops of k more categories, as roots
# between W and B in row order or as W's own children: past 32 categories two of them share a bit
# of the pass's family mask, and for some k that was catW's and catB's (W lost its model to B's).
for where in ("roots", "children"):
    bad = []
    for k in range(26, 42):
        ev = [{"ph": "X", "cat": "cpu_op", "name": "my::W", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}]
        models = ["INSERT INTO perf_model_user(name, category, flops) VALUES ('my::W', 'catW', '100'), "
                  "('my::B', 'catB', '50')"]
        for d in range(1, k + 1):
            ev.append({"ph": "X", "cat": "cpu_op", "name": f"my::D{d}", "pid": 1, "tid": 2 if where == "roots" else 1,
                       "ts": 10 + 20 * d, "dur": 10})
            models.append(f"INSERT INTO perf_model_user(name, category, flops) VALUES ('my::D{d}', 'cat{d}', '1')")
        ev.append({"ph": "X", "cat": "cpu_op", "name": "my::B", "pid": 1, "tid": 1, "ts": 950, "dur": 20})
        trace, sql = os.path.join(tmp, "perf_rows_families.json"), os.path.join(tmp, "perf_rows_families.sql")
        json.dump({"traceEvents": ev}, open(trace, "w"))
        open(sql, "w").write(";\n".join(models) + ";\n")
        r = function_cases.run(tlsql, ["--models", sql, trace],
                               "SELECT e.name, p.counted, p.flops, p.source FROM perf_rows('main') p JOIN event e "
                               "USING (uid) WHERE e.name IN ('my::W', 'my::B') ORDER BY e.name")
        if r.returncode != 0 or r.stdout.splitlines()[1:] != ["my::B,0,50.0,model", "my::W,1,100.0,model"]:
            bad.append((k, r.stdout.splitlines()[1:], r.stderr.strip()[:120]))
    check(not bad, f"{where}: W keeps its model beside 26..41 other categories ({bad[:2]})")
# The hidden column marker_uid: the event marker(uid) names (fx_markers.json: "## fwd ##" above
# "## 3 ##", and ops under neither), loaded and saved. Each row's marker_uid is NULL exactly where
# marker(uid) is, and names the event whose name marker(uid) gives; SELECT * leaves it out.
for source in function_cases.loaded_and_saved(tlsql, os.path.join(data, "fx_markers.json"), tmp, "perf_rows_fx_"):
    r = function_cases.run(tlsql, [source],
                           "SELECT count(*), count(p.marker_uid), "
                           "sum((p.marker_uid IS NULL) <> (marker(p.uid) IS NULL)), "
                           "sum(p.marker_uid IS NOT NULL AND (SELECT name FROM event WHERE uid = p.marker_uid) "
                           "IS NOT marker(p.uid)) FROM perf_rows() p",
                           "SELECT * FROM perf_rows() LIMIT 1")
    lines = r.stdout.splitlines()
    n, marked, null_apart, named_apart = (lines[1].split(",") + ["?"] * 4)[:4] if len(lines) > 1 else ("?",) * 4
    check(r.returncode == 0 and int(marked or 0) > 0 and int(marked) < int(n) and null_apart == "0" and named_apart == "0"
          and "marker_uid" not in lines[2], f"{os.path.basename(source)}: marker_uid is marker()'s event "
          f"({marked} of {n} rows marked; {r.stderr.strip()[:160]})")
finish()
