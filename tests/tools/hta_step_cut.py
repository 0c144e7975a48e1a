#!/usr/bin/env python3
"""Runs HTA's temporal breakdown and launch stats (TraceAnalysis as it is: its step filter drops
the last ProfilerStep) on shared traces whose ProfilerSteps open under python frames (with_stack),
and writes HTA's numbers to OUT (JSON): per case the temporal breakdown's row and the describe() of
get_cuda_kernel_launch_stats. tests/reports/check_reports.py compares tlsql's `temporal` and
`launch_stats` (its step cut, view step_cut) with them.

    /usr/bin/python3 tests/tools/hta_step_cut.py HTA_DIR TRACES_DIR OUT

HTA_DIR holds HTA's `hta` package (a checkout of facebookresearch/HolisticTraceAnalysis, never
copied into this repository)."""
import json, logging, os, shutil, sys, tempfile

CASES = {
    "h100_transformer_hostA": "h100_transformer_step_hostA.pt.trace.json",
    "h100_transformer_hostB": "h100_transformer_step_hostB.pt.trace.json",
}

hta_dir, traces_dir, out = sys.argv[1:4]
sys.path.insert(0, os.path.abspath(hta_dir))
from hta.trace_analysis import TraceAnalysis  # noqa: E402
from hta.configs.config import logger  # noqa: E402

logger.setLevel(logging.ERROR)
result = {}
for name, rel in CASES.items():
    d = tempfile.mkdtemp()
    shutil.copy(os.path.join(traces_dir, rel), d)  # TraceAnalysis reads a folder
    a = TraceAnalysis(trace_dir=d)
    temporal = a.get_temporal_breakdown(visualize=False)
    launches = a.get_cuda_kernel_launch_stats(visualize=False)[0]
    result[name] = {
        "temporal": {k: float(v) for k, v in temporal.iloc[0].items() if k != "rank"},
        "launch_describe": {c: {k: float(v) for k, v in launches[c].describe().items()}
                            for c in ["cpu_duration", "gpu_duration", "launch_delay"]},
    }
    shutil.rmtree(d)
with open(out, "w") as f:
    json.dump(result, f, indent=1, sort_keys=True)
