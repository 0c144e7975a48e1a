#!/usr/bin/env python3
"""GPU work replayed by CUDA / HIP graph launches (docs/inference.md): the health row
graph_replay_unattributed counts it with the GPU time it covers, and the graph_replay view lists
each replayed GPU event with its launch and place. References come from the raw JSON, read here:
the GPU events whose correlation id is that of a graph launch call. With --capture, replays are
attributed to the capture-time ops: hand-made traces with the answers written below, and the
shared MI300 vLLM pair against the capture trace's own launch calls and their enclosing ops.
usage: graph_replay.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from intervals import union_length  # noqa: E402
import graph_traces  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "graph_replay")
os.makedirs(work, exist_ok=True)
GRAPH = re.compile(r"^(cudaGraphLaunch|cuGraphLaunch|hipGraphLaunch)(_.*)?$")
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def query(target, sql, extra=()):
    r = subprocess.run([tlsql, "-q", target, *extra, "--csv", "-c", sql], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{os.path.basename(target)}: {sql[:50]}: {r.stderr.strip()[:200]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def reference(path):
    """(count, ns, {launch correlation: [GPU event ts in order]}) of the graph-replayed GPU events."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    launches = {e["args"]["correlation"] for e in events
                if e.get("ph") == "X" and GRAPH.match(e.get("name", "")) and "correlation" in e.get("args", {})}
    replayed = [e for e in events if e.get("cat") in GPU_CATS and e.get("args", {}).get("correlation") in launches]
    # ns: the trace's decimal µs, exactly (as the loader keeps them)
    ns = sum(round(float(e["dur"]) * 1000) for e in replayed)
    return len(replayed), ns


def health(target):
    rows = query(target, "SELECT count, detail FROM health WHERE \"check\" = 'graph_replay_unattributed'")
    if not rows:
        return 0, 0.0
    ms = float(re.search(r": ([0-9.]+) ms", rows[0]["detail"]).group(1))
    return int(rows[0]["count"]), ms


# A hand-made trace: one graph launch replays three kernels (out of order in the file), one eager
# launch runs a fourth. Replayed: 3 kernels, 2 + 3 + 4 = 9 µs of the 9 + 10 = 19 µs of GPU time.
hand = os.path.join(work, "graph.json")
ev = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
       "args": {"correlation": 7}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 10, "args": {}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 21, "dur": 2,
       "args": {"correlation": 8}}]
for ts, dur, name in ((40, 3, "k_b"), (30, 2, "k_a"), (50, 4, "k_c")):
    ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
               "args": {"correlation": 7, "device": 0, "stream": 7}})
ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 60, "dur": 10,
           "args": {"correlation": 8, "device": 0, "stream": 7}})
with open(hand, "w") as f:
    json.dump({"traceEvents": ev}, f)
check(health(hand) == (3, 0.009), f"hand-made: 3 replayed kernels, 0.009 ms ({health(hand)})")
rows = query(hand, "SELECT e.name, r.position, l.name AS launch FROM graph_replay r JOIN event e ON e.uid = r.uid "
                   "JOIN event l ON l.uid = r.graph_launch ORDER BY r.position")
check([(r["name"], r["position"], r["launch"]) for r in rows] ==
      [("k_a", "0", "cudaGraphLaunch"), ("k_b", "1", "cudaGraphLaunch"), ("k_c", "2", "cudaGraphLaunch")],
      f"hand-made: graph_replay in GPU start order ({rows})")
check("47.4%" in query(hand, "SELECT detail FROM health WHERE \"check\" = 'graph_replay_unattributed'")[0]["detail"],
      "hand-made: 9 of 19 µs = 47.4% of the GPU events' time")

# Only graph launches: the launch report (HTA's calls) is empty, and says that the calls, not the
# steps (this trace has none), are why.
only_graphs = os.path.join(work, "only_graphs.json")
with open(only_graphs, "w") as f:
    json.dump({"traceEvents": [e for e in ev if e.get("name") not in ("cudaLaunchKernel", "gemm")]}, f)
r = subprocess.run([tlsql, "-q", only_graphs, "--report", "launch"], capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and "launch: no rows: no GPU work launched by a call HTA's launch stats count" in r.stderr
      and "here: cudaGraphLaunch): set @launches 'all'" in r.stderr, f"only graph launches: launch says why ({r.stderr})")
r = subprocess.run([tlsql, "-q", only_graphs, "--csv", "-c", ".parameter set @launches 'all'", "--report", "launch"],
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and list(csv.DictReader(io.StringIO(r.stdout)))[0]["launches"] == "3",
      f"only graph launches, @launches 'all': the 3 replayed kernels ({r.stdout.strip()})")

for name in ("h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz", "tracelens/mi300/vllm_decode_graph_execution.json.gz",
             "t4_train_fp32.pt.trace.json"):
    path = os.path.join(shared, "traces", name)
    if not os.path.exists(path):
        print(f"skip {name}: not present")
        continue
    n, ns = reference(path)
    got_n, got_ms = health(path)
    check(got_n == n and abs(got_ms - ns / 1e6) < 0.0005,
          f"{name}: health counts {got_n} replayed GPU events, {got_ms} ms (the JSON: {n}, {ns / 1e6:.3f} ms)")
    view = query(path, "SELECT count(*) AS n, count(DISTINCT graph_launch) AS launches, "
                       "total(position = 0) AS firsts FROM graph_replay")[0]
    check(int(view["n"]) == n and int(float(view["firsts"])) == int(view["launches"]),
          f"{name}: graph_replay lists them, one position 0 per launch ({view})")


# --capture, hand-made. The capture trace holds four graphs:
#   0: aten::mm > gemm_a, then python frame forward > aten::relu > relu_k, then aten::zero_ > a memset
#   1: aten::add > add_k (grid 1, block 32)        2: aten::sub > add_k (grid 2, block 64)
#   3: aten::bmm and aten::cat, each one launch that records no kernel name (CUDA traces do not)
# all inside the annotation capture_4_FULL, which started before the first capture (the harness).
def x(cat, name, ts, dur, tid=1, pid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def launch(ts, kernel=None, grid=None, block=None, name="cudaLaunchKernel"):
    a = {}
    if kernel:
        a["kernel"] = kernel
    if grid:
        a["grid"], a["block"] = grid, block
    return x("cuda_runtime", name, ts, 1, **a)


cap = [x("user_annotation", "capture_4_FULL", 0, 1000),
       x("cuda_runtime", "cudaStreamBeginCapture", 10, 1),
       x("cpu_op", "aten::mm", 20, 20, **{"Input Dims": [[4, 8], [8, 16]], "Input type": ["float", "float"]}),
       launch(22, "gemm_a"),
       x("python_function", "model.py(3): forward", 50, 40),
       x("cpu_op", "aten::relu", 55, 20),
       launch(60, "relu_k"),
       x("cpu_op", "aten::zero_", 80, 8),
       launch(82, name="cudaMemsetAsync"),
       x("cuda_runtime", "cudaStreamEndCapture", 100, 1),
       x("cuda_runtime", "cudaStreamBeginCapture", 200, 1),
       x("cpu_op", "aten::add", 210, 10), launch(212, "add_k", [1, 1, 1], [32, 1, 1]),
       x("cuda_runtime", "cudaStreamEndCapture", 230, 1),
       x("cuda_runtime", "cudaStreamBeginCapture", 300, 1),
       x("cpu_op", "aten::sub", 310, 10), launch(312, "add_k", [2, 1, 1], [64, 1, 1]),
       x("cuda_runtime", "cudaStreamEndCapture", 330, 1),
       x("cuda_runtime", "cudaStreamBeginCapture", 400, 1),
       x("cpu_op", "aten::bmm", 410, 10), launch(412),
       x("cpu_op", "aten::cat", 430, 10), launch(432),
       x("cuda_runtime", "cudaStreamEndCapture", 450, 1)]
capdir = os.path.join(work, "capture")
os.makedirs(capdir, exist_ok=True)
with open(os.path.join(capdir, "cap.json"), "w") as f:
    json.dump({"traceEvents": cap}, f)
with open(os.path.join(capdir, "execution_details.json"), "w") as f:
    json.dump([{"file": "cap.json", "batch_size": 4, "mode": "FULL"}], f)

# The served trace: six graph launches inside execute_4_x.
#   100, 101: graph 0 (101's kernels out of order in the file; GPU order gemm_a, relu_k, memset)
#   102: add_k with grid 2 / block 64: graph 2 by its geometry
#   103: add_k with no grid: graphs 1 and 2 equally: not attributed (ambiguous)
#   104: other_k: no graph has it: not attributed
#   105: two kernels x1, x2: graph 3, by position (its calls name no kernels)
exe = [x("user_annotation", "execute_4_x", 1000, 1000)]
gpu = []


def k(name, ts, dur, corr, cat="kernel", **args):
    gpu.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                "args": {"correlation": corr, "device": 0, "stream": 7, **args}})


for i, corr in enumerate(range(100, 106)):
    exe.append(x("cuda_runtime", "cudaGraphLaunch", 1010 + 10 * i, 5, correlation=corr))
k("gemm_a", 1100, 10, 100), k("relu_k", 1120, 5, 100), k("Memset (Device)", 1130, 1, 100, cat="gpu_memset")
k("Memset (Device)", 1230, 1, 101, cat="gpu_memset"), k("relu_k", 1220, 6, 101), k("gemm_a", 1200, 12, 101)
k("add_k", 1300, 3, 102, grid=[2, 1, 1], block=[64, 1, 1])
k("add_k", 1350, 3, 103)
k("other_k", 1400, 2, 104)
k("x1", 1500, 4, 105), k("x2", 1510, 5, 105)
served = os.path.join(work, "served.json")
with open(served, "w") as f:
    json.dump({"traceEvents": exe + gpu}, f)
withcap = ("--capture", capdir)

rows = query(served, "SELECT \"check\", count FROM health WHERE \"check\" LIKE 'graph_replay%' ORDER BY 1", withcap)
# attributed: 3 + 3 + 1 + 2 = 9 GPU events; not: add_k of 103 and other_k of 104
check([(r["check"], r["count"]) for r in rows] == [("graph_replay_attributed", "9"), ("graph_replay_unattributed", "2")],
      f"hand-made capture: 9 replayed events attributed, 2 not ({rows})")
detail = query(served, "SELECT detail FROM health WHERE \"check\" = 'graph_replay_unattributed'", withcap)[0]["detail"]
check("1 match no captured graph nor eager run, 1 match several graphs equally, and the order rule cannot pair them"
      in detail and "e.g. 1 replays of one step tie between the same 2 different graphs, 1, 2" in detail,
      f"hand-made capture: why not ({detail})")
rows = query(served, "SELECT id, capture, nodes, batch_size, mode FROM captured_graph ORDER BY id", withcap)
check([tuple(r.values()) for r in rows] == [("0", "0", "3", "4", "FULL"), ("1", "1", "1", "4", "FULL"),
                                             ("2", "2", "1", "4", "FULL"), ("3", "3", "2", "4", "FULL")],
      f"hand-made capture: captured_graph, with execution_details.json's batch size and mode ({rows})")
rows = query(served, "SELECT l.correlation, g.graph FROM replay_graph g JOIN event l ON l.uid = g.launch ORDER BY 1",
             withcap)
check([(r["correlation"], r["graph"]) for r in rows] == [("100", "0"), ("101", "0"), ("102", "2"), ("105", "3")],
      f"hand-made capture: replay_graph ({rows})")
rows = query(served, "SELECT l.correlation, count(*) AS n, group_concat(DISTINCT coalesce(r.graph, '-')) AS g "
                     "FROM graph_replay r JOIN event l ON l.uid = r.graph_launch GROUP BY 1 ORDER BY 1", withcap)
check([tuple(r.values()) for r in rows] == [("100", "3", "0"), ("101", "3", "0"), ("102", "1", "2"), ("103", "1", "-"),
                                             ("104", "1", "-"), ("105", "2", "3")],
      f"hand-made capture: the graph_replay view says which graph each event replayed ({rows})")
rows = query(served, "SELECT lc.correlation AS corr, e.name, o.name AS launcher, r.position, "
                     "(SELECT group_concat(a.name, ' < ') FROM ancestors(e.uid) a) AS stack "
                     "FROM graph_replay r JOIN event e ON e.uid = r.uid JOIN launch_link l ON l.gpu = e.uid "
                     "JOIN event o ON o.uid = l.launcher JOIN event lc ON lc.uid = r.graph_launch "
                     "WHERE l.runtime = r.graph_launch ORDER BY e.ts", withcap)
got = [(r["corr"], r["name"], r["launcher"]) for r in rows]
want = [("100", "gemm_a", "aten::mm"), ("100", "relu_k", "aten::relu"), ("100", "Memset (Device)", "aten::zero_"),
        ("101", "gemm_a", "aten::mm"), ("101", "relu_k", "aten::relu"), ("101", "Memset (Device)", "aten::zero_"),
        ("102", "add_k", "aten::sub"), ("103", "add_k", "cudaGraphLaunch"), ("104", "other_k", "cudaGraphLaunch"),
        ("105", "x1", "aten::bmm"), ("105", "x2", "aten::cat")]
check(got == want, f"hand-made capture: each replayed event's launcher, runtime still the graph launch ({got})")
relu = [r["stack"] for r in rows if r["name"] == "relu_k"]
# The capture's launch call, op and frame, then the served trace's own stack; not the harness
# annotation capture_4_FULL (it started before the capture began).
check(relu == ["cudaLaunchKernel < aten::relu < model.py(3): forward < cudaGraphLaunch < execute_4_x"] * 2,
      f"hand-made capture: ancestors of a replayed kernel ({relu})")
rows = query(served, "SELECT o.uid, gpu_time(o.uid) AS ns, flops(o.uid) AS f, o.dur FROM op o WHERE o.name = 'aten::mm' "
                     "ORDER BY o.uid", withcap)
# one aten::mm per replay of graph 0: 10 and 12 µs of GPU time, 2 * 4 * 8 * 16 = 1024 FLOPs each, no host time
check([(r["ns"], r["f"], r["dur"]) for r in rows] == [("10000", "1024.0", "0"), ("12000", "1024.0", "0")],
      f"hand-made capture: each replay's copy of aten::mm has its own GPU time and FLOPs ({rows})")
rows = query(served, "SELECT name, count, gpu_us FROM op_summary WHERE name IN ('aten::mm', 'aten::relu', 'aten::sub') "
                     "ORDER BY name", withcap)
check([tuple(r.values()) for r in rows] == [("aten::mm", "2", "22.0"), ("aten::relu", "2", "11.0"),
                                             ("aten::sub", "1", "3.0")],
      f"hand-made capture: the ops report counts graph work ({rows})")
# Saved and reopened, the attribution stays (the copies are rows like any other).
saved = os.path.join(work, "served.db")
if os.path.exists(saved):
    os.remove(saved)
r = subprocess.run([tlsql, "-q", served, *withcap, "-o", saved], capture_output=True, text=True, timeout=60)
check(r.returncode == 0, f"hand-made capture: saved ({r.stderr.strip()})")
rows = query(saved, "SELECT name, count, gpu_us FROM op_summary WHERE name = 'aten::mm'")
check([tuple(r.values()) for r in rows] == [("aten::mm", "2", "22.0")], f"hand-made capture: reopened ({rows})")

# The rules for replays that do not match one graph exactly (tests/tools/graph_traces.py builds the
# traces; its docstrings work out the answers checked here).
def case(name):
    return graph_traces.write(name, os.path.join(work, "rules", name))


def replays(served, capdir):
    """[(launch correlation, kernel, graph or '', paired, launcher, innermost nn.Module frame)] by GPU start."""
    rows = query(served, "SELECT lc.correlation AS corr, e.name, r.graph, r.paired, o.name AS launcher, "
                         "(SELECT a.name FROM ancestors(e.uid) a WHERE a.kind = 'python' LIMIT 1) AS module "
                         "FROM graph_replay r JOIN event e ON e.uid = r.uid JOIN event lc ON lc.uid = r.graph_launch "
                         "JOIN launch_link l ON l.gpu = e.uid JOIN event o ON o.uid = l.launcher ORDER BY e.ts",
                 ("--capture", capdir))
    return [(int(r["corr"]), r["name"], r["graph"], r["paired"], r["launcher"], r["module"]) for r in rows]


def health_rows(served, capdir):
    rows = query(served, "SELECT coalesce(trace, '-') AS t, \"check\", count, detail FROM health "
                         "WHERE \"check\" LIKE 'graph_replay%'", ("--capture", capdir))
    return {(r["t"], r["check"]): (int(r["count"]), r["detail"]) for r in rows}


def share(served, capdir):
    """Attributed % of the replayed GPU time (paired events' time over all replayed events')."""
    r = query(served, "SELECT round(100.0 * total(CASE WHEN paired THEN e.dur END) / total(e.dur), 1) AS pct "
                      "FROM graph_replay r JOIN event e ON e.uid = r.uid", ("--capture", capdir))
    return float(r[0]["pct"])


# Ties, no step recorded: two rounds of graphs 0-4; layer replays take graphs 1, 2, 3 in turn.
served_t, cap_t = case("ties")
got = replays(served_t, cap_t)
want_graphs = {1: "0", 2: "1", 3: "2", 4: "3", 5: "4", 6: "0", 7: "1", 8: "2", 9: "3", 10: "4"}
check(len(got) == 16 and all(g == want_graphs[c] for c, _, g, _, _, _ in got),
      f"ties: the j-th layer replay of the trace takes graph 1 + j mod 3 ({[(c, g) for c, _, g, *_ in got]})")
modules = [m for c, n, _, _, _, m in got if n == "mm_k"]
check(modules == [f"nn.Module: DecoderLayer_{i}" for i in (0, 1, 2, 0, 1, 2)],
      f"ties: each layer replay's module path is its own layer's ({modules})")
check(share(served_t, cap_t) == 100.0, "ties: 160 of 160 µs attributed")
h = health_rows(served_t, cap_t)
check(("0", "graph_replay_unattributed") not in h
      and "6 matched several equally and took one by their place" in h[("0", "graph_replay_attributed")][1],
      f"ties: health counts 6 replays paired by their place ({h})")

# Steps: per step; the third step's 2 layer replays between 3 graphs stay unattributed.
served_s, cap_s = case("steps")
got = replays(served_s, cap_s)
by_launch = {}
for c, _, g, _, _, _ in got:
    by_launch.setdefault(c, set()).add(g)
check([by_launch[c] for c in range(1, 15)] ==
      [{"0"}, {"1"}, {"2"}, {"3"}, {"4"}, {"0"}, {"1"}, {"2"}, {"3"}, {"4"}, {"0"}, {""}, {""}, {"4"}],
      f"steps: the order rule per step ({by_launch})")
check(share(served_s, cap_s) == round(100 * 180 / 220, 1), "steps: 180 of 220 µs attributed")
detail = health_rows(served_s, cap_s)[("0", "graph_replay_unattributed")][1]
check("2 match several graphs equally, and the order rule cannot pair them" in detail
      and "e.g. 2 replays of one step tie between the same 3 graphs, 1, 2, 3" in detail,
      f"steps: health says why the third step's layers are not attributed ({detail})")

# Different graphs tie: a recorded step with exactly as many replays pairs them; the trace does not.
served_u, cap_u = case("unlike")
got = replays(served_u, cap_u)
check([(c, g) for c, n, g, *_ in got if n == "mm_k"] == [(1, "0"), (2, "1"), (3, ""), (4, "")],
      f"unlike: by order in a step, not outside one ({got})")
detail = health_rows(served_u, cap_u)[("0", "graph_replay_unattributed")][1]
check("2 replays of the trace (no step recorded) tie between the same 2 different graphs" in detail,
      f"unlike: health says why ({detail})")

# Near-exact: one node missing. Block_3's add_k pairs with Block_3's aten::add; Block_2's add has
# no GPU time; health names the missing node; the capture trace's own replay is described as such.
served_n, cap_n = case("near_missing")
got = replays(served_n, cap_n)
adds = [(launcher, module) for _, n, _, _, launcher, module in got if n == "add_k"]
check(len(got) == 15 and all(g == "0" and p == "1" for _, _, g, p, _, _ in got)
      and adds == [("aten::add", f"nn.Module: Block_{b}") for b in (0, 1, 3)],
      f"near_missing: 15 events paired in place, Block_2's add_k missing ({adds})")
rows = query(served_n, "SELECT (SELECT a.name FROM ancestors(o.uid) a WHERE a.kind = 'python' LIMIT 1) AS module, "
                       "gpu_time(o.uid) AS ns FROM op o WHERE o.name = 'aten::add' ORDER BY 1", ("--capture", cap_n))
check([(r["module"], r["ns"]) for r in rows] ==
      [("nn.Module: Block_0", "10000"), ("nn.Module: Block_1", "10000"), ("nn.Module: Block_2", "0"),
       ("nn.Module: Block_3", "10000")], f"near_missing: the missing node's op has no GPU time ({rows})")
h = health_rows(served_n, cap_n)
check(h.get(("0", "graph_replay_near_exact"), (0, ""))[0] == 1
      and "1 graph nodes ran no GPU event: add_k x1" in h[("0", "graph_replay_near_exact")][1]
      and ("0", "graph_replay_unattributed") not in h and share(served_n, cap_n) == 100.0,
      f"near_missing: 150 of 150 µs attributed, health names the missing node ({h})")
rows = query(served_n, "SELECT rule, tied, missing_nodes, extra_events FROM replay_graph", ("--capture", cap_n))
check([tuple(r.values()) for r in rows] == [("near", "1", "1", "0")], f"near_missing: replay_graph ({rows})")
own = h.get(("-", "graph_replay_in_capture_trace"), (0, ""))
check(own[0] == 15 and "1 replays; of those, 0 run a graph read from this trace exactly, 1 all but a few" in own[1],
      f"near_missing: the capture trace's own replay, described as the capture trace's ({own})")
rows = query(served_n, "SELECT detail FROM health WHERE trace IS NULL", ("--capture", cap_n))
check(rows and not any(r["detail"].endswith("no capture trace given (--capture)") for r in rows)
      and not any("no capture trace given" in r["detail"] for r in rows),
      f"near_missing: no capture-trace health row says no capture trace was given ({rows})")

# Near-exact: one extra GPU event stays under the graph launch, counted and named.
served_e, cap_e = case("near_extra")
got = replays(served_e, cap_e)
stray = [(g, p, launcher) for _, n, g, p, launcher, _ in got if n == "stray_k"]
check(stray == [("0", "0", "hipGraphLaunch")] and sum(p == "1" for _, _, _, p, _, _ in got) == 16,
      f"near_extra: 16 paired, stray_k under the graph launch ({stray})")
h = health_rows(served_e, cap_e)
check("1 GPU events paired with no node and stay under the graph launch (0.010 ms, 5.9% of the GPU events' time): "
      "stray_k x1" in h[("0", "graph_replay_near_exact")][1]
      and h[("0", "graph_replay_unattributed")][0] == 1 and share(served_e, cap_e) == round(100 * 160 / 170, 1),
      f"near_extra: 160 of 170 µs attributed, stray_k named ({h})")

# Ambiguous: as close to two different graphs: not attributed, and health says why.
served_a, cap_a = case("ambiguous")
h = health_rows(served_a, cap_a)
check(("0", "graph_replay_attributed") not in h and h[("0", "graph_replay_unattributed")][0] == 7
      and "1 are equally close to several different graphs (near-exact: not guessed; e.g. graphs 0, 1 each with 1 "
          "nodes or events unpaired)" in h[("0", "graph_replay_unattributed")][1],
      f"ambiguous: not attributed, health says why ({h})")

# xDiT-sized: 4 replays of a 1,567-node graph, each without its last node: all 6,264 attributed.
served_x, cap_x = case("xdit")
h = health_rows(served_x, cap_x)
check(h.get(("0", "graph_replay_attributed"), (0, ""))[0] == 6264 and ("0", "graph_replay_unattributed") not in h
      and h[("0", "graph_replay_near_exact")][0] == 4 and "4 graph nodes ran no GPU event: x16 x4"
      in h[("0", "graph_replay_near_exact")][1], f"xdit: 4 x 1,566 attributed, the last node (x16) missing ({h})")

# Without a capture trace: a replay whose kernels also ran eagerly in the same trace, one after the
# other on a stream and always launched by the same ops with the same shapes, takes those ops.
#   eager, twice (under model.py(5): forward): aten::mm -> k1, then aten::relu -> k2
#   eager k3: once by aten::add, once by aten::sub (two different ops: which one is unknown)
#   graph launch 50: k1, k2 -> aten::mm, aten::relu (copies; eager_start = the first eager k1)
#   graph launch 51: k3 -> not attributed (several eager runs, different ops)
#   graph launch 52: k1 alone -> the run k1 alone exists eagerly (contiguous): aten::mm
ev, corr, t = [], [0], [0]


def eager(op, kernel, frame=None, dims=None):
    corr[0] += 1
    t[0] += 100
    if frame:
        ev.append(x("python_function", frame, t[0] - 5, 60))
    ev.append(x("cpu_op", op, t[0], 40, **({"Input Dims": dims} if dims else {})))
    ev.append(x("cuda_runtime", "cudaLaunchKernel", t[0] + 5, 5, correlation=corr[0]))
    ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": 10000 + t[0], "dur": 7,
               "args": {"correlation": corr[0], "device": 0, "stream": 7}})


for _ in range(2):
    eager("aten::mm", "k1", "model.py(5): forward", [[2, 3], [3, 4]])
    eager("aten::relu", "k2", None, [[2, 4]])
eager("aten::add", "k3")
eager("aten::sub", "k3")
for c, names in ((50, ["k1", "k2"]), (51, ["k3"]), (52, ["k1"])):
    t[0] += 100
    ev.append(x("cuda_runtime", "cudaGraphLaunch", t[0], 5, correlation=c))
    for i, n in enumerate(names):
        ev.append({"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 8, "ts": 20000 + t[0] + 10 * i, "dur": 3,
                   "args": {"correlation": c, "device": 0, "stream": 8}})
eagerpath = os.path.join(work, "eager.json")
with open(eagerpath, "w") as f:
    json.dump({"traceEvents": ev}, f)
rows = query(eagerpath, "SELECT l.correlation AS corr, e.name, o.name AS launcher, k.correlation AS start "
                        "FROM graph_replay r JOIN event e ON e.uid = r.uid JOIN launch_link ll ON ll.gpu = e.uid "
                        "JOIN event o ON o.uid = ll.launcher JOIN event l ON l.uid = r.graph_launch "
                        "LEFT JOIN event k ON k.uid = r.eager_start ORDER BY e.ts")
got = [(r["corr"], r["name"], r["launcher"], r["start"]) for r in rows]
check(got == [("50", "k1", "aten::mm", "1"), ("50", "k2", "aten::relu", "1"), ("51", "k3", "cudaGraphLaunch", ""),
              ("52", "k1", "aten::mm", "1")], f"eager runs: replays take the ops of the same kernels run eagerly ({got})")
rows = query(eagerpath, "SELECT \"check\", count FROM health WHERE \"check\" LIKE 'graph_replay%' ORDER BY 1")
check([(r["check"], r["count"]) for r in rows] == [("graph_replay_attributed", "3"), ("graph_replay_unattributed", "1")],
      f"eager runs: 3 attributed, 1 not ({rows})")
rows = query(eagerpath, "SELECT (SELECT group_concat(a.name, ' < ') FROM ancestors(e.uid) a) AS stack, "
                        "flops(ll.launcher) AS f FROM graph_replay r JOIN event e ON e.uid = r.uid "
                        "JOIN launch_link ll ON ll.gpu = e.uid WHERE e.name = 'k1' ORDER BY e.ts")
# k1, k2: their calls share no ancestor (the frame holds aten::mm only), so whole stacks are
# copied; k1 alone: up to its op, not the frame above it.
got = [(r["stack"], r["f"]) for r in rows]
check(got == [("cudaLaunchKernel < aten::mm < model.py(5): forward < cudaGraphLaunch", "48.0"),
              ("cudaLaunchKernel < aten::mm < cudaGraphLaunch", "48.0")],
      f"eager runs: the copied stack and the op's FLOPs (2 x 2 x 3 x 4 = 48) ({got})")

# A capture trace cannot make the load take what memory it likes: a graph whose one launch sits
# under 5,000 nested ops (5,001 rows to copy per replay, no python frames to leave out), replayed
# 1,000 times. The copies stop at 4 x 2^20 rows (the trace is smaller than 2^20): 838 replays of
# 5,001 rows fit in 4,194,304; the other 162 are not attributed, and health says why.
deep = [x("cuda_runtime", "cudaStreamBeginCapture", 0, 1)]
deep += [x("cpu_op", f"op{i}", 10 + i, 20000 - 2 * i) for i in range(5000)]
deep += [launch(5100, "deep_k"), x("cuda_runtime", "cudaStreamEndCapture", 30000, 1)]
deepdir = os.path.join(work, "deep")
os.makedirs(deepdir, exist_ok=True)
with open(os.path.join(deepdir, "cap.json"), "w") as f:
    json.dump({"traceEvents": deep}, f)
many = []
for i in range(1000):
    many.append(x("cuda_runtime", "cudaGraphLaunch", 100 * i, 5, correlation=i + 1))
    many.append({"ph": "X", "cat": "kernel", "name": "deep_k", "pid": 0, "tid": 7, "ts": 100 * i + 50, "dur": 1,
                 "args": {"correlation": i + 1, "device": 0, "stream": 7}})
manypath = os.path.join(work, "many.json")
with open(manypath, "w") as f:
    json.dump({"traceEvents": many}, f)
rows = query(manypath, "SELECT \"check\", count, detail FROM health WHERE \"check\" LIKE 'graph_replay%' ORDER BY 1",
             ("--capture", deepdir))
got = [(r["check"], r["count"]) for r in rows]
check(got == [("graph_replay_attributed", "838"), ("graph_replay_unattributed", "162")]
      and "162 would copy more than 4194304 rows" in rows[-1]["detail"],
      f"hostile capture: copies stop at 4 M rows ({got}, {rows[-1]['detail'][-120:] if rows else ''})")

# Bad capture input: one line naming the file, exit code 1.
for args, want in ((("--capture", os.path.join(work, "missing.json")), "missing.json"),
                   (("--capture", os.path.join(work, "badcap")), "execution_details.json: at byte")):
    if "badcap" in args[1]:
        os.makedirs(args[1], exist_ok=True)
        with open(os.path.join(args[1], "cap.json"), "w") as f:
            json.dump({"traceEvents": cap}, f)
        with open(os.path.join(args[1], "execution_details.json"), "w") as f:
            f.write('[{"file": "cap.json", "batch_size": 4,')
    r = subprocess.run([tlsql, "-q", served, *args, "-c", "SELECT 1"], capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 1 and len(lines) == 1 and want in lines[0], f"--capture {args[1]}: one-line error ({lines})")


# The shared MI300 vLLM decode pair. The reference reads the capture trace's own calls: between
# hipStreamBeginCapture and hipStreamEndCapture, the launch calls in start order, each with the
# kernel its `kernel` arg names and the innermost cpu_op that contains it on its thread.
def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


mi300 = os.path.join(shared, "traces", "tracelens", "mi300")
execution = os.path.join(mi300, "vllm_decode_graph_execution.json.gz")
capture_dir = os.path.join(mi300, "vllm_decode_capture")
if os.path.exists(execution) and os.path.isdir(capture_dir):
    capture = [os.path.join(capture_dir, f) for f in os.listdir(capture_dir) if f.endswith(".json.gz")]
    ev = load(capture[0])
    begin = next(e for e in ev if e.get("name") == "hipStreamBeginCapture")
    end = next(e for e in ev if e.get("name") == "hipStreamEndCapture")
    calls = sorted((e for e in ev if e.get("cat") == "cuda_runtime" and e["tid"] == begin["tid"]
                    and begin["ts"] < e["ts"] < end["ts"] and "kernel" in e.get("args", {})), key=lambda e: e["ts"])
    ops = [e for e in ev if e.get("cat") == "cpu_op" and e["tid"] == begin["tid"]]

    def innermost(call):
        inside = [o for o in ops if o["ts"] <= call["ts"] and call["ts"] + call["dur"] <= o["ts"] + o["dur"]]
        return max(inside, key=lambda o: (o["ts"], -o["dur"]))["name"] if inside else None

    want = [(c["args"]["kernel"], innermost(c)) for c in calls]
    rows = query(execution, "SELECT r.position, e.name, o.name AS launcher, o.kind FROM graph_replay r "
                            "JOIN event e ON e.uid = r.uid JOIN launch_link l ON l.gpu = r.uid "
                            "JOIN event o ON o.uid = l.launcher ORDER BY r.position", ("--capture", capture_dir))
    same = sum(1 for r in rows if int(r["position"]) < len(want) and r["kind"] == "cpu_op"
               and (r["name"], r["launcher"]) == want[int(r["position"])])
    check(len(rows) == len(want) == 421 and same >= 0.95 * len(rows),
          f"MI300 vLLM: {same} of {len(rows)} replayed kernels have the capture's kernel at their position and its "
          f"innermost op as launcher (capture: {len(want)} launch calls)")
    aten = sum(1 for r in rows if r["launcher"].startswith("aten::"))
    print(f"MI300 vLLM: {same} of {len(rows)} attributed as the capture says; {aten} of them to aten:: ops "
          f"(the rest to vllm::, triton and aiter ops, as in the capture trace)")
    # The ops report's GPU time against the trace's busy time (union of GPU intervals, from the
    # JSON): they differ by at most the GPU time no op carries (eager work outside ops).
    raw = load(execution)
    busy = union_length((round(float(e["ts"]) * 1000), round(float(e["ts"]) * 1000) + round(float(e["dur"]) * 1000))
                        for e in raw if e.get("cat") in GPU_CATS)
    ops_us = float(query(execution, "SELECT sum(gpu_us) AS us FROM op_summary", ("--capture", capture_dir))[0]["us"])
    outside = [e for e in raw if e.get("cat") in GPU_CATS
               and e.get("args", {}).get("correlation") not in {505113}]
    outside_us = sum(float(e["dur"]) for e in outside)
    # counted_op counts each GPU ns once: never above busy, and below it by at most the eager work
    check(busy / 1e3 - outside_us - 1 <= ops_us <= busy / 1e3 + 1,
          f"MI300 vLLM: ops report {ops_us:.1f} us of GPU time vs {busy / 1e3:.1f} us busy (eager GPU work outside "
          f"the replay: {outside_us:.1f} us)")
else:
    print("skip MI300 vLLM capture: not present")

# The shared MI300 vLLM PIECEWISE pair: 25 graph launches in one step against the 25 graphs of
# the capture trace (23 of them identical layers). TraceLens pairs them by position when the counts
# agree (its trace_capture_merge_experimental); the reference here is that rule on the raw JSON
# (the k-th hipGraphLaunch of the step, by start, with the k-th capture), and TraceLens's own
# ops_summary.csv of this pair (its tests/traces/inference/vllm_prefilldecode_piecewise/perf_csvs:
# total_subtree_kernel_time_sum in µs, count) for the ops the replays now carry.
piecewise = os.path.join(mi300, "vllm_piecewise", "graph_execution.json.gz")
piece_capture = os.path.join(mi300, "vllm_piecewise", "capture_traces")
if os.path.exists(piecewise) and os.path.isdir(piece_capture):
    raw = load(piecewise)
    launches = sorted((e for e in raw if e.get("ph") == "X" and GRAPH.match(e.get("name", ""))), key=lambda e: e["ts"])
    capture = [os.path.join(piece_capture, f) for f in os.listdir(piece_capture) if f.endswith(".json.gz")]
    begins = [e for e in load(capture[0]) if e.get("name") == "hipStreamBeginCapture"]
    n, ns = reference(piecewise)
    rows = query(piecewise, "SELECT l.correlation AS corr, g.graph FROM replay_graph g JOIN event l ON l.uid = g.launch",
                 ("--capture", piece_capture))
    got = {int(r["corr"]): int(r["graph"]) for r in rows}
    want = {e["args"]["correlation"]: k for k, e in enumerate(launches)} if len(launches) == len(begins) else {}
    check(len(want) == 25 and got == want, f"PIECEWISE: the k-th replay is the k-th captured graph ({got})")
    check(share(piecewise, piece_capture) == 100.0 and
          query(piecewise, "SELECT count(*) AS n FROM graph_replay WHERE paired", ("--capture", piece_capture))[0]["n"]
          == str(n), f"PIECEWISE: all {n} replayed events ({ns / 1e6:.3f} ms) attributed")
    tracelens = {"vllm::moe_forward": (125458.6240234375, 24), "aten::addmm": (17301.8173828125, 72),
                 "vllm::unified_attention_with_output": (5146.9072265625, 24),
                 "aiter::rmsnorm2d_fwd_with_add_ck": (3367.73828125, 48), "_C::rotary_embedding": (1706.3291015625, 24),
                 "triton_poi_fused_constant_pad_nd_moe_forward_0": (1566.326171875, 24),
                 "triton_poi_fused__to_copy_1": (435.6962890625, 23)}
    rows = query(piecewise, "SELECT name, count, gpu_us FROM op_summary", ("--capture", piece_capture))
    mine = {r["name"]: (float(r["gpu_us"]), int(r["count"])) for r in rows if r["name"] in tracelens}
    check(len(mine) == len(tracelens) and all(abs(mine[k][0] - v[0]) < 0.05 and mine[k][1] == v[1]
                                              for k, v in tracelens.items()),
          f"PIECEWISE: ops as TraceLens's ops_summary has them ({mine})")
else:
    print("skip MI300 vLLM PIECEWISE capture: not present")
finish()
