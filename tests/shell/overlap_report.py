#!/usr/bin/env python3
"""The overlap and overlap_groups reports (docs/reports.md): HTA's get_comm_comp_overlap rule re-implemented here
(per rank: GPU kernels, "nccl" kernels are communication, Memcpy / Memset neither, the rest
computation; each side's intervals merged; overlap time over communication time) on the 8 DLRM
ranks and hta/ns_resolution_rank0, with HTA's step selection (the last ProfilerStep dropped) and
with @steps 'all'; a hand-made 2-rank trace with the arithmetic written out (process groups,
phases, intra / inter-node).
usage: overlap_report.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, subprocess, sys
from decimal import Decimal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from intervals import merged  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "overlap_report")
os.makedirs(work, exist_ok=True)


def sets(args):
    """The overlap and overlap_groups reports, as lists of dicts."""
    out = []
    for name in ("overlap", "overlap_groups"):
        r = subprocess.run([tlsql, "-q", *args, "--csv", "--report", name], capture_output=True, text=True,
                           timeout=300)
        check(r.returncode == 0, f"{name} {args[-1][-40:]}: {r.stderr.strip()[:200]}")
        out.append(list(csv.DictReader(io.StringIO(r.stdout))))
    return out


def ns(v):
    return int(Decimal(str(v)) * 1000)


def hta_overlap(events, complete):
    """HTA's get_comm_comp_overlap for one rank, in %, rounded to 2 places (None: no communication)."""
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    if complete:  # HTA's TraceAnalysis: the GPU work launched before the last ProfilerStep's start
        steps = sorted(ns(e["ts"]) for e in events if e.get("ph") == "X"
                       and e.get("name", "").startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation")
        launch = {e["args"]["correlation"]: ns(e["ts"]) for e in events
                  if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
        if len(steps) >= 2:
            gpu = [e for e in gpu if launch.get(e["args"].get("correlation"), steps[-1]) < steps[-1]]
        else:
            gpu = [e for e in gpu if e["args"].get("correlation") in launch]
    comm = merged((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in gpu if e["name"].startswith("nccl"))
    comp = merged((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in gpu
                  if not e["name"].startswith("nccl") and "Memcpy" not in e["name"] and "Memset" not in e["name"])
    total = sum(e - s for s, e in comm)
    if total == 0:
        return None
    over, j = 0, 0
    for s, e in comm:  # both lists are disjoint and sorted: sweep
        while j < len(comp) and comp[j][1] <= s:
            j += 1
        k = j
        while k < len(comp) and comp[k][0] < e:
            over += min(e, comp[k][1]) - max(s, comp[k][0])
            k += 1
    return round(100 * over / total, 2)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


dlrm = os.path.join(shared, "traces", "dlrm_8xv100")
for target, files in ((dlrm, sorted(os.listdir(dlrm)) if os.path.isdir(dlrm) else []),
                      (os.path.join(shared, "traces", "hta", "ns_resolution_rank0.json.gz"), [""])):
    if not os.path.exists(target):
        print(f"skip {target}: not present")
        continue
    docs = [load(os.path.join(target, f)) if f else load(target) for f in files]
    for steps, complete in (("complete", True), ("all", False)):
        got = {r["rank"]: r["comp_comm_overlap_pct"] for r in sets([target, "-c", f".parameter set @steps '{steps}'"])[0]}
        want = {str(d.get("distributedInfo", {}).get("rank", "")): hta_overlap(d["traceEvents"], complete) for d in docs}
        want = {k: "" if v is None else str(v) for k, v in want.items()}
        check(got == want, f"{os.path.basename(target)} @steps {steps}: comp_comm_overlap_pct per rank {got} "
                           f"(HTA's rule: {want})")

# Hand-made, 2 ranks (µs). Rank 0: compute [0, 100); an all-reduce [50, 150) launched in the
# backward pass (under autograd's evaluate_function), group ranks [0, 1]; an all-gather [200, 220)
# launched under Optimizer.step, group ranks [0, 5]. comm = 100 + 20 = 120, overlapped 50 (41.67%),
# exposed 70. With 4 GPUs per node: [0, 1] is intra-node (100 µs), [0, 5] inter-node (20 µs).
# Rank 1: one all-reduce [0, 40) with no compute: 0%, exposed 40.
def rank_trace(rank, items):
    ev, corr = [], 0
    for kind, name, ts, dur, above, ranks in items:
        corr += 1
        if above:
            ev.append({"ph": "X", "cat": "user_annotation" if above.startswith("Optimizer") else "cpu_op",
                       "name": above, "pid": 1, "tid": 1, "ts": corr * 1000, "dur": 100, "args": {}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": corr * 1000 + 10, "dur": 5, "args": {"correlation": corr}})
        args = {"correlation": corr, "device": 0, "stream": 7 if kind == "comp" else 20}
        if ranks:
            args["Process Group Name"], args["Process Group Ranks"] = "pg" + str(len(ranks)), ranks
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": args["stream"], "ts": ts, "dur": dur,
                   "args": args})
    path = os.path.join(work, f"rank{rank}.json")
    with open(path, "w") as f:
        json.dump({"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": ev}, f)
    return path


r0 = rank_trace(0, [("comp", "gemm", 0, 100, None, None),
                    ("comm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 100,
                     "autograd::engine::evaluate_function: AddmmBackward0", [0, 1]),
                    ("comm", "ncclDevKernel_AllGather_RING_LL", 200, 20, "Optimizer.step#SGD.step", [0, 5])])
r1 = rank_trace(1, [("comm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 40, None, [0, 1])])
out = sets([r0, r1, "-c", ".parameter set @gpus_per_node 4"])
got = [(r["rank"], r["comp_comm_overlap_pct"], r["comm_kernels"], r["comm_ms"], r["overlapped_ms"], r["exposed_comm_ms"],
        r["intra_node_ms"], r["inter_node_ms"]) for r in out[0]]
check(got == [("0", "41.67", "2", "0.12", "0.05", "0.07", "0.1", "0.02"), ("1", "0.0", "1", "0.04", "0.0", "0.04", "0.04", "")],
      f"hand-made: per rank ({got})")
got = [(r["rank"], r["process_group"], r["phase"], r["kernels"], r["comm_ms"], r["exposed_comm_ms"]) for r in out[1]]
check(got == [("0", "pg2", "backward", "1", "0.1", "0.05"), ("0", "pg2", "optimizer", "1", "0.02", "0.02"),
              ("1", "pg2", "forward", "1", "0.04", "0.04")], f"hand-made: per group and phase ({got})")
finish()
