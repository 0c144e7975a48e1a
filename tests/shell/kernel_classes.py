#!/usr/bin/env python3
"""Kernel classes as data (issue 46, docs/reports.md "Kernel classes"): on a step shaped like an
expert-parallel MoE training step (a communication library no rule names, launched by
cudaLaunchKernelExC under record_function annotations with no aten op; FP8 GEMM and flash
attention under custom autograd Functions with no Input Dims), communication is found by what
launched it, the kernel_rule table decides first (shipped, user INSERTs, --rules files that travel
in a saved database), the HTA rule stays HTA's, unclassified side-stream work is named with the rule
to add, and hostile rules in a file are refused. Expected figures by hand arithmetic below.
usage: kernel_classes.py TLSQL LIBTLSQL WORK_DIR"""
import json, os, shutil, sqlite3, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, lib, work = sys.argv[1], os.path.splitext(sys.argv[2])[0], os.path.join(sys.argv[3], "kernel_classes")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)

events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}]
corr = [100]


def launch(parent_name, parent_cat, ts, kernel, k_ts, k_dur, stream, launcher="cudaLaunchKernelExC", mid=None):
    """A host range (annotation or custom op) around a launch call, and the kernel it launched."""
    corr[0] += 1
    events.append({"ph": "X", "cat": parent_cat, "name": parent_name, "pid": 1, "tid": 1, "ts": ts, "dur": 8})
    if mid:  # an op between the annotation and the launch
        events.append({"ph": "X", "cat": "cpu_op", "name": mid, "pid": 1, "tid": 1, "ts": ts + 1, "dur": 6})
    events.append({"ph": "X", "cat": "cuda_runtime", "name": launcher, "pid": 1, "tid": 1, "ts": ts + 2, "dur": 2,
                   "args": {"correlation": corr[0]}})
    events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": stream, "ts": k_ts, "dur": k_dur,
                   "args": {"correlation": corr[0], "device": 0, "stream": stream}})


DISPATCH = "void mylib::ep::internode::dispatch<8, true>(int*, float*)"
COMBINE = "void mylib::ep::internode::combine<8>(int*, float*)"
GEMM = "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off"
FLASH = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, true>(Flash_fwd_params)"
FUSED = "void mylib::fused_swiglu<256>(float*)"
SCAN = "void cub::DeviceScanKernel<int>(int*)"
MYSTERY = "void otherlib::mystery_kernel<4>(float*)"
# stream 20: the expert-parallel all-to-all (no rule names mylib: what launched it says so)
launch("dispatch(F)", "user_annotation", 10, DISPATCH, 100, 300, 20)        # [100, 400]
launch("combine(F)", "user_annotation", 30, COMBINE, 500, 200, 20)          # [500, 700]
# stream 7: compute under custom autograd Functions (category other, no Input Dims)
launch("MyFP8Linear", "cpu_op", 50, GEMM, 150, 300, 7, "cudaLaunchKernel")   # [150, 450]
launch("FlashAttnFunc", "cpu_op", 70, FLASH, 460, 140, 7, "cudaLaunchKernel")  # [460, 600]
launch("mlp(W)", "user_annotation", 90, FUSED, 610, 40, 7)                  # [610, 650]
# an annotation that names an all-to-all around a compute op: the op launched the kernel
launch("## all_to_all wait() ##", "user_annotation", 110, SCAN, 800, 20, 7, "cudaLaunchKernel",
       mid="fbgemm::permute_2D_sparse_data")                                # [800, 820]
launch("MyFP8Linear", "cpu_op", 150, GEMM, 900, 50, 7, "cudaLaunchKernel")  # [900, 950]
# stream 30: a library nobody names, launched under an annotation that says nothing: 400 us
launch("misc(F)", "user_annotation", 130, MYSTERY, 100, 400, 30)            # [100, 500]
with open("ep_step.json", "w") as f:
    json.dump({"traceEvents": events}, f)


def run(*args, **kw):
    return subprocess.run([tlsql, *args], capture_output=True, text=True, timeout=120, **kw)


def rows(r):
    return [line.split(",") for line in r.stdout.strip().splitlines()[1:]]


def classes(*args):
    r = run(*args, "-c", "SELECT short_name(name), gpu_class(uid), gpu_class(uid, 'hta') FROM kernel ORDER BY uid")
    return {row[0]: (row[1], row[2]) for row in rows(r)}, r


c, r = classes("ep_step.json")
check(c.get("mylib::ep::internode::dispatch") == ("communication", "compute")
      and c.get("mylib::ep::internode::combine") == ("communication", "compute"),
      f"a library no rule names is communication by what launched it (dispatch(F), combine(F)); HTA's rule "
      f"knows nccl only: {c} {r.stderr.strip()[:200]}")
check(all(c.get(k, ("?",))[0] == "compute" for k in ("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x64_"
                                                     "warpgroupsize1x1x1_execute_segment_k_off",
                                                     "flash_fwd_kernel", "mylib::fused_swiglu",
                                                     "cub::DeviceScanKernel", "otherlib::mystery_kernel")),
      f"GEMM, attention, an annotation's own kernel and an op's kernel under an all_to_all annotation compute: {c}")

# timeline (TraceLens's layout): comm = [100,400] u [500,700] = 500 us. Compute = stream 7's
# [150,450] [460,600] [610,650] [800,820] [900,950] and stream 30's [100,500]: union [100,600]
# [610,650] [800,820] [900,950] = 500 + 40 + 20 + 50 = 610 us. Exposed comm = comm under no
# compute: [100,400] lies in [100,500]; [500,700] less [500,600] and [610,650] leaves [600,610] and
# [650,700] = 60 us. Busy = [100,700] [800,820] [900,950] = 670 us of a [100,950] span: idle 180 us.
r = run("ep_step.json", "--report", "timeline")
t = {row[0]: row[1] for row in rows(r)}
want = {"total_comm_time": 0.5, "exposed_comm_time": 0.06, "computation_time": 0.61, "busy_time": 0.67,
        "idle_time": 0.18, "total_time": 0.85}
check(all(abs(float(t.get(k, "nan")) - v) < 1e-9 for k, v in want.items()), f"timeline: {want} ({t})")
# overlap: comm 500 us, of which 440 us under computation -> 88%.
r = run("ep_step.json", "--report", "overlap", "--json")
o = json.loads(r.stdout or "[]")
check(o and abs(o[0]["comp_comm_overlap_pct"] - 88.0) < 0.01 and o[0]["comm_kernels"] == 2,
      f"overlap: 2 communication kernels, 88% overlapped ({r.stdout.strip()[:200]} {r.stderr.strip()[:200]})")
r = run("ep_step.json", "--report", "collectives")
check(r.returncode == 0 and "no communication kernels" not in r.stderr and len(rows(r)) >= 1,
      f"collectives lists the all-to-all ({r.stdout.strip()[:200]} {r.stderr.strip()[:200]})")

# Unclassified side-stream work: stream 30's 400 us is 400 / 1450 = 28% of the kernel time (1450 =
# 300 + 200 + 300 + 140 + 40 + 20 + 50 + 400), on a stream beside the busiest (7: 550 us; 20: 500)
# with no communication: named, with the rule to add.
check("ran on stream 30 beside stream 7" in r.stderr and "otherlib::mystery_kernel" in r.stderr
      and "INSERT INTO kernel_rule(pattern, class) VALUES ('*otherlib::mystery_kernel*', 'communication')" in r.stderr,
      f"collectives: the unclassified side stream is named with the rule to add ({r.stderr.strip()[:300]})")
r2 = run("ep_step.json", "--report", "timeline")
check("ran on stream 30" in r2.stderr, f"timeline says it too ({r2.stderr.strip()[:200]})")

# Two GPUs in one trace: a stream is one device's, so "beside" means beside the busiest stream of
# the same GPU. GPU 0: stream 7, 500 us of gemm; GPU 1: stream 9, 300 us of a fused kernel no rule
# names, and stream 12, 200 us of an unknown library's kernel = 200 / 1000 = 20% of the kernel
# time: named, on GPU 1, beside GPU 1's stream 9. Without stream 12, GPU 1's stream 9 (30%) is its
# GPU's busiest stream, not a side stream of GPU 0's stream 7: no note.
def two_gpus(name, side):
    ev = []
    for i, (dev, stream, kname, ts, dur) in enumerate([(0, 7, GEMM, 0, 500), (1, 9, FUSED, 0, 300)] + side):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": i * 5,
                   "dur": 2, "args": {"correlation": 500 + i}})
        ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": dev, "tid": stream, "ts": 10 + ts, "dur": dur,
                   "args": {"correlation": 500 + i, "device": dev, "stream": stream}})
    json.dump({"traceEvents": ev}, open(name, "w"))
    return run(name, "--report", "timeline")


r = two_gpus("two_gpus_side.json", [(1, 12, "void otherlib::mystery_kernel(int*)", 0, 200)])
check("ran on stream 12 beside stream 9 of GPU 1" in r.stderr and "(20% of trace 0's kernel time)" in r.stderr,
      f"two GPUs: the side stream is named beside its own GPU's busiest stream ({r.stderr.strip()[:300]})")
r = two_gpus("two_gpus.json", [])
check(r.returncode == 0 and "beside stream" not in r.stderr,
      f"two GPUs, one stream each: no side stream ({r.stderr.strip()[:300]})")

# The user's rules: INSERT, and a --rules file that travels in the saved database. A rule beats
# what launched the kernel; its subclass names the collective.
with open("rules.sql", "w") as f:
    f.write("INSERT INTO kernel_rule(pattern, class, subclass) VALUES ('*otherlib::mystery*', 'communication', "
            "'all_to_all');\n"
            "INSERT INTO kernel_rule(pattern, class) VALUES ('*::ep::internode::combine*', 'compute');\n")
r = run("ep_step.json", "--rules", "rules.sql", "-o", "ep.db", "-c", "SELECT 1")
check(r.returncode == 0, f"--rules then -o: {r.stderr.strip()[:200]}")
c, r = classes("ep.db")
check(c.get("otherlib::mystery_kernel", ("?",))[0] == "communication"
      and c.get("mylib::ep::internode::combine", ("?",))[0] == "compute"
      and c.get("mylib::ep::internode::dispatch", ("?",))[0] == "communication",
      f"the saved database carries the user's rules: mystery communication, combine compute ({c})")
r = run("ep.db", "-c", "SELECT coll FROM collective_kernel ORDER BY uid")
check([row[0] for row in rows(r)] == ["mylib::ep::internode::dispatch", "AllToAll"],
      f"a rule's subclass names the collective (all_to_all -> AllToAll): {r.stdout!r}")
# comm now [100,400] u [100,500] (mystery) = [100,500] = 400 us.
r = run("ep.db", "--report", "timeline")
t = {row[0]: row[1] for row in rows(r)}
check(abs(float(t.get("total_comm_time", "nan")) - 0.4) < 1e-9, f"timeline follows the saved rules ({t})")
r = run("ep_step.json", "-c", "INSERT INTO kernel_rule(pattern, class) VALUES ('*flash_fwd*', 'communication')",
        "-c", "SELECT gpu_class(uid), gpu_class_of(kind, name), kernel_rule_of(name) FROM kernel WHERE name LIKE '%flash%'")
check(rows(r) == [["communication", "communication", "*flash_fwd*"]],
      f"an INSERT shows at once, and beats the shipped *flash* rule: {r.stdout!r} {r.stderr.strip()[:200]}")
r = run("ep_step.json", "-c", "SELECT count(*) FROM kernel_rule WHERE source <> 'user'",
        "-c", "SELECT kernel_rule_of('ncclDevKernel_AllReduce_Sum_f32_RING_LL'), "
              "kernel_subclass('void deep_ep::intranode::dispatch<8>(int*)'), kernel_rule_of('mylib::x')")
check(len(rows(r)) == 3 and int(rows(r)[0][0]) >= 20 and rows(r)[2] == ["*nccl*", "all_to_all", ""],
      f"the shipped rules are rows of kernel_rule: {r.stdout!r}")

# From Python with the extension, on the saved database: the same classes.
con = sqlite3.connect("ep.db")
con.enable_load_extension(True)
con.load_extension(lib)
got = dict(con.execute("SELECT short_name(name), gpu_class(uid) FROM kernel").fetchall())
check(got.get("otherlib::mystery_kernel") == "communication" and got.get("mylib::ep::internode::dispatch") ==
      "communication", f"python + extension: the saved rules and launchers ({got})")
con.close()

# One statement over two schemas whose rules differ (udf/statement_memo.h keeps what each schema
# argument resolved to for the statement's run): each call answers for its own schema, a loaded
# trace beside a saved database, and a column of schema names alternating row by row.
r = run("ep_step.json", "-c", "ATTACH 'ep.db' AS a",
        "-c", "SELECT gpu_class(uid), gpu_class(uid, NULL, 'a'), gpu_class(uid, NULL, 'main') FROM kernel "
              "WHERE name LIKE '%mystery%'")
check(rows(r) == [["compute", "communication", "compute"]],
      f"loaded main (shipped rules) and saved a (the user's) in one statement: {r.stdout!r} {r.stderr.strip()[:200]}")
r = run("ep_step.json", "-o", "plain.db", "-c", "SELECT 1")
check(r.returncode == 0, f"saved without the user's rules: {r.stderr.strip()[:200]}")
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension(lib)
con.execute("ATTACH 'ep.db' AS a")
con.execute("ATTACH 'plain.db' AS b")
alternating = ("WITH v(o, s) AS (VALUES (1, 'a'), (2, 'b'), (3, 'a'), (4, 'b')) SELECT s, gpu_class(k.uid, NULL, s) "
               "FROM v, a.kernel k WHERE k.name LIKE '%mystery%' ORDER BY o")
got = con.execute(alternating).fetchall()
check(got == [("a", "communication"), ("b", "compute")] * 2, f"a column of schema names, row by row: {got}")
# The same statement run again (Python keeps it prepared) after b holds another database: what
# a run resolved is not kept past it.
con.execute("DETACH b")
con.execute("ATTACH 'ep.db' AS b")
got = con.execute(alternating).fetchall()
check(got == [("a", "communication"), ("b", "communication")] * 2, f"re-run after b was attached anew: {got}")
# Between two steps of a running statement its host may change what a schema holds: each call
# answers for what it holds at that call, as if nothing were kept (the memo re-checks the schema's
# identity). Python steps a row ahead, so the first row is before the change and the last after.
mystery = con.execute("SELECT uid FROM a.kernel WHERE name LIKE '%mystery%'").fetchone()[0]
q = (f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) "
     f"SELECT i, gpu_class({mystery}, NULL, 'b'), kernel_rule_of('otherlib::mystery_kernel', 'b') FROM n")
con.execute("DETACH b")
con.execute("ATTACH 'plain.db' AS b")
cur = con.execute(q)
first = cur.fetchone()
con.execute("DETACH b")
con.execute("ATTACH 'ep.db' AS b")
got = [first] + cur.fetchall()
check(got[0][1:] == ("compute", None) and got[-1][1:] == ("communication", "*otherlib::mystery*"),
      f"b attached anew between two steps: the later rows answer for the new b: {got}")
cur = con.execute(q)
cur.fetchone()
con.execute("DETACH b")
try:
    cur.fetchall()
    check(False, "b detached between two steps: the later rows should fail")
except sqlite3.OperationalError as e:
    check("no database is attached as 'b'" in str(e), f"b detached between two steps: {e}")
# A trace reloaded under the same name between two steps (tlsql_load frees the old store): the
# later rows read the new trace (its kernel renamed here), never the freed one.
with open("ep_step.json") as f:
    renamed = f.read().replace("otherlib::mystery_kernel", "otherlib::renamed_kernel")
with open("ep_renamed.json", "w") as f:
    f.write(renamed)
con.execute("SELECT tlsql_load('ep_step.json', 'x')")
u = con.execute("SELECT uid FROM x.kernel WHERE name LIKE '%mystery%'").fetchone()[0]
cur = con.execute(f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) "
                  f"SELECT i, work_name({u}, 'x'), gpu_class({u}, NULL, 'x') FROM n")
first = cur.fetchone()
con.execute("DETACH x")
con.execute("SELECT tlsql_load('ep_renamed.json', 'x')")
got = [first] + cur.fetchall()
check("mystery" in got[0][1] and "renamed" in got[-1][1] and got[-1][2] == "compute",
      f"x reloaded between two steps: the later rows read the new trace: {got}")
con.close()

# The same path attached again after another process rewrote it (`tlsql t.json -o swap.db` between
# a DETACH and an ATTACH): the new handle often has the old one's address and its data version
# starts again at 1, so only the file's stamp tells them apart (schema_identity). Kernel classes,
# the perf table and critical_path (each cached per connection) read the new file, as a fresh
# connection does. (Each asked on a connection of its own: the sequence that reused the handle.)
def saved(*args):
    r = run(*args, "-o", "swap.db", "-c", "SELECT 1")
    check(r.returncode == 0, f"saved {args}: {r.stderr.strip()[:200]}")


def ask(con, q):
    try:
        return con.execute(q).fetchall()
    except sqlite3.Error as e:
        return str(e)


def connection():
    c = sqlite3.connect(":memory:")
    c.enable_load_extension(True)
    c.load_extension(lib)
    return c


for q in ["SELECT gpu_class(uid, NULL, 'b') FROM b.kernel ORDER BY uid LIMIT 2",
          "SELECT sum(gpu_time(uid, 'b')) FROM b.event", "SELECT count(*) FROM critical_path('', 0, 0, 'b')"]:
    saved("two_gpus_side.json")
    con = connection()
    con.execute("ATTACH 'swap.db' AS b")
    before = ask(con, q)
    con.execute("DETACH b")
    saved("ep_step.json", "--rules", "rules.sql")
    con.execute("ATTACH 'swap.db' AS b")
    after = ask(con, q)
    fresh = connection()
    fresh.execute("ATTACH 'swap.db' AS b")
    want = ask(fresh, q)
    check(after == want and want != before, f"{q}: swap.db rewritten while detached: {after}, as a fresh "
                                             f"connection's {want} (before: {before})")
    con.close()
    fresh.close()

# Hostile rules in a file: refused with a clear error, at once.
for name, edit, msg in [
        ("bad_class.db", "INSERT INTO kernel_rule VALUES ('*x*', 'compute', NULL, 'user', 100)", None),
        ("stars.db", "INSERT INTO kernel_rule VALUES ('" + "*a" * 30 + "', 'compute', NULL, 'user', 100)", "at most"),
]:
    shutil.copy("ep.db", name)
    with sqlite3.connect(name) as con:
        if msg is None:  # a class no CHECK allows: written as a file's author could, past the constraint
            con.execute("PRAGMA ignore_check_constraints = ON")
            con.execute("INSERT INTO kernel_rule VALUES ('*sm90*', 'evil', NULL, 'user', 100)")
        else:
            con.execute(edit)
    start = time.time()
    r = run(name, "-c", "SELECT count(*) FROM kernel WHERE gpu_class(uid) = 'compute'")
    want = "is not 'communication' or 'compute'" if msg is None else msg
    check(r.returncode == 1 and "kernel_rule" in r.stderr and want in r.stderr and time.time() - start < 10,
          f"{name}: refused by name ({r.stderr.strip()[:160]})")
finish()
