#!/usr/bin/env python3
"""kernel_totals([schema]) (udf/stats/kernel_totals.cpp): the kernels per (trace, device, stream,
class, name) with their count and summed dur, which the streams' note of timeline / overlap /
collectives reads (sql/about_report.sql). It must give what the event table's own GROUP BY with
gpu_class per row gives (another path: one SQL call per kernel, of_event's lookup by uid), rows and
order, for files loaded and saved, two traces and a diff's second schema; after a user's kernel
rule; and, on a trace made here, the rows worked out by hand below (one name in two classes, a
kernel with no name, a negative and a missing duration). The note it feeds must say the same on a
saved database as on the trace it was saved from.
usage: kernel_totals.py TLSQL DATA_DIR TMP_DIR [SHARED_DIR] (tests/CMakeLists.txt: every tests/functions/*.py)"""
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import function_cases  # noqa: E402
from checks import check, finish  # noqa: E402

tlsql, data, tmp = sys.argv[1:4]
shared = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(tmp, exist_ok=True)
GROUP = ("SELECT trace, device, stream, gpu_class(uid, NULL, '{s}') AS class, name, count(*), sum(dur), "
         "sum(max(dur, 0)) FROM {s}.event WHERE kind = 'kernel' GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5")


def run(args, *sql):
    return function_cases.run(tlsql, args, *sql)


def both(args, schema, *before):
    return function_cases.two_answers(tlsql, args, f"SELECT * FROM kernel_totals('{schema}')", GROUP.format(s=schema),
                                      *before)


files = [os.path.join(data, n) for n in ("custom_launches.json", "annotations_nested.json", "coll_rank0.json",
                                         "hta_amd_mi250_minitoy.json.gz", "queue_membw.json")]
if shared and os.path.isdir(os.path.join(shared, "traces")):  # NCCL streams beside compute, ROCm names
    files += [os.path.join(shared, "traces", "dlrm_8xv100", "rank0.pt.trace.json"),
              os.path.join(shared, "traces", "tracelens", "mi300", "resnet_act_checkpoint.json.gz")]
for path in files:
    for source in function_cases.loaded_and_saved(tlsql, path, tmp, "kernel_totals_"):
        mine, theirs = both([source], "main")
        check(len(mine) > 0 and mine == theirs, f"{os.path.basename(source)}: kernel_totals == GROUP BY ({len(mine)} rows)")
# Two files in one schema (two traces), a diff's `other` schema, and a rule the user adds.
a, b = os.path.join(data, "coll_rank0.json"), os.path.join(data, "custom_launches.json")
mine, theirs = both([a, b], "main")
check(len(mine) > 0 and mine == theirs and {m.split(",")[0] for m in mine} == {"0", "1"}, "two traces: grouped apart")
mine, theirs = both([a, "--diff", b], "other")
check(len(mine) > 0 and mine == theirs, "the diff's other schema")
rule = ("INSERT INTO kernel_rule(pattern, class, priority) VALUES ('*nccldevkernel_allgather*', 'compute', 1000)")
mine, theirs = both([a], "main", rule)
check(len(mine) > 0 and mine == theirs and any(',compute,"ncclDevKernel_AllGather' in m for m in mine),
      f"a rule the user inserted classes as gpu_class does ({mine})")

# By hand, one GPU (device 0). Stream 7: mylib_step (no rule names it) twice (10 + 20 us) launched
# by aten::mm, once more (5 us) launched by c10d::allreduce_ (an op that says communication: that
# one is communication), a kernel with no name (3 us) and one of dur -4 us (kept as recorded,
# `health` negative_dur). Stream 9: nccl's kernel (40 us) and one with no dur at all.
ev, corr = [], [0]


def kernel(parent, name, ts, dur, stream):
    corr[0] += 1
    ev.append({"ph": "X", "cat": "cpu_op", "name": parent, "pid": 1, "tid": 1, "ts": ts, "dur": 4})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 1,
               "dur": 2, "args": {"correlation": corr[0]}})
    k = {"ph": "X", "cat": "kernel", "pid": 0, "tid": stream, "ts": 100 + ts,
         "args": {"correlation": corr[0], "device": 0, "stream": stream}}
    if name is not None:
        k["name"] = name
    if dur is not None:
        k["dur"] = dur
    ev.append(k)


kernel("aten::mm", "mylib_step", 0, 10, 7)
kernel("aten::mm", "mylib_step", 10, 20, 7)
kernel("c10d::allreduce_", "mylib_step", 40, 5, 7)
kernel("aten::add", None, 50, 3, 7)
kernel("aten::add", "neg_kernel", 60, -4, 7)
kernel("nccl:all_reduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", 70, 40, 9)
kernel("aten::add", "no_dur_kernel", 80, None, 9)
small = os.path.join(tmp, "kernel_totals_small.json")
json.dump({"traceEvents": ev}, open(small, "w"))
want = ["0,0,7,communication,mylib_step,1,5000,5000",  # the one c10d::allreduce_ launched
        "0,0,7,compute,,1,3000,3000",                  # no name: a NULL name, first
        "0,0,7,compute,mylib_step,2,30000,30000",      # 10 + 20 us
        "0,0,7,compute,neg_kernel,1,-4000,0",          # dur as recorded; nothing above 0
        "0,0,9,communication,ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*),1,40000,40000",
        "0,0,9,compute,no_dur_kernel,1,,0"]            # no dur: a NULL sum, as sum()'s
for source in function_cases.loaded_and_saved(tlsql, small, tmp, ""):
    r = run([source], "SELECT * FROM kernel_totals()")
    got = r.stdout.splitlines()[1:]
    check(r.returncode == 0 and got == want, f"by hand ({os.path.basename(source)}): {got} vs {want} "
          f"({r.stderr.strip()[:160]})")

# Durations whose sum passes int64 (hostile): clamped at its limit, not an error, so that the note
# reading it is still said. Two kernels of 4.7e18 ns on stream 8, as many GEMMs on stream 7: both
# sums clamped, the tie goes to the lower stream, and stream 8 is named beside it.
big = os.path.join(tmp, "kernel_totals_big.json")
json.dump({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
     "args": {"device": 0, "stream": stream}}
    for name, stream, ts, dur in [("busy_gemm", 7, 0, 4.7e15), ("busy_gemm", 7, 5e15, 4.7e15),
                                  ("void otherlib::big(int*)", 8, 0, 4.7e15),
                                  ("void otherlib::big(int*)", 8, 5e15, 4.7e15)]]}, open(big, "w"))
r = run([big], "SELECT stream, kernels, dur, positive_dur FROM kernel_totals() WHERE stream = 8")
check(r.returncode == 0 and r.stdout.splitlines()[1:] == ["8,2,9223372036854775807,9223372036854775807"],
      f"a sum past int64 is clamped ({r.stdout.strip()} {r.stderr.strip()[:160]})")
r = subprocess.run([tlsql, big, "--report", "timeline"], capture_output=True, text=True, timeout=120)
check("ran on stream 8 beside stream 7" in r.stderr, f"and the note is said ({r.stderr.strip()[:200]})")

r = run([small], "SELECT * FROM kernel_totals('nowhere')")
check(r.returncode == 1 and "kernel_totals" in r.stderr and "nowhere" in r.stderr,
      f"an unknown schema is refused by name ({r.stderr.strip()[:160]})")

# The streams' note from it, loaded and saved. Stream 7 (550 us of GEMM) is the busiest; beside it
# stream 20 (500 us of a library no rule names, launched under dispatch(F): communication by what
# launched it, so not named) and stream 30 (400 us, launched under an annotation that says
# nothing): 400 / (550 + 500 + 400) = 28% of the kernel time, named with the rule to add.
ep = []
for i, (cat, name, kname, ts, dur, stream) in enumerate([
        ("cpu_op", "aten::mm", "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n", 150, 550, 7),
        ("user_annotation", "dispatch(F)", "void mylib::ep::dispatch<8>(int*)", 100, 500, 20),
        ("user_annotation", "misc(F)", "void otherlib::mystery_kernel<4>(float*)", 100, 400, 30)]):
    ep.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": i * 20, "dur": 8})
    ep.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 1, "tid": 1,
               "ts": i * 20 + 2, "dur": 2, "args": {"correlation": 900 + i}})
    ep.append({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
               "args": {"correlation": 900 + i, "device": 0, "stream": stream}})
side = os.path.join(tmp, "kernel_totals_side.json")
json.dump({"traceEvents": ep}, open(side, "w"))
notes = []
for source in function_cases.loaded_and_saved(tlsql, side, tmp, ""):
    r = subprocess.run([tlsql, source, "--report", "timeline"], capture_output=True, text=True, timeout=120)
    notes.append([line for line in r.stderr.splitlines() if "beside stream" in line])
check(notes[0] and notes[0] == notes[1] and "0.400 ms of kernels (28% of trace 0's kernel time) ran on stream 30 "
      "beside stream 7" in notes[0][0] and "'*otherlib::mystery_kernel*'" in notes[0][0],
      f"the note, loaded and saved: {notes}")
finish()
