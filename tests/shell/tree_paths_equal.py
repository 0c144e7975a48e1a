#!/usr/bin/env python3
"""The SQL functions read a freshly loaded trace straight from the loader's store, and a saved
database through SQL on its tables: both must give exactly the same rows, in the same order, for
every tree and perf function, on traces with python frames, backward threads, graph launches and
several GPUs. usage: tree_paths_equal.py TLSQL DATA_DIR SHARED_DIR WORK_DIR"""
import os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared, work = sys.argv[1:5]
work = os.path.join(work, "tree_paths")
os.makedirs(work, exist_ok=True)

traces = [os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz"), os.path.join(data, "hta_backward_thread.json"),
          os.path.join(data, "hta_amd_mi250_minitoy.json.gz")]
traces += [os.path.join(shared, "traces", t) for t in ("tracelens/mi300/resnet_act_checkpoint.json.gz",
                                                      "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz",
                                                      "t4_train_amp.pt.trace.json")]
# Every op (a sample on the large traces: the saved path is the slow one), its walks and numbers.
QUERIES = """
SELECT uid, gpu_time(uid), self_time(uid), source(uid), flops(uid), bytes(uid), tflops(uid), achieved_pct(uid),
       bound(uid), perf(uid) FROM op WHERE uid % {n} = 0 ORDER BY uid;
SELECT o.uid, count(*), sum(d.rel_depth), group_concat(d.uid) FROM op o, descendants(o.uid) d
WHERE o.uid % {n} = 0 GROUP BY o.uid ORDER BY o.uid;
SELECT k.uid, group_concat(a.uid || ':' || a.rel_depth) FROM kernel k, ancestors(k.uid) a WHERE k.uid % {n} = 0
GROUP BY k.uid ORDER BY k.uid;
SELECT o.uid, (SELECT group_concat(uid) FROM launched(o.uid)), (SELECT group_concat(uid) FROM children(o.uid)),
       (SELECT group_concat(uid) FROM stack(o.uid)) FROM op o WHERE o.uid % {n} = 0 ORDER BY o.uid;
SELECT gpu_time(uid), flops(uid) FROM kernel WHERE uid % {n} = 0 ORDER BY uid;
SELECT * FROM op_summary ORDER BY name;
"""

# perf_rows (one scan, what counted_op and op_summary read) against the per-uid functions, on every
# event, and counted_op against its definition: rows that differ, which must be none. perf_rows
# skips rows itself under "counted = 1" and "flops IS NOT NULL" (the rooflines): the same rows.
SAME_AS_FUNCTIONS = """
SELECT count(*) FROM perf_rows p WHERE p.counted IS NOT counted(p.uid) OR p.gpu_ns IS NOT gpu_time(p.uid)
  OR p.flops IS NOT flops(p.uid) OR p.bytes IS NOT bytes(p.uid) OR p.tflops IS NOT tflops(p.uid)
  OR p.tbps IS NOT tbps(p.uid) OR p.intensity IS NOT intensity(p.uid) OR p.peak_tflops IS NOT peak_tflops(p.uid)
  OR p.peak_tbps IS NOT peak_tbps(p.uid) OR p.achieved_pct IS NOT achieved_pct(p.uid)
  OR p.bound IS NOT bound(p.uid) OR p.source IS NOT perf_source(p.uid);
SELECT (SELECT count(*) FROM perf_rows) - (SELECT count(*) FROM event);
SELECT count(*) FROM (SELECT uid, name, category, gpu_ns FROM counted_op
  EXCEPT SELECT uid, name, op_category(name), gpu_time(uid) FROM event WHERE counted(uid));
SELECT (SELECT count(*) FROM counted_op) - (SELECT count(*) FROM event WHERE counted(uid));
SELECT count(*) FROM (SELECT uid FROM perf_rows WHERE flops IS NOT NULL
  EXCEPT SELECT uid FROM event WHERE flops(uid) IS NOT NULL);
SELECT (SELECT count(*) FROM perf_rows WHERE flops IS NOT NULL) - (SELECT count(*) FROM event WHERE flops(uid) IS NOT NULL);
"""

for trace in traces:
    name = os.path.basename(trace)
    if not os.path.exists(trace):
        print(f"skip {name}: not present")
        continue
    db = os.path.join(work, name + ".db")
    if os.path.exists(db):
        os.remove(db)
    r = subprocess.run([tlsql, trace, "-o", db, "--csv", "-c", "SELECT count(*) FROM op"], capture_output=True, text=True)
    ops = int(r.stdout.split()[1])
    q = QUERIES.format(n=max(1, ops // 400))
    roots = subprocess.run([tlsql, db, "--csv", "-c", "SELECT uid FROM event WHERE parent IS NULL AND kind IN "
                            "('annotation', 'cpu_op', 'python') ORDER BY uid LIMIT 3"], capture_output=True, text=True)
    dots = [a for u in roots.stdout.split()[1:] for a in ("-c", f".tree {u} 6 all", "-c", f".stack {u}")]
    loaded = subprocess.run([tlsql, trace, "--csv", "-c", q] + dots, capture_output=True, text=True, timeout=600)
    saved = subprocess.run([tlsql, db, "--csv", "-c", q] + dots, capture_output=True, text=True, timeout=600)
    lines = loaded.stdout.count("\n")
    check(loaded.returncode == 0 and saved.returncode == 0 and lines > 20,
          f"{name}: both run ({lines} lines) {loaded.stderr.strip()[:100]} {saved.stderr.strip()[:100]}")
    same = loaded.stdout == saved.stdout
    if not same:
        a, b = loaded.stdout.splitlines(), saved.stdout.splitlines()
        diff = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        print(f"first difference at line {diff}:\n  loaded {a[diff][:200] if diff < len(a) else None}\n"
              f"  saved  {b[diff][:200] if diff < len(b) else None}")
    check(same, f"{name}: the store path answers exactly as the saved database's SQL path")
    for path in (trace, db):
        r = subprocess.run([tlsql, path, "--csv", "-c", ".headers off", "-c", SAME_AS_FUNCTIONS], capture_output=True,
                           text=True, timeout=600)
        check(r.returncode == 0 and r.stdout.split() == ["0"] * 6,
              f"{name} ({'saved' if path == db else 'loaded'}): perf_rows and counted_op give the per-uid "
              f"functions' values (differences: {r.stdout.split()} {r.stderr.strip()[:100]})")
finish()
