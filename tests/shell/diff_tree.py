#!/usr/bin/env python3
"""The structural diff (docs/reports.md): diff_tree, diff_tree_ops and matched() through --diff.
A hand-made pair of traces (an NVIDIA and an AMD run of one small model: renamed kernels, an
inserted cast, a deleted op, a convolution with another library's op and kernel count, repeated
identical layers) with every assignment written below; t4_train_fp32 vs t4_train_amp and
a100_switch_moe_batch4 vs batch8, where each GEMM op must pair with its counterpart: the k-th
GEMM op (by start) of one run with the k-th of the other, read from the raw JSON here.
usage: diff_tree.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, subprocess, sys
from decimal import Decimal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "diff_tree")
os.makedirs(work, exist_ok=True)


def run(*args):
    return subprocess.run([tlsql, "-q", "--csv", *args], capture_output=True, text=True, timeout=300)


def rows(*args):
    r = run(*args)
    check(r.returncode == 0, f"{' '.join(os.path.basename(a) for a in args[:3])}: {r.stderr.strip()[:300]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


class Trace:
    """Events written as a tree: op(name, children) / launch(call, kernel)."""

    def __init__(self, step):
        self.ev = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                    "ts": 0, "dur": 100000, "args": {}}]
        self.t, self.gpu_t, self.corr = 10, 50000, 0

    def op(self, name, *children):
        me = {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": self.t, "args": {}}
        self.ev.append(me)
        self.t += 1
        uid = len(self.ev) - 1
        for c in children:
            c()
        me["dur"] = self.t - me["ts"]
        self.t += 1
        return uid

    def launch(self, call, kernel):
        def add():
            self.corr += 1
            self.ev.append({"ph": "X", "cat": "cuda_runtime", "name": call, "pid": 1, "tid": 1, "ts": self.t,
                            "dur": 1, "args": {"correlation": self.corr}})
            self.ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": self.gpu_t,
                            "dur": 10, "args": {"correlation": self.corr, "device": 0, "stream": 7}})
            self.t += 2
            self.gpu_t += 20
        return add

    def uid(self, name, nth=0):
        return [i for i, e in enumerate(self.ev) if e["name"] == name][nth]

    def write(self, name):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            json.dump({"traceEvents": self.ev}, f)
        return path


# A (CUDA): linear > addmm > sgemm; relu (> empty, no GPU work); conv2d > [view > as_strided (no GPU
# work), cudnn_convolution > 2 kernels]; gelu x2.
# B (HIP): linear > [_to_copy > copy, addmm > Cijk gemm]; no relu; conv2d > miopen_convolution >
# 3 kernels; gelu x3. Step numbers differ (7 vs 1): they do not count.
a, b = Trace(1), Trace(7)
a.op("aten::linear", lambda: a.op("aten::addmm", a.launch("cudaLaunchKernel", "sgemm_fp32")))
a.op("aten::relu", a.launch("cudaLaunchKernel", "relu_kernel"), lambda: a.op("aten::empty"))
a.op("aten::conv2d", lambda: a.op("aten::view", lambda: a.op("aten::as_strided")),
     lambda: a.op("aten::cudnn_convolution", a.launch("cudaLaunchKernel", "cudnn_a"),
                  a.launch("cudaLaunchKernel", "cudnn_b")))
for _ in range(2):
    a.op("aten::gelu", a.launch("cudaLaunchKernel", "gelu_kernel"))
b.op("aten::linear", lambda: b.op("aten::_to_copy", b.launch("hipLaunchKernel", "copy_kernel")),
     lambda: b.op("aten::addmm", b.launch("hipLaunchKernel", "Cijk_gemm_fp16")))
b.op("aten::conv2d", lambda: b.op("aten::miopen_convolution", b.launch("hipLaunchKernel", "miopen_a"),
                                  b.launch("hipLaunchKernel", "miopen_b"), b.launch("hipLaunchKernel", "miopen_c")))
for _ in range(3):
    b.op("aten::gelu", b.launch("hipLaunchKernel", "gelu_kernel"))
pa, pb = a.write("cuda.json"), b.write("hip.json")

got = {(r["source"], r["name"]): (r["cpu_op_name"], r["lowest_common_ancestor_name"], r["lowest_common_ancestor_id"])
       for r in rows(pa, "--diff", pb, "--report", "diff_tree") if "gelu" not in r["name"]}
A = lambda n, k=0: str(a.uid(n, k))  # noqa: E731 (lowest_common_ancestor_id: the uid in trace1)
want = {("trace1", "sgemm_fp32"): ("aten::addmm", "aten::addmm", A("aten::addmm")),
        ("trace2", "Cijk_gemm_fp16"): ("aten::addmm", "aten::addmm", A("aten::addmm")),
        ("trace2", "copy_kernel"): ("aten::_to_copy", "aten::linear", A("aten::linear")),
        ("trace1", "relu_kernel"): ("aten::relu", "ProfilerStep#1", A("ProfilerStep#1")),
        ("trace1", "cudnn_a"): ("aten::cudnn_convolution", "aten::conv2d", A("aten::conv2d")),
        ("trace1", "cudnn_b"): ("aten::cudnn_convolution", "aten::conv2d", A("aten::conv2d")),
        ("trace2", "miopen_a"): ("aten::miopen_convolution", "aten::conv2d", A("aten::conv2d")),
        ("trace2", "miopen_b"): ("aten::miopen_convolution", "aten::conv2d", A("aten::conv2d")),
        ("trace2", "miopen_c"): ("aten::miopen_convolution", "aten::conv2d", A("aten::conv2d"))}
check(got == want, f"hand-made: each kernel's op and lowest common ancestor ({got})")
# Repeated layers: the two gelus of A match B's first two (their kernels too); B's third is new.
q = ("SELECT e.uid, m.other_uid, m.lca_uid FROM event e, matched(e.uid) m WHERE e.name = 'aten::gelu' "
     "ORDER BY e.uid")
got = [(r["other_uid"], r["lca_uid"]) for r in rows(pa, "--diff", pb, "-c", q)]
check(got == [(str(b.uid("aten::gelu", 0)), A("ProfilerStep#1")), (str(b.uid("aten::gelu", 1)), A("ProfilerStep#1"))],
      f"hand-made: gelu 1, 2 pair with gelu 1, 2 ({got})")
got = [(r["other_uid"], r["lca_uid"]) for r in rows(pb, "--diff", pa, "-c", q)]
check(got[2] == ("", str(b.uid("ProfilerStep#7"))), f"hand-made, the other way: B's third gelu is new ({got})")
# Ops leading to no GPU work take no part in the match: no counterpart; their lowest common
# ancestor is the nearest matched one above them (conv2d), or, below an unmatched op (relu), that
# op's own (the step).
q = ("SELECT e.name, m.other_uid, m.lca_uid, m.lca_other_uid FROM event e, matched(e.uid) m "
     "WHERE e.name IN ('aten::empty', 'aten::view', 'aten::as_strided') ORDER BY e.uid")
got = [tuple(r.values()) for r in rows(pa, "--diff", pb, "-c", q)]
B = lambda n, k=0: str(b.uid(n, k))  # noqa: E731
check(got == [("aten::empty", "", A("ProfilerStep#1"), B("ProfilerStep#7")),
              ("aten::view", "", A("aten::conv2d"), B("aten::conv2d")),
              ("aten::as_strided", "", A("aten::conv2d"), B("aten::conv2d"))],
      f"hand-made: ops without GPU work, their lowest common ancestors ({got})")
# Per common ancestor: conv2d has 2 kernels (20 us) against 3 (30 us).
ops = {r["lowest_common_ancestor_name"]: r for r in rows(pa, "--diff", pb, "--report", "diff_tree_ops")}
conv = ops.get("aten::conv2d", {})
check((conv.get("num_kernels_trace1"), conv.get("num_kernels_trace2"), conv.get("kernel_time_trace1_us"),
       conv.get("kernel_time_trace2_us"), conv.get("speedup"), conv.get("name")) ==
      ("2", "3", "20.0", "30.0", "0.667", "aten::cudnn_convolution"), f"diff_tree_ops conv2d ({conv})")
times = [float(r["kernel_time_trace1_us"]) for r in rows(pa, "--diff", pb, "--report", "diff_tree_ops")]
check(times == sorted(times, reverse=True), f"diff_tree_ops: slowest in trace1 first ({times})")
check(json.loads(ops.get("aten::addmm", {}).get("kernel_names_trace2", "[]")) == ["Cijk_gemm_fp16"],
      "diff_tree_ops addmm: trace2's kernel names")
# .tree on a matched op: both trees merged (TraceLens's print_merged_tree), worked out from the
# trees above: addmm pairs; each side's launch call and kernel differ; the cast is B's alone.
r = run(pa, "--diff", pb, "-c", f".tree {a.uid('aten::linear')}")
want = f"""└── aten::linear  [{a.uid('aten::linear')} | {b.uid('aten::linear')}]
    ├── aten::addmm  [{a.uid('aten::addmm')} | {b.uid('aten::addmm')}]
    │   ├── >> trace1: cudaLaunchKernel  [{a.uid('cudaLaunchKernel')} | -]
    │   │   └── >> trace1: sgemm_fp32  [{a.uid('sgemm_fp32')} | -]
    │   └── << trace2: hipLaunchKernel  [- | {b.uid('hipLaunchKernel', 1)}]
    │       └── << trace2: Cijk_gemm_fp16  [- | {b.uid('Cijk_gemm_fp16')}]
    └── << trace2: aten::_to_copy  [- | {b.uid('aten::_to_copy')}]
        └── << trace2: hipLaunchKernel  [- | {b.uid('hipLaunchKernel')}]
            └── << trace2: copy_kernel  [- | {b.uid('copy_kernel')}]
"""
check(r.returncode == 0 and r.stdout == want, f".tree merged:\n{r.stdout}{r.stderr}")
r = run(pa, "-c", f".tree {a.uid('aten::linear')}")
check(r.returncode == 0 and "UID: " in r.stdout and "trace2" not in r.stdout, "without --diff, .tree is main's tree")

# Saved databases are read through SQL, loaded traces from the store: the same rows.
dbs = [os.path.join(work, n) for n in ("cuda.db", "hip.db")]
for src, db in zip((pa, pb), dbs):
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([tlsql, "-q", src, "-o", db], check=True, stdin=subprocess.DEVNULL, timeout=300)
loaded = rows(pa, "--diff", pb, "-c", "SELECT * FROM tree_diff")
check(rows(*dbs[:1], "--diff", dbs[1], "-c", "SELECT * FROM tree_diff") == loaded,
      "saved databases: the same tree_diff rows as the loaded traces")
# One side loaded, the other saved (the store is read on its own thread, the database through SQL;
# names are numbered main's first either way).
for main, other in ((pa, dbs[1]), (dbs[0], pb)):
    check(rows(main, "--diff", other, "-c", "SELECT * FROM tree_diff") == loaded,
          f"{os.path.basename(main)} --diff {os.path.basename(other)}: the same tree_diff rows")

# tree_diff's name columns are the event table's, NULL where it has NULL (a nameless kernel and
# op, a kernel without dur): each row's name and dur, its op's name and its ancestor's, read back
# through the event table of the row's side (the ancestor's in main).
NAMES = ("SELECT count(*) AS n, sum(d.name IS NULL) AS nameless, sum(NOT ("
         "d.name IS iif(d.source = 'trace1', em.name, eo.name) AND d.dur IS iif(d.source = 'trace1', em.dur, eo.dur) "
         "AND d.cpu_op_name IS iif(d.source = 'trace1', om.name, oo.name) AND d.lca_name IS l.name)) AS bad "
         "FROM tree_diff d LEFT JOIN main.event em ON em.uid = d.uid LEFT JOIN other.event eo ON eo.uid = d.uid "
         "LEFT JOIN main.event om ON om.uid = d.cpu_op_uid LEFT JOIN other.event oo ON oo.uid = d.cpu_op_uid "
         "LEFT JOIN main.event l ON l.uid = d.lca_uid")
nameless = os.path.join(work, "nameless.json")
with open(nameless, "w") as f:
    json.dump({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 10, "args": {}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11, "dur": 1,
         "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 50, "dur": 5,
         "args": {"correlation": 1, "device": 0, "stream": 7}},
        {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 30, "dur": 10, "args": {}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 31, "dur": 1,
         "args": {"correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 60,
         "args": {"correlation": 2, "device": 0, "stream": 7}}]}, f)
nameless_db = os.path.join(work, "nameless.db")
if os.path.exists(nameless_db):
    os.remove(nameless_db)
subprocess.run([tlsql, "-q", nameless, "-o", nameless_db], check=True, stdin=subprocess.DEVNULL, timeout=300)
for x, y, least in ((pa, pb, 0), (dbs[0], dbs[1], 0), (nameless, nameless, 2), (nameless_db, nameless, 2),
                    (nameless, nameless_db, 2)):
    got = rows(x, "--diff", y, "-c", NAMES)[0]
    check(int(got["n"]) > 0 and got["bad"] == "0" and int(got["nameless"]) >= least,
          f"{os.path.basename(x)} --diff {os.path.basename(y)}: tree_diff's names and durations are the event "
          f"table's ({got})")

# diff_tree's order (tree_diff hands its rows over in it, so SQLite sorts nothing): by ancestor
# (none last), trace1's rows first, then by start and uid; written here as the plain SQL sort.
ORDERED = ("SELECT d.source, d.uid FROM tree_diff d LEFT JOIN main.event a ON d.source = 'trace1' AND a.uid = d.uid "
           "LEFT JOIN other.event b ON d.source = 'trace2' AND b.uid = d.uid "
           "ORDER BY d.lca_uid IS NULL, d.lca_uid, d.source, coalesce(a.ts, b.ts), d.uid")


def check_order(x, y):
    want = [(r["source"], r["uid"]) for r in rows(x, "--diff", y, "-c", ORDERED)]
    got = [(r["source"], r["gpu_op_uid"]) for r in rows(x, "--diff", y, "--report", "diff_tree")]
    check(got == want and len(got) > 0, f"{os.path.basename(x)}: diff_tree rows in ancestor, side, start order "
                                        f"({len(got)} rows)")


check_order(pa, pb)

r = run(pa, "--report", "diff_tree")
check(r.returncode == 1 and "needs a second trace" in r.stderr, f"without --diff: one line, exit 1 ({r.stderr.strip()})")


def raw(path):
    with (gzip.open(path) if path.endswith(".gz") else open(path)) as f:
        return json.load(f)["traceEvents"]


GEMM = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}
for x, y in [("t4_train_fp32.pt.trace.json", "t4_train_amp.pt.trace.json"),
             ("a100_switch_moe_batch4.json.gz", "a100_switch_moe_batch8.json.gz")]:
    px, py = os.path.join(shared, "traces", x), os.path.join(shared, "traces", y)
    if not (os.path.exists(px) and os.path.exists(py)):
        print(f"skip: {x} / {y} absent")
        continue
    gx = sorted((e["ts"], i, e["name"]) for i, e in enumerate(raw(px)) if e.get("cat") == "cpu_op" and e["name"] in GEMM)
    gy = sorted((e["ts"], i, e["name"]) for i, e in enumerate(raw(py)) if e.get("cat") == "cpu_op" and e["name"] in GEMM)
    check([n for _, _, n in gx] == [n for _, _, n in gy], f"{x}: the same GEMM ops in the same order")
    want = {str(i): str(j) for (_, i, _), (_, j, _) in zip(gx, gy)}
    ids = ",".join(want)
    got = {r["uid"]: r["other_uid"] for r in rows(px, "--diff", py, "-c",
                                                 f"SELECT e.uid, m.other_uid FROM event e, matched(e.uid) m WHERE e.uid IN ({ids})")}
    check(got == want, f"{x} vs {y}: {len(want)} GEMM ops pair with their counterparts "
                       f"({sum(got.get(k) == v for k, v in want.items())} do)")
    # Each GEMM's kernels (both sides) belong to that GEMM pair.
    lca = rows(px, "--diff", py, "-c",
               f"SELECT source, cpu_op_uid, lca_uid FROM tree_diff WHERE cpu_op_uid IN ({ids}) AND source = 'trace1' "
               f"UNION ALL SELECT source, cpu_op_uid, lca_uid FROM tree_diff WHERE source = 'trace2' AND cpu_op_uid IN "
               f"({','.join(want.values())})")
    back = {v: k for k, v in want.items()}
    bad = [r for r in lca if r["lca_uid"] != (r["cpu_op_uid"] if r["source"] == "trace1" else back[r["cpu_op_uid"]])]
    check(lca and not bad, f"{x}: {len(lca)} GEMM kernels under their GEMM pair ({len(bad)} not)")
    check_order(px, py)

# Naming a group (diff_tree_ops' name): each kernel's launcher, most kernel time first. Serving
# runs: A (CUDA) and B (HIP) each replay a graph inside "serve"; A also runs two eager fills there
# that B does not (unmatched, so their kernels' lowest common ancestor is "serve" too), and inside
# "sample" each launches a Triton kernel with no op above it (cuLaunchKernel / hipModuleLaunchKernel).
# The launch calls differ by name, so every replayed kernel belongs to "serve" (µs):
#   A: fills 2 + 2; 3 replays of k1 (10) + k2 (5) = 45: "cudaGraphLaunch | aten::fill_" (not
#      "aten::fill_", the only op above any of its kernels); B: 2 replays of 12 + 6 = 36: "hipGraphLaunch"
#   "sample": A "cuLaunchKernel" (3), B "hipModuleLaunchKernel" (4)
def ev(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}


def kern(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "device": 0, "stream": 7}}


def serving(graph_launch, replays, k1, k2, fills, triton_call, triton_us):
    out = [ev("user_annotation", "serve", 0, 1000), ev("user_annotation", "sample", 2000, 100)]
    for i in range(fills):
        out += [ev("cpu_op", "aten::fill_", 10 + 20 * i, 10), ev("cuda_runtime", "cudaLaunchKernel", 12 + 20 * i, 2,
                                                                 correlation=1 + i),
                kern("fill_k", 5000 + 10 * i, 2, 1 + i)]
    for i in range(replays):
        out += [ev("cuda_runtime", graph_launch, 100 + 100 * i, 5, correlation=11 + i),
                kern("k1", 6000 + 100 * i, k1, 11 + i), kern("k2", 6050 + 100 * i, k2, 11 + i)]
    out += [ev("cuda_driver" if triton_call.startswith("cu") else "cuda_runtime", triton_call, 2010, 5, correlation=20),
            kern("triton_sample", 9000, triton_us, 20)]
    return out


sa, sb = os.path.join(work, "serve_cuda.json"), os.path.join(work, "serve_hip.json")
for path, events in ((sa, serving("cudaGraphLaunch", 3, 10, 5, 2, "cuLaunchKernel", 3)),
                     (sb, serving("hipGraphLaunch", 2, 12, 6, 0, "hipModuleLaunchKernel", 4))):
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)
got = {r["lowest_common_ancestor_name"]: (r["name"], r["num_kernels_trace1"], r["kernel_time_trace1_us"],
                                          r["num_kernels_trace2"], r["kernel_time_trace2_us"])
       for r in rows(sa, "--diff", sb, "--report", "diff_tree_ops")}
check(got == {"serve": ("cudaGraphLaunch | aten::fill_", "8", "49.0", "4", "36.0"),
              "sample": ("cuLaunchKernel", "1", "3.0", "1", "4.0")}, f"serving pair: groups named by launcher ({got})")
got = {r["e"]: (r["ops_trace1"], r["ops_trace2"]) for r in rows(
    sa, "--diff", sb, "-c", "SELECT e.name AS e, g.ops_trace1, g.ops_trace2 FROM tree_diff_groups g "
                            "JOIN event e ON e.uid = g.lca_uid")}
check(got == {"serve": ("cudaGraphLaunch | aten::fill_", "hipGraphLaunch"),
              "sample": ("cuLaunchKernel", "hipModuleLaunchKernel")}, f"serving pair: both sides' launchers ({got})")
# With a capture trace for A (k1 captured under aten::mm, k2 under aten::add), its replays are
# attributed: each replayed kernel is named by its launch and its captured op:
# "cudaGraphLaunch > aten::mm" (3 x 10), "cudaGraphLaunch > aten::add" (3 x 5), then the fills (4).
capdir = os.path.join(work, "serve_capture")
os.makedirs(capdir, exist_ok=True)
cap = [ev("user_annotation", "capture_4_FULL", 0, 1000), ev("cuda_runtime", "cudaStreamBeginCapture", 10, 1),
       ev("cpu_op", "aten::mm", 20, 20), ev("cuda_runtime", "cudaLaunchKernel", 22, 1, kernel="k1"),
       ev("cpu_op", "aten::add", 50, 20), ev("cuda_runtime", "cudaLaunchKernel", 52, 1, kernel="k2"),
       ev("cuda_runtime", "cudaStreamEndCapture", 100, 1)]
with open(os.path.join(capdir, "cap.json"), "w") as f:
    json.dump({"traceEvents": cap}, f)
got = {r["lowest_common_ancestor_name"]: r["name"]
       for r in rows(sa, "--capture", capdir, "--diff", sb, "--report", "diff_tree_ops")}
check(got.get("serve") == "cudaGraphLaunch > aten::mm | cudaGraphLaunch > aten::add | aten::fill_",
      f"serving pair, A's replays attributed: launch and captured op ({got})")

# The shared H100 vLLM trace against itself: its 729 graph replays (their kernels share the
# launch's correlation in the JSON) are the groups named cudaGraphLaunch, all of their kernels and
# time, and nothing else is.
h100 = os.path.join(shared, "traces", "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz")
if os.path.exists(h100):
    data = raw(h100)
    corr = {e["args"]["correlation"] for e in data if e.get("name") == "cudaGraphLaunch"}
    replayed = [e for e in data if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
                and e.get("args", {}).get("correlation") in corr]
    want = (len(replayed), round(sum(int(Decimal(str(e["dur"])) * 1000) for e in replayed) / 1e3, 3))
    r = rows(h100, "--diff", h100, "-c", "SELECT sum(num_kernels_trace1) AS n, round(sum(kernel_time_trace1) / 1e3, 3) "
                                         "AS us FROM tree_diff_groups WHERE ops_trace1 = 'cudaGraphLaunch'")[0]
    check((int(r["n"]), float(r["us"])) == want and len(corr) == 729,
          f"H100 vLLM against itself: replays' groups named cudaGraphLaunch ({r}; JSON: {want}, {len(corr)} launches)")

finish()
