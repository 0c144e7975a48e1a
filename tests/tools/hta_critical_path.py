#!/usr/bin/env python3
"""Runs HTA's critical path analysis on the shared traces below and writes what it found, one
OUT_DIR/NAME.json.gz each: the reference tests/shell/critical_path.py compares tlsql's path with.

    /usr/bin/python3 tests/tools/hta_critical_path.py HTA_DIR TRACES_DIR OUT_DIR [NAME ...]

TRACES_DIR is ../shared/traces; NAMEs pick some of the cases (all by default).

HTA_DIR holds HTA's `hta` package (a checkout of facebookresearch/HolisticTraceAnalysis, never
copied into this repository); it needs pandas, networkx, plotly and psutil (Debian's python3-*
packages). The rank is the trace's own (HTA reads it from distributedInfo). The JSON holds:
`trace` (its path under traces/), `window_us` (the window's length), `nodes` / `edges` (HTA's
graph's size), `total_us` (the path's length), `by_bound_us` (µs per bound_by class), `by_type`
(edges on the path per type) and `path`: every edge in path order, each with its two nodes (event
index = the event's position in traceEvents, which is tlsql's uid; 1 for the event's start node,
0 for its end), type, weight (µs), the event its time is attributed to (null for none) and
bound_by. Only numbers HTA computed are written; times are HTA's (whole µs).
"""
import collections, gzip, json, logging, os, sys

# NAME: (trace under TRACES_DIR, annotation, instance). Traces with whole-µs times, and with float
# ns (HTA rounds them to µs: the test compares on a copy rounded the same way).
CASES = {
    "simple_add": ("hta/critical_path_simple_add.json.gz", "[param|pytorch.model.alex_net|0|0|0|measure|forward]", 1),
    **{f"dlrm_rank{r}": (f"dlrm_8xv100/rank{r}.pt.trace.json", "ProfilerStep", 0) for r in range(8)},
    "trace_diff_control": ("hta/trace_diff/control.json.gz", "ProfilerStep", 0),
    "timeline_sampled": ("hta/timeline_sampled_rank0.json.gz", "ProfilerStep", 0),
    "backward_thread": ("hta/call_stack/backward_thread.json", "ProfilerStep", 0),
    "h100_transformer_hostA": ("h100_transformer_step_hostA.pt.trace.json", "ProfilerStep", 0),
    "ns_resolution": ("hta/ns_resolution_rank0.json.gz", "ProfilerStep", 0),
    "t4_train_amp": ("t4_train_amp.pt.trace.json", "ProfilerStep", 0),
    "t4_train_fp32": ("t4_train_fp32.pt.trace.json", "ProfilerStep", 0),
    "mi300_resnet_act_checkpoint": ("tracelens/mi300/resnet_act_checkpoint.json.gz", "ProfilerStep", 0),
    "mi250_minitoy": ("hta/amd_mi250_minitoy.json.gz", "ProfilerStep", 0),
    "h100_bert": ("tracelens/h100/bert_small_uncased.json.gz", "ProfilerStep", 0),
    "triton_example": ("hta/triton_example.json.gz", "ProfilerStep", 0),
}

hta_dir, traces_dir, out_dir = sys.argv[1:4]
sys.path.insert(0, os.path.abspath(hta_dir))
from hta.trace_analysis import TraceAnalysis  # noqa: E402
from hta.configs.config import logger  # noqa: E402

logger.setLevel(logging.ERROR)
logging.getLogger().setLevel(logging.ERROR)


def run(name, trace, annotation, instance):
    trace_path = os.path.join(traces_dir, trace)
    out_path = os.path.join(out_dir, name + ".json.gz")
    ta = TraceAnalysis(trace_files=[os.path.abspath(trace_path)], trace_dir="")
    rank = next(iter(ta.t.traces))
    res = ta.critical_path_analysis(rank=rank, annotation=annotation, instance_id=instance)
    if res is None or not res[1]:
        sys.exit(f"HTA found no critical path on {trace_path}")
    g = res[0]
    g.get_critical_path_breakdown()  # adds the short names (s_name) bound_by reads
    df = g.trace_df

    path = []
    by_bound = collections.Counter()
    by_type = collections.Counter()
    nodes = g.critical_path_nodes
    for u, v in zip(nodes, nodes[1:]):
        e = g.edges[u, v]["object"]
        weight = int(g.edges[u, v]["weight"])  # after _validate_graph zeroed negative weights
        ev = g.get_event_attribution_for_edge(e)
        row = {"type": e.type.value, "s_name": df.s_name.loc[ev] if ev is not None and ev >= 0 else None,
               "stream": int(df.stream.loc[ev]) if ev is not None and ev >= 0 else -1}
        bound = g.bound_by(row)
        a, b = g.node_list[u], g.node_list[v]
        kind = e.type.value.removeprefix("critical_path_")
        path.append([int(a.ev_idx), int(a.is_start), int(b.ev_idx), int(b.is_start), kind, weight,
                     None if ev is None else int(ev), bound])
        by_type[kind] += 1
        if bound:
            by_bound[bound] += weight

    # HTA's window (critical_path_analysis): the instance-th of the events whose name contains annotation.
    full = ta.t.get_trace(rank)
    ann = full[full.name.isin([i for s, i in ta.t.symbol_table.get_sym_id_map().items() if annotation in s])]
    i = instance
    window_us = int((ann.ts + ann.dur)[i:i + 1].max()) - int(ann.ts[i:i + 1].min())
    head = {"trace": trace, "rank": int(rank), "annotation": annotation, "instance": i, "window_us": window_us,
            "nodes": g.number_of_nodes(), "edges": g.number_of_edges(), "total_us": sum(p[5] for p in path),
            "by_bound_us": dict(sorted(by_bound.items())), "by_type": dict(sorted(by_type.items()))}
    # One edge a line: [from event, from its start (1) or end (0), to event, to start / end, type
    # (critical_path_ taken off), weight us, event the time is attributed to or null, bound_by].
    text = json.dumps(head)[:-1] + ',\n"path": [\n' + ",\n".join(json.dumps(p) for p in path) + "\n]}\n"
    with gzip.GzipFile(out_path, "wb", mtime=0) as f:  # (mtime 0: the same bytes on every run)
        f.write(text.encode())
    print(f"{out_path}: {len(path)} edges, {head['total_us']} us, {head['by_bound_us']}")


os.makedirs(out_dir, exist_ok=True)
for name in sys.argv[4:] or CASES:
    run(name, *CASES[name])
