#!/usr/bin/env python3
"""The bulk perf pass (udf/perf/perf_table.h) against the rules re-implemented here in Python, over
every event of several traces, loaded and saved: gpu_time (the union of the GPU work at or below
the event), counted (modeled or kernel-launching ops, or runtime calls launching with no op above them, with
no modeled or counted op above: counted_op),
inclusive numbers (an op, python frame or annotation without its own model reports the sum of its
children's numbers, a runtime call passing its kernel's up), marker / marker_path (the "## ... ##"
events above), and the reports built on them.
usage: perf_table_rules.py TLSQL DATA_DIR SHARED_DIR WORK_DIR"""
import csv, io, json, os, shutil, sqlite3, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from intervals import union_length  # noqa: E402

tlsql, data, shared, work = sys.argv[1:5]
work = os.path.join(work, "perf_table_rules")
os.makedirs(work, exist_ok=True)
traces = [os.path.join(data, t) for t in ("tracelens_h100_bert_small_uncased.json.gz", "hta_backward_thread.json",
                                          "fx_markers.json", "gpu_time.json")]
# (Qwen on H100: every aten::mm / addmm launches a cuBLAS workspace Memset beside its GEMM kernel.)
traces += [os.path.join(shared, "traces", t) for t in ("tracelens/mi300/resnet_act_checkpoint.json.gz",
                                                      "tracelens/h100/Qwen1.5_0.5B_chat.json.gz",
                                                      "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz",
                                                      "a100_switch_moe_batch4.json.gz")]
GPU = {"kernel", "memcpy", "memset"}
# Hand-made: op args a whole-document JSON parse reads in its own way, which the loaded trace's
# pass (the three members found in the store's encoded text) must read alike. Written as text: a
# key given twice is not something json.dump writes. aten::mm FLOPs 2·M·N·K, bytes (MK + KN + MN)
# times the element size: the last "Input Dims" of two, [16, 8] x [8, 4]: 1024 and 224 · 4 = 896;
# a key written with an escape ("Input\u0020Dims" is "Input Dims"), [64, 128] x [128, 32]: 524288
# and 14336 · 4 = 57344; a nested "Input Dims" ignored, the top-level [2, 4] x [4, 8] in fp16: 128
# and 56 · 2 = 112; no "Input Dims": no model.
edge = os.path.join(work, "op_args_edge.json")
with open(edge, "w") as f:
    mm = '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %d, "dur": 10, "args": %s}'
    f.write('{"traceEvents": [' + ",\n".join(mm % (20 * i, a) for i, a in enumerate([
        '{"Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"], "Input Dims": [[16, 8], [8, 4]]}',
        '{"Input\\u0020Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]}',
        '{"x": {"Input Dims": [[1, 1], [1, 1]]}, "Input Dims": [[2, 4], [4, 8]], "Input type": ["c10::Half", "c10::Half"]}',
        '{"Input type": ["float", "float"]}'])) + "]}")
traces.append(edge)
EDGE_WANT = [("1024.0", "896.0"), ("524288.0", "57344.0"), ("128.0", "112.0"), ("", "")]


def query(target, sql):
    r = subprocess.run([tlsql, target, "--csv", "-c", sql], capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"{os.path.basename(target)}: {sql[:60]}... {r.stderr.strip()[:100]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))



def expected(rows, launchers):
    by_uid = {r["uid"]: r for r in rows}
    kids = {}
    for r in rows:
        if r["parent"] in by_uid:
            kids.setdefault(r["parent"], []).append(r["uid"])
    modeled_op = {u for u, r in by_uid.items() if r["kind"] == "cpu_op" and r["modeled"] == "1"}
    gpu, counted, marker, path = {}, {}, {}, {}
    roots = [u for u, r in by_uid.items() if r["parent"] not in by_uid]
    order, stack = [], list(roots)  # parents before children
    while stack:
        u = stack.pop()
        order.append(u)
        stack.extend(kids.get(u, []))
    intervals = {}
    for u in reversed(order):
        r = by_uid[u]
        iv = [(int(r["ts"]), int(r["end"]))] if r["kind"] in GPU and r["ts"] and r["end"] else []
        for k in kids.get(u, []):
            iv += intervals.pop(k)
        intervals[u] = iv
        gpu[u] = union_length(iv)
    above = {}
    for u in order:
        r = by_uid[u]
        p = r["parent"] if r["parent"] in by_uid else None
        above[u] = p is not None and (above[p] or p in modeled_op or counted[p])
        # (a runtime call with no op above it launches its GPU work itself: TraceLens's rule)
        counted[u] = int((u in modeled_op or (r["kind"] in ("cpu_op", "runtime", "driver") and u in launchers))
                         and not above[u])
        chain, a = [], p
        while a is not None:
            n = by_uid[a]["name"]
            if len(n) >= 6 and n.startswith("## ") and n.endswith(" ##"):
                chain.append(n)
            a = by_uid[a]["parent"] if by_uid[a]["parent"] in by_uid else None
        marker[u] = chain[0] if chain else ""
        path[u] = " > ".join(reversed(chain))
    # Inclusive numbers, bottom-up: a row with numbers of its own keeps them; an op, python frame,
    # annotation or runtime call without sums its children's (a sum only when every contributor has
    # that number); a runtime call's sum is passed up but not reported. For a row with GPU work
    # beneath only children with GPU work contribute, and all of them must have numbers.
    ran = {}
    for u in reversed(order):
        ran[u] = by_uid[u]["kind"] in GPU or any(ran[k] for k in kids.get(u, []))
    value, inclusive = {}, {}
    for u in reversed(order):
        r = by_uid[u]
        if r["src"] in ("model", "launcher", "inductor"):
            value[u] = (float(r["f"]) if r["f"] else None, float(r["b"]) if r["b"] else None)
            continue
        if r["kind"] not in ("cpu_op", "python", "annotation", "runtime", "driver"):
            continue
        working = [k for k in kids.get(u, []) if ran[k] or not ran[u]]
        parts = [value[k] for k in working if k in value]
        if not parts or (ran[u] and len(parts) < len(working)):  # some GPU work beneath has no numbers
            continue
        value[u] = tuple(None if any(p[i] is None for p in parts) else sum(p[i] for p in parts) for i in (0, 1))
        if r["kind"] not in ("runtime", "driver"):
            inclusive[u] = value[u]
    return gpu, counted, marker, path, inclusive


def kernel_sources(rows, links):
    """The kernels whose numbers come from an op (perf_source 'launcher'): the nearest op at or above
    the launch whose name has a model, if it keeps that model itself and launched no other kernel.
    Memcpys and memsets do not count as other work (issue 40, item 2: cuBLAS's workspace Memset
    beside each GEMM on H100). Returns {kernel uid: op uid} for the kernels that take an op's."""
    by_uid = {r["uid"]: r for r in rows}
    below = {}  # kernels at or below each row (0, 1, 2 = more)
    kids = {}
    for r in rows:
        if r["parent"] in by_uid:
            kids.setdefault(r["parent"], []).append(r["uid"])
    roots = [u for u, r in by_uid.items() if r["parent"] not in by_uid]
    order, stack = [], list(roots)
    while stack:
        u = stack.pop()
        order.append(u)
        stack.extend(kids.get(u, []))
    for u in reversed(order):
        below[u] = min(2, (by_uid[u]["kind"] == "kernel") + sum(below[k] for k in kids.get(u, [])))
    out = {}
    for gpu, launcher in links.items():
        if by_uid.get(gpu, {}).get("kind") != "kernel":
            continue
        c = launcher
        while c in by_uid and by_uid[c]["kind"] == "cpu_op" and below[c] <= 1:
            if by_uid[c]["has_model"] == "1":
                if by_uid[c]["src"] == "model":
                    out[gpu] = c
                break
            c = by_uid[c]["parent"]
    return out


def same(got, want):
    return (not got and want is None) or (got and want is not None and abs(float(got) - want) <= 1e-9 * max(1.0, abs(want)))


SQL = ("SELECT uid, parent, trace, kind, name, ts, end, perf_source(uid) IN ('model', 'inductor') AS modeled, "
       "perf_source(uid) AS src, flops(uid) AS f, bytes(uid) AS b, "
       "gpu_time(uid) AS gpu, counted(uid) AS counted, marker(uid) AS marker, marker_path(uid) AS path, "
       "has_perf_model(name) AS has_model "
       "FROM event ORDER BY uid")
summed = 0  # rows checked for inclusive numbers, over every trace
kernels_with_numbers = 0
for trace in traces:
    name = os.path.basename(trace)
    if not os.path.exists(trace):
        print(f"skip {name}: not present")
        continue
    db = os.path.join(work, name + ".db")
    if os.path.exists(db):
        os.remove(db)
    subprocess.run([tlsql, "-q", trace, "-o", db, "-c", "SELECT 1"], capture_output=True, check=True)
    # The saved file carries its perf table (udf/perf/perf_cache.h); a copy without it is computed from
    # the saved rows: both checked.
    recompute = db[:-3] + ".recompute.db"
    shutil.copyfile(db, recompute)
    with sqlite3.connect(recompute) as c:
        c.execute("DELETE FROM tlsql_perf")
    loaded = None
    for target in (trace, db, recompute):
        rows = query(target, SQL)
        # Each op's own numbers: from the loaded store's encoded args and, recomputed, from the saved
        # rows' args text (two readings of the same args).
        numbers = {r["uid"]: (r["src"], r["f"], r["b"]) for r in rows}
        if target == trace:
            loaded = numbers
        if target == recompute:
            bad = [u for u in numbers if numbers[u] != loaded.get(u)]
            check(not bad, f"{name}: perf_source, flops and bytes the same loaded and recomputed from the saved "
                           f"args text, every event (first bad: {bad[:3]})")
        if trace == edge:
            got = [(r["f"], r["b"]) for r in rows]
            check(got == EDGE_WANT, f"{name}: op args read as a whole parse reads them (hand arithmetic): {got}")
        by = {r["uid"]: r for r in rows}
        launchers = {r["launcher"] for r in query(target, "SELECT DISTINCT launcher FROM launch_link")}
        gpu, counted, marker, path, inclusive = expected(rows, launchers)
        what = f"{name} ({'loaded' if target == trace else 'saved' if target == db else 'saved, recomputed'}, {len(rows)} events)"
        bad = [r["uid"] for r in rows if int(r["gpu"]) != gpu[r["uid"]]]
        check(not bad, f"{what}: gpu_time = union of the GPU work at or below, every event (first bad: {bad[:3]})")
        bad = [r["uid"] for r in rows if int(r["counted"]) != counted[r["uid"]]]
        check(not bad, f"{what}: counted = modeled or launching op, nothing modeled or counted above (first bad: {bad[:3]})")
        bad = [r["uid"] for r in rows if r["src"] not in ("model", "launcher", "inductor")
               and (r["src"] == "beneath") != (r["uid"] in inclusive)]
        bad += [u for u, (f, b) in inclusive.items() if not (same(by[u]["f"], f) and same(by[u]["b"], b))]
        summed += len(inclusive)
        check(not bad,
              f"{what}: {len(inclusive)} rows report the sum of the numbers beneath them (first bad: {bad[:3]})")
        links = {r["gpu"]: r["launcher"] for r in query(target, "SELECT gpu, launcher FROM launch_link")}
        takes = kernel_sources(rows, links)
        bad = [r["uid"] for r in rows if r["kind"] == "kernel" and r["src"] != "inductor"
               and ((r["src"] == "launcher") != (r["uid"] in takes)
                    or (r["uid"] in takes and not (same(r["f"], float(by[takes[r["uid"]]]["f"]) if by[takes[r["uid"]]]["f"] else None)
                                                   and same(r["b"], float(by[takes[r["uid"]]]["b"]) if by[takes[r["uid"]]]["b"] else None))))]
        check(not bad, f"{what}: {len(takes)} kernels take their op's numbers, memsets and memcpys beside them "
                       f"not counting as other work (first bad: {bad[:3]})")
        kernels_with_numbers += len(takes)
        bad = [r["uid"] for r in rows if r["marker"] != marker[r["uid"]] or r["path"] != path[r["uid"]]]
        check(not bad, f"{what}: marker / marker_path = the ## ... ## events above (first bad: {bad[:3]})")
        # trace_stats: per trace, events per kind; over events with a start: first start, last end, steps
        ev = query(target, "SELECT trace, kind, ts, end, step FROM event")
        exp = {}
        for e in ev:
            st = exp.setdefault(e["trace"], {"kinds": {}, "t0": None, "t1": None, "steps": set(), "timed": False})
            st["kinds"][e["kind"]] = st["kinds"].get(e["kind"], 0) + 1
            if e["ts"]:
                st["timed"] = True
                st["t0"] = int(e["ts"]) if st["t0"] is None else min(st["t0"], int(e["ts"]))
                if e["end"]:
                    st["t1"] = int(e["end"]) if st["t1"] is None else max(st["t1"], int(e["end"]))
                if e["step"]:
                    st["steps"].add(int(e["step"]))
        got = query(target, "SELECT id, trace_stats(id) ->> 'events' AS events, trace_stats(id) ->> 'span_start' AS t0, "
                            "trace_stats(id) ->> 'span_end' AS t1, trace_stats(id) ->> 'steps' AS steps, "
                            "trace_stats(id) ->> 'first_step' AS first, trace_stats(id) ->> 'last_step' AS last FROM trace")
        ok = True
        for g in got:
            st = exp.get(g["id"])
            order = sorted(st["kinds"].items(), key=lambda kv: (-kv[1], tuple(-ord(c) for c in kv[0])))
            want = "{" + ",".join(f'"{k}":{n}' for k, n in order) + "}"
            steps = sorted(st["steps"])
            ok = ok and g["events"] == want and g["t0"] == ("" if st["t0"] is None else str(st["t0"])) and g["t1"] == ("" if st["t1"] is None else str(st["t1"]))
            ok = ok and g["steps"] == (str(len(steps)) if st["timed"] else "")
            ok = ok and g["first"] == (str(steps[0]) if steps else "") and g["last"] == (str(steps[-1]) if steps else "")
        check(ok and got, f"{what}: trace_stats = events per kind, span and steps counted here")
        n = sum(counted.values())
        view = query(target, "SELECT count(*) AS n, sum(gpu_ns) AS ns FROM counted_op")[0]
        check(int(view["n"]) == n and int(view["ns"] or 0) == sum(gpu[u] for u, c in counted.items() if c),
              f"{what}: counted_op holds those {n} ops and their GPU time")
# A saved database this connection holds locked (locking_mode=EXCLUSIVE after a write): the second
# connection that reads half of the rows cannot; the same numbers come from this one alone.
vllm = os.path.join(work, "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz.recompute.db")
if os.path.exists(vllm):
    sums = "SELECT sum(gpu_time(uid)) AS g, sum(counted(uid)) AS c, sum(flops(uid)) AS f FROM event"
    free = query(vllm, sums)
    r = subprocess.run([tlsql, vllm, "--csv", "-c", "PRAGMA locking_mode=EXCLUSIVE", "-c", "CREATE TABLE lock_it(a)",
                        "-c", sums], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and list(csv.DictReader(io.StringIO(r.stdout.split("\n", 2)[2])))[-1] == free[0],
          f"a saved database locked by its own connection reads the same ({r.stderr.strip()[:100]})")
check(summed > 1000, f"inclusive numbers checked on {summed} rows in all")

# Hand-made: a trace whose first event fills the args key dictionary (65536 keys: args_text.h), so
# that later keys are written out, not as tokens: inductor's kernel_flop / kernel_num_gb on a
# Triton kernel (1000 FLOPs, 0.5 GB) and aten::mm's members ([16, 8] x [8, 4]: 1024 FLOPs, 896
# bytes in fp32) are still read, loaded and recomputed from the saved rows.
full = os.path.join(work, "full_dictionary.json")
with open(full, "w") as f:
    json.dump({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "many keys", "pid": 1, "tid": 1, "ts": 0, "dur": 1,
         "args": {f"k{i}": 0 for i in range(1 << 16)}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 10,
         "args": {"Input Dims": [[16, 8], [8, 4]], "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_0", "pid": 0, "tid": 7, "ts": 30, "dur": 5,
         "args": {"device": 0, "stream": 7, "kernel_flop": 1000, "kernel_num_gb": 0.5}}]}, f)
full_db = full + ".db"
if os.path.exists(full_db):
    os.remove(full_db)
subprocess.run([tlsql, "-q", full, "-o", full_db, "-c", "SELECT 1"], capture_output=True, check=True)
with sqlite3.connect(full_db) as c:
    c.execute("DELETE FROM tlsql_perf")
for target in (full, full_db):
    got = [tuple(r.values()) for r in query(target, "SELECT flops(uid), bytes(uid), perf_source(uid) FROM event "
                                                    "WHERE uid > 0 ORDER BY uid")]
    check(got == [("1024.0", "896.0", "model"), ("1000.0", "500000000.0", "inductor")],
          f"full key dictionary ({os.path.basename(target)}): keys written out are read: {got}")

# Hand-made: GPU work launched with no op above it is counted under its launch call (TraceLens's
# kernel launchers), so the ops report's shares are of all launched GPU time; GPU work with no
# launch in the trace is in health with its time. Kernels (µs): a Triton kernel launched from
# Python frames only, 30; aten::mm's, 20; an optimizer's under only its annotation, 10; one with
# no runtime call, 5.
def x(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}
def k(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "device": 0, "stream": 7}}
hand = os.path.join(work, "launch_without_op.json")
with open(hand, "w") as f:
    json.dump({"traceEvents": [
        x("python_function", "fused_moe.py(120): fused_experts", 0, 100),
        x("python_function", "triton/runtime/jit.py(500): run", 5, 90),
        x("cuda_runtime", "cuLaunchKernel", 20, 10, correlation=1), k("fused_moe_kernel", 50, 30, 1),
        x("cpu_op", "aten::mm", 200, 50, **{"Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]}),
        x("cuda_runtime", "cudaLaunchKernel", 210, 10, correlation=2), k("sm90_gemm", 250, 20, 2),
        x("user_annotation", "Optimizer.step#AdamW.step", 300, 50),
        x("cuda_runtime", "cudaLaunchKernel", 310, 10, correlation=3), k("multi_tensor_apply_kernel", 330, 10, 3),
        k("before_profiling_kernel", 400, 5, 99)]}, f)
ops = query(hand, "SELECT name, count, gpu_us, gpu_pct FROM op_summary ORDER BY gpu_us DESC")
# Each launch with no op above is named by the innermost annotation or python frame above it and the
# call (work_name): the Triton launch's innermost frame is jit.py's run [5, 95), inside fused_experts
# [0, 100); the optimizer's launch sits under its annotation alone.
check([tuple(r.values()) for r in ops] == [("triton/runtime/jit.py(500): run > cuLaunchKernel", "1", "30.0", "50.0"),
                                          ("aten::mm", "1", "20.0", "33.33"),
                                          ("Optimizer.step#AdamW.step > cudaLaunchKernel", "1", "10.0", "16.67")],
      f"hand-made: launch calls with no op above are counted (30 + 20 + 10 µs of 60): {ops}")
h = query(hand, "SELECT count, detail FROM health WHERE \"check\" = 'gpu_without_launch'")
check(len(h) == 1 and h[0]["count"] == "1" and "0.005 ms, 7.7% of the GPU events' time" in h[0]["detail"],
      f"hand-made: the kernel with no launch, 5 of 65 µs, in health: {h}")

# Each event is read against its own device's peak (the table's device column), loaded and saved.
# Two fp32 aten::mm of [1024, 1024] x [1024, 1024], 2 * 1024^3 FLOPs, each with a 500 µs kernel:
# 4.295 TFLOP/s; on device 0, a T4 (fp32 matrix peak 8.1): 53.02%; on device 1, an A100 SXM 80GB
# (19.5): 22.03%.
def kd(ts, corr, device):
    return {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": device, "tid": 7, "ts": ts, "dur": 500,
            "args": {"correlation": corr, "device": device, "stream": 7}}
mm_args = {"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["float", "float"]}
two = os.path.join(work, "two_devices.json")
with open(two, "w") as f:
    json.dump({"traceEvents": [x("cpu_op", "aten::mm", 0, 50, **mm_args),
                               x("cuda_runtime", "cudaLaunchKernel", 10, 5, correlation=1), kd(100, 1, 0),
                               x("cpu_op", "aten::mm", 1000, 50, **mm_args),
                               x("cuda_runtime", "cudaLaunchKernel", 1010, 5, correlation=2), kd(1100, 2, 1)],
               "deviceProperties": [{"id": 0, "name": "Tesla T4"}, {"id": 1, "name": "NVIDIA A100-SXM4-80GB"}]}, f)
two_db = os.path.join(work, "two_devices.db")
if os.path.exists(two_db):
    os.remove(two_db)
subprocess.run([tlsql, two, "-o", two_db], capture_output=True, timeout=60)
for target in (two, two_db):
    pct = query(target, "SELECT round(achieved_pct(uid), 2) AS p FROM event WHERE kind = 'kernel' ORDER BY ts")
    check([r["p"] for r in pct] == ["53.02", "22.03"],
          f"{os.path.basename(target)}: each kernel against its own device's fp32 peak (T4, A100): {pct}")
finish()
