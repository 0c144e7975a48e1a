#!/usr/bin/env python3
"""Runs HTA's user annotation, kernel sequence, straggler and CUPTI counter analyses (issue 49) on
shared traces and on this repository's hand-made ones, and writes HTA's numbers, one small JSON per
case, under OUT_DIR/hta_annotations, hta_kernel_sequences, hta_stragglers and hta_cupti_counters: the
reference tests/shell/issue49_reports.py compares tlsql's reports with.

    /usr/bin/python3 tests/tools/hta_issue49.py HTA_DIR TRACES_DIR OUT_DIR

TRACES_DIR is ../shared/traces; OUT_DIR is tests/data. HTA_DIR holds HTA's `hta` package (a
checkout of facebookresearch/HolisticTraceAnalysis, never copied into this repository; it needs
Debian's python3-pandas, -networkx, -plotly, -psutil). Only numbers and names HTA computed are
written (no trace content beyond the names HTA prints); a case HTA fails on is written as
{"hta_error": "..."} so that the test checks that tlsql answers there. Times are HTA's (whole µs:
HTA rounds float timestamps, start up and end down).
"""
import json, logging, os, sys, tempfile, traceback

hta_dir, traces_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, os.path.abspath(hta_dir))
from hta.trace_analysis import TraceAnalysis  # noqa: E402
from hta.configs.config import logger  # noqa: E402
from hta.analyzers.straggler import _compute_normalized_start_time_of_significant_comm_kernels  # noqa: E402

logger.setLevel(logging.ERROR)
logging.getLogger().setLevel(logging.ERROR)
here = os.path.dirname(os.path.abspath(__file__))
hand = os.path.join(here, "..", "data")


def path_of(trace):
    return os.path.join(hand, trace[5:]) if trace.startswith("data:") else os.path.join(traces_dir, trace)


def write(kind, name, obj):
    os.makedirs(os.path.join(out_dir, kind), exist_ok=True)
    with open(os.path.join(out_dir, kind, name + ".json"), "w") as f:
        json.dump(obj, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")


def guarded(fn):
    try:
        return fn()
    except Exception as e:  # HTA fails on some traces: the test checks that tlsql answers there
        traceback.print_exc()
        return {"hta_error": f"{type(e).__name__}: {e}"}


def load(traces):
    paths = [os.path.abspath(path_of(t)) for t in traces]
    if len(paths) == 1 and os.path.isdir(paths[0]):
        return TraceAnalysis(trace_dir=paths[0])
    return TraceAnalysis(trace_files=paths, trace_dir="")


# Annotations: the breakdown on every rank, and per GPU event (index = tlsql's uid) its annotation.
ANNOTATIONS = {
    "nested": "data:annotations_nested.json",
    "t4_train_fp32": "t4_train_fp32.pt.trace.json",
    "ns_resolution": "hta/ns_resolution_rank0.json.gz",
    "mi250_minitoy": "hta/amd_mi250_minitoy.json.gz",
    "vllm_cudagraph": "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz",
}


def annotations(trace):
    ta = load([trace])
    out = {"trace": trace}
    for side, gpu in (("gpu", True), ("cpu", False)):
        df = ta.get_gpu_user_annotation_breakdown(use_gpu_annotation=gpu, visualize=False)
        out["breakdown_" + side] = [] if df is None else [
            {"rank": int(r["rank"]), "name": r["name"], "sum_us": float(r["sum (us)"]), "max_us": float(r["max (us)"]),
             "min_us": float(r["min (us)"]), "stddev": float(r["stddev"]), "mean_us": float(r["mean (us)"])}
            for _, r in df.iterrows()]
    rank = next(iter(ta.t.traces))

    def kernels():
        k = ta.get_gpu_kernels_with_user_annotations(rank)
        return {str(int(i)): (a if a != "" else None) for i, a in zip(k["index"], k["s_user_annotation"])}
    out["kernels"] = guarded(kernels)
    return out


# Kernel sequences: (trace, operator_name, min_pattern_len).
SEQUENCES = {
    "t4_fp32_linear": ("t4_train_fp32.pt.trace.json", "aten::linear", 2),
    "t4_amp_linear": ("t4_train_amp.pt.trace.json", "aten::linear", 2),
    "t4_fp32_backward": ("t4_train_fp32.pt.trace.json", "autograd::engine::evaluate_function", 1),
    "control_optimizer": ("hta/trace_diff/control.json.gz", "Optimizer.step", 3),
    "nested": ("data:annotations_nested.json", "aten::mm", 2),
    "nested_linear": ("data:annotations_nested.json", "aten::linear", 2),
    "ns_resolution": ("hta/ns_resolution_rank0.json.gz", "aten::linear", 2),
}


def sequences(trace, op, length):
    ta = load([trace])
    rank = next(iter(ta.t.traces))
    df = ta.get_frequent_cuda_kernel_sequences(op, tempfile.mkdtemp(), min_pattern_len=length, rank=rank,
                                               visualize=False)
    return {"trace": trace, "op": op, "length": length,
            "patterns": [{"pattern": r["pattern"], "count": int(r["count"]),
                          "gpu_us": float(r["GPU kernel duration (us)"]), "cpu_us": float(r["CPU op duration (us)"])}
                         for _, r in df.iterrows()]}


def stragglers(trace):
    ta = load([trace])
    out = {"trace": trace, "steps": [int(s) for s in ta.get_profiler_steps()],
           "stragglers": {str(k): [int(r) for r in ta.get_potential_stragglers(num_candidates=k)] for k in (1, 2, 3)}}
    import pandas as pd
    t = ta.t
    ranks = list(t.get_all_traces().keys())
    df = pd.concat([t.get_trace(r) for r in ranks], axis=0, keys=ranks, names=["rank", "idx"]).reset_index()
    m, col = _compute_normalized_start_time_of_significant_comm_kernels(
        df.loc[df["iteration"].isin(ta.get_profiler_steps())], t.symbol_table)
    sym = t.symbol_table.get_sym_table()
    out["metric"] = [{"rank": int(r["rank"]), "step": int(r["iteration"]), "stream": int(r["stream"]),
                      "kernel": sym[int(r["name"])], "normalized_start": float(r[col])} for _, r in m.iterrows()]
    return out


def counters(trace):
    ta = load([trace])
    rank = next(iter(ta.t.traces))
    dfs = ta.get_cupti_counter_data_with_operators(ranks=[rank])
    rows = []
    for _, r in dfs[0].iterrows():
        row = {"index": int(r["index"]), "name": r["name"], "top_level_op": r["top_level_op"],
               "bottom_level_op": r["bottom_level_op"], "op_stack": list(r["op_stack"])}
        row["counters"] = {c: float(r[c]) for c in dfs[0].columns
                           if "." in c and c.count("__") and r[c] == r[c]}  # present (not NaN) counters
        rows.append(row)
    return {"trace": trace, "rows": rows}


def memory_timeline(trace):
    """HTA's MemoryAnalysis reads a gzip'd raw timeline: the per-time bytes per category it plots."""
    import gzip
    from hta.memory_analysis import MemoryAnalysis
    gz = os.path.join(tempfile.mkdtemp(), "timeline.raw.json.gz")
    with open(path_of(trace), "rb") as f, gzip.open(gz, "wb") as g:
        g.write(f.read())
    times, sizes = MemoryAnalysis(gz)._process_raw_events()
    return {"trace": trace, "times": times, "sizes": sizes}


if __name__ == "__main__":
    for name, trace in ANNOTATIONS.items():
        write("hta_annotations", name, guarded(lambda: annotations(trace)))
    for name, (trace, op, length) in SEQUENCES.items():
        write("hta_kernel_sequences", name, guarded(lambda: sequences(trace, op, length)))
    write("hta_stragglers", "dlrm_8xv100", guarded(lambda: stragglers("dlrm_8xv100")))
    write("hta_cupti_counters", "cupti_counters", guarded(lambda: counters("data:cupti_counters.json")))
    write("hta_memory_timeline", "small", guarded(lambda: memory_timeline("data:memory_timeline_small.raw.json")))
