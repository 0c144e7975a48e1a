#!/usr/bin/env python3
"""Issue 46, through the binary on hand-made traces: health rows state their impact
(gpu_events_affected, docs/schema.md), a saved database from another build gets this build's views
for the session without its file changing (docs/schema.md), and diff_tree_* between traces whose
call trees share no root say so (docs/reports.md). Expected figures are worked out below by hand.
usage: health_impact.py TLSQL WORK_DIR"""
import csv, hashlib, io, json, os, sqlite3, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, work = sys.argv[1:3]
work = os.path.join(work, "health_impact")
os.makedirs(work, exist_ok=True)


def run(*args):
    return subprocess.run([tlsql, "-q", *args], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def rows(*args):
    r = run("--csv", *args)
    check(r.returncode == 0, f"{args}: {r.stderr.strip()[:300]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def host(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}


def kernel(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "device": 0, "stream": 7}}


def flow(ph, fid, pid, tid, ts):
    e = {"ph": ph, "id": fid, "pid": pid, "tid": tid, "ts": ts, "cat": "ac2g", "name": "ac2g"}
    if ph == "f":
        e["bp"] = "e"
    return e


def write(name, events):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)
    return path


# aten::mm (Sequence number 5) launches k1; MmBackward0 (seq 5: its forward is aten::mm) launches
# kb1; AddBackward0 (seq 7) launches kb2 and kb3 and MulBackward0 (seq 8) nothing, neither with a
# forward op in the trace. Two launch flows start on calls that launch nothing (cudaEventQuery,
# cudaFuncSetAttribute) and end nowhere.
base = [host("user_annotation", "ProfilerStep#1", 0, 500),
        host("cpu_op", "aten::mm", 10, 40, **{"Sequence number": 5}),
        host("cuda_runtime", "cudaLaunchKernel", 12, 5, correlation=1),
        host("cuda_runtime", "cudaEventQuery", 20, 1, correlation=2),
        host("cuda_runtime", "cudaFuncSetAttribute", 22, 1, correlation=3),
        flow("s", 100, 1, 1, 20), flow("s", 101, 1, 1, 22),
        kernel("k1", 30, 10, 1),
        host("cpu_op", "MmBackward0", 100, 50, **{"Sequence number": 5, "Fwd thread id": 1}),
        host("cuda_runtime", "cudaLaunchKernel", 102, 5, correlation=4), kernel("kb1", 110, 10, 4),
        host("cpu_op", "AddBackward0", 200, 60, **{"Sequence number": 7, "Fwd thread id": 1}),
        host("cuda_runtime", "cudaLaunchKernel", 202, 5, correlation=5),
        host("cuda_runtime", "cudaLaunchKernel", 208, 1, correlation=6),
        kernel("kb2", 210, 5, 5), kernel("kb3", 216, 4, 6),
        host("cpu_op", "MulBackward0", 300, 20, **{"Sequence number": 8, "Fwd thread id": 1})]
a = write("health_a.json", base)
q = 'SELECT "check", count, gpu_events_affected AS gpu FROM health ORDER BY "check"'
got = [(r["check"], r["count"], r["gpu"]) for r in rows(a, "-c", q)]
# Two flows without their 'f': both on calls with no GPU work, 0 GPU events affected. Two backward
# ops without a forward; kb2 and kb3 ran under AddBackward0: 2 GPU events.
check(got == [("backward_without_forward", "2", "2"), ("flow_unmatched", "2", "0")], f"health A ({got})")
detail = rows(a, "-c", "SELECT detail FROM health WHERE \"check\" = 'backward_without_forward'")[0]["detail"]
check("pipeline-parallel schedules" in detail, f"backward_without_forward says it is expected with schedules ({detail})")
rep = rows(a, "--report", "health")
check([(r["check"], r["gpu_events_affected"]) for r in rep] == [("backward_without_forward", "2"),
                                                                  ("flow_unmatched", "0")], f"health report ({rep})")

# A kernel (orphan) whose correlation is on no call, with a launch flow's 'f' on it and no 's':
# three unmatched flows, the third costing one GPU event its launch; gpu_without_launch 1, 1.
b = write("health_b.json", base + [kernel("orphan", 400, 10, 99), flow("f", 102, 0, 7, 400)])
got = [(r["check"], r["count"], r["gpu"]) for r in rows(b, "-c", q)]
check(got == [("backward_without_forward", "2", "2"), ("flow_unmatched", "3", "1"), ("gpu_without_launch", "1", "1")],
      f"health B ({got})")

# A saved database from another build: its kernel view redefined (another build's SQL; here one
# that hides every kernel) and health without gpu_events_affected. Opened, the session uses this
# build's views and reads the missing column as NULL, says so on one line, and never writes the file.
db = os.path.join(work, "saved.db")
if os.path.exists(db):
    os.remove(db)
r = run(a, "-o", db)
check(r.returncode == 0, f"save: {r.stderr.strip()}")
r = run(db, "-c", "SELECT 1")
check(r.returncode == 0 and r.stderr == "", f"a database this build saved opens silently ({r.stderr.strip()})")
con = sqlite3.connect(db)
con.execute("DROP VIEW kernel")
con.execute("CREATE VIEW kernel AS SELECT * FROM event WHERE 0")
# (a table rebuilt, not ALTER TABLE DROP COLUMN: that re-checks every view, and tlsql's functions
# are not registered in this connection)
old_rows = con.execute('SELECT trace, "check", count, example_uid, detail FROM health').fetchall()
con.execute("DROP TABLE health")
con.execute('CREATE TABLE health(trace INTEGER, "check" TEXT, count INTEGER, example_uid INTEGER, detail TEXT)')
con.executemany("INSERT INTO health VALUES(?, ?, ?, ?, ?)", old_rows)
con.commit()
con.close()
digest = hashlib.sha256(open(db, "rb").read()).hexdigest()
r = run(db, "--csv", "-c", "SELECT count(*) AS n FROM kernel", "--report", "health")
out = r.stdout.splitlines()
check(r.returncode == 0 and out[:2] == ["n", "4"], f"stale saved view replaced: 4 kernels (k1, kb1, kb2, kb3) ({out[:2]})")
check(any(l.startswith("path,check,count,gpu_events_affected,") for l in out)
      and any(",flow_unmatched,2,," in l for l in out), f"old health: gpu_events_affected NULL ({out})")
check(r.stderr.startswith(f"tlsql: {db}: saved by another tlsql build: 2 of its definitions") and
      r.stderr.count("\n") == 1, f"one line says so ({r.stderr.strip()})")
check(hashlib.sha256(open(db, "rb").read()).hexdigest() == digest, "the saved file is unchanged")

# diff_tree_*: main's root is train_step, other's serve_step (tree_diff pairs from the roots, by
# name): no GPU event of either side (1 each) has a common ancestor.
def step_trace(name, root):
    return write(name, [host("user_annotation", root, 0, 100), host("cpu_op", "aten::mm", 10, 40),
                        host("cuda_runtime", "cudaLaunchKernel", 12, 5, correlation=1), kernel("k1", 30, 10, 1)])


main, other, same = step_trace("d_main.json", "train_step"), step_trace("d_other.json", "serve_step"), \
    step_trace("d_same.json", "train_step")
note = ("the two call trees share no root: no top-level op, annotation or frame of main has the name of one in other "
        "(tree_diff pairs from the roots down), so none of the 1 GPU events of main and 1 of other has a common "
        "ancestor; --report diff pairs kernels by name, --report diff_shapes ops by name and shapes")
for report in ("diff_tree", "diff_tree_ops", "diff_tree_summary"):
    r = run(main, "--diff", other, "--report", report)
    check(r.returncode == 0 and f"{report}: {note}\n" in r.stderr, f"{report}, no common root: says so ({r.stderr.strip()})")
    r = run(main, "--diff", same, "--report", report)
    check(r.returncode == 0 and "share no root" not in r.stderr and r.stdout.strip(),
          f"{report}, a common root: rows, no such note ({r.stderr.strip()})")
r = run(main, "--diff", other, "--report", "diff_tree_summary")
check("no rows: the two call trees share no root" in r.stderr, f"diff_tree_summary empty: why ({r.stderr.strip()})")
finish()
