#!/usr/bin/env python3
"""GPU work replayed by CUDA / HIP graph launches (docs/inference.md): the health row
graph_replay_unattributed counts it with the GPU time it covers, and the graph_replay view lists
each replayed GPU event with its launch and place. References come from the raw JSON, read here:
the GPU events whose correlation id is that of a graph launch call.
usage: graph_replay.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "graph_replay")
os.makedirs(work, exist_ok=True)
GRAPH = re.compile(r"^(cudaGraphLaunch|cuGraphLaunch|hipGraphLaunch)(_.*)?$")
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def query(target, sql):
    r = subprocess.run([tlsql, "-q", target, "--csv", "-c", sql], capture_output=True, text=True, timeout=300)
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
finish()
