#!/usr/bin/env python3
"""Runs HTA's trace counters (queue length and memory bandwidth) on the shared traces below and
writes HTA's numbers, one OUT_DIR/NAME.json each: the reference tests/shell/queue_membw.py compares
tlsql's `queue_length`, `queue_blocked` and `memory_bw` reports with.

    /usr/bin/python3 tests/tools/hta_counters.py HTA_DIR TRACES_DIR OUT_DIR [NAME ...]

TRACES_DIR is ../shared/traces; NAMEs pick some of the cases (all by default). HTA_DIR holds HTA's
`hta` package (a checkout of facebookresearch/HolisticTraceAnalysis, never copied into this
repository). The JSON holds, per case: `rank`; `queue_summary` (HTA's get_queue_length_summary:
per stream count, mean, std, min, 25%, 50%, 75%, max); `queue_points` (per stream, the number of
points of get_queue_length_time_series and their sum of queue_length); `blocked` (per threshold
and stream, get_time_spent_blocked_on_full_queue called on that stream's series alone, because
HTA keeps one stream per rank in its result: duration and relative duration); `trace_duration`
(HTA's get_trace_duration, the relative duration's divisor); `membw_summary` (get_memory_bw_summary:
per memory kind the describe() columns); `membw_points` (per kind, points and the sum of the
series). Only numbers HTA computed are written; `error` holds HTA's exception where it failed.

Two changes to how HTA is run, both outside its rules under test: its step filter
(Trace._filter_irrelevant_gpu_kernels, which drops the last ProfilerStep) is turned off, so the
numbers are over the whole trace (tlsql's @steps 'all'; the step cut is the view step_cut's,
tested with the launch and idle reports); and pandas' sort_values is made stable (HTA sorts its
points by ts with numpy's quicksort, which orders equal timestamps arbitrarily, so a launch and a
kernel start at the same µs come in either order): HTA's points then keep the order it concatenated
them in (launches before starts; copy starts before copy ends). `unstable` holds the summaries of
HTA run as it is (its own sort), for the record.
"""
import json, logging, os, sys, traceback

CASES = {
    "trace_diff_control": "hta/trace_diff/control.json.gz",
    "t4_train_fp32": "t4_train_fp32.pt.trace.json",
    "dlrm_rank0": "dlrm_8xv100/rank0.pt.trace.json",
    "h100_transformer_hostA": "h100_transformer_step_hostA.pt.trace.json",
    "a100_switch_moe_batch4": "a100_switch_moe_batch4.json.gz",
    "ns_resolution": "hta/ns_resolution_rank0.json.gz",
    "h100_transformer_hostB": "h100_transformer_step_hostB.pt.trace.json",
    "a100_particle_transformer_bs2": "a100_particle_transformer_bs2.json.gz",
    "h100_vllm_tp4_rank0": "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz",
    "v100_resnet50_2021_legacy": "v100_resnet50_2021_legacy.pt.trace.json.gz",
    "mi250_minitoy": "hta/amd_mi250_minitoy.json.gz",
    "timeline_sampled": "hta/timeline_sampled_rank0.json.gz",
    "kineto_2021": "kineto_gpu_metrics_input_2021.json",
    "mi300_resnet": "tracelens/mi300/resnet_act_checkpoint.json.gz",
}
# Thresholds for the blocked time: HTA's default 1024 and lower ones that real traces reach.
THRESHOLDS = [1024, 16, 4]

hta_dir, traces_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, os.path.abspath(hta_dir))
from hta.trace_analysis import TraceAnalysis  # noqa: E402
from hta.analyzers.trace_counters import TraceCounters  # noqa: E402
from hta.configs.config import logger  # noqa: E402
from hta.common.trace import Trace  # noqa: E402
import pandas as pd  # noqa: E402

Trace._filter_irrelevant_gpu_kernels = lambda self, include_last_profiler_step=False: None
_sort_values = pd.DataFrame.sort_values


def stable_sort_values(self, *args, **kwargs):
    if STABLE[0]:
        kwargs.setdefault("kind", "stable")
    return _sort_values(self, *args, **kwargs)


STABLE = [True]
pd.DataFrame.sort_values = stable_sort_values

logger.setLevel(logging.ERROR)
logging.getLogger().setLevel(logging.ERROR)


def num(x):
    x = float(x)
    return None if x != x else x  # NaN (std of one value) -> null


def describe_rows(df, key):
    rows = []
    for idx, r in df.iterrows():
        col = r.index.levels[0][0] if hasattr(r.index, "levels") else None
        get = (lambda s: r[(col, s)]) if col is not None else (lambda s: r[s])
        rows.append({key: idx[1] if isinstance(idx[1], str) else int(idx[1]),
                     **{s: num(get(s)) for s in ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]}})
    return rows


def run(name, trace):
    out = {"trace": trace}
    ta = TraceAnalysis(trace_files=[os.path.abspath(os.path.join(traces_dir, trace))], trace_dir="")
    rank = next(iter(ta.t.traces))
    out["rank"] = int(rank)
    out["trace_duration"] = int(ta.t.get_trace_duration(rank))
    try:
        series = TraceCounters.get_queue_length_time_series(ta.t, [rank])
        summary = TraceCounters.get_queue_length_summary_from_time_series(
            {r: s.copy() for r, s in series.items()})
        out["queue_summary"] = describe_rows(summary, "stream") if summary is not None else []
        ql = series.get(rank)
        out["queue_points"] = [] if ql is None else [
            {"stream": int(s), "points": int(len(g)), "sum": int(g.queue_length.sum())}
            for s, g in ql.groupby("stream")]
        out["blocked"] = []
        for th in THRESHOLDS:
            for s in ([] if ql is None else sorted(ql.stream.unique())):
                one = ql.loc[ql.stream == s].copy()
                res = TraceCounters.get_time_spent_blocked_on_full_queue(ta.t, {rank: one}, th)
                for _, r in res.iterrows():
                    out["blocked"].append({"threshold": th, "stream": int(r["stream"]),
                                           "duration": num(r["duration_at_max_queue_length"]),
                                           "relative": num(r["relative_duration_at_max_queue_length"])})
    except Exception as e:  # noqa: BLE001
        out["queue_error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
    try:
        bw = TraceCounters.get_memory_bw_time_series(ta.t, [rank])
        mb = TraceCounters.get_memory_bw_summary(ta.t, [rank])
        out["membw_summary"] = describe_rows(mb, "name") if mb is not None else []
        b = bw.get(rank)
        out["membw_points"] = [] if b is None else [
            {"name": n, "points": int(len(g)), "sum": float(g.memory_bw_gbps.sum())} for n, g in b.groupby("name")]
    except Exception as e:  # noqa: BLE001
        out["membw_error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
    STABLE[0] = False
    try:
        qs = TraceCounters.get_queue_length_summary(ta.t, [rank])
        mb = TraceCounters.get_memory_bw_summary(ta.t, [rank])
        out["unstable"] = {"queue_summary": describe_rows(qs, "stream") if qs is not None else [],
                           "membw_summary": describe_rows(mb, "name") if mb is not None else []}
    finally:
        STABLE[0] = True
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


for name in sys.argv[4:] or CASES:
    print(name, file=sys.stderr)
    try:
        run(name, CASES[name])
    except Exception as e:  # noqa: BLE001
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump({"trace": CASES[name], "error": f"{type(e).__name__}: {e}"}, f, indent=1)
            f.write("\n")
        traceback.print_exc()
