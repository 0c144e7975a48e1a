#!/usr/bin/env python3
"""tlsql from Python, notebook style: load traces with the SQLite extension (no tlsql binary), pull the
GEMMs and their achieved % of peak into pandas, and run canned reports as tables (report_NAME: the
rows and columns `tlsql --report NAME` prints), the `diff` of two traces among them.

    python3 examples/notebook.py [LIBTLSQL]     # default: build/libtlsql (or the installed one)

Its output is examples/notebook.expected.txt.
"""
import json
import os
import sqlite3
import sys

import pandas as pd

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
lib = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "libtlsql")

# 1. A trace, straight from its .json.gz, into an in-memory SQLite connection.
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension(lib)
events = con.execute("SELECT tlsql_load(?)", (os.path.join(here, "bert_small_h100.json.gz"),)).fetchone()[0]
print(f"loaded {events} events")

# 2. The GEMMs: GPU time, FLOPs, TFLOP/s and % of the H100's peak, as a DataFrame. The ops that
#    carry their own model (perf_source 'model'): aten::linear reports its addmm's numbers too
#    ('beneath'), and summing both would count each GEMM twice.
gemm = pd.read_sql(
    """SELECT name, input_dims, count(*) AS n, round(sum(gpu_time(uid)) / 1e3, 3) AS gpu_us,
              round(sum(flops(uid)) / 1e9, 3) AS gflop, round(avg(tflops(uid)), 2) AS tflops,
              round(avg(achieved_pct(uid)), 2) AS achieved_pct, bound(min(uid)) AS bound
       FROM op WHERE op_category(name) = 'GEMM' AND perf_source(uid) = 'model'
       GROUP BY name, input_dims ORDER BY gpu_us DESC""", con)
print(gemm.to_string(index=False))
print(f"GEMM GPU time {gemm.gpu_us.sum():.3f} µs in {gemm.n.sum()} ops")

# 3. Every report is a table: SELECT * FROM report_NAME, with the rows and columns that
#    `tlsql TRACE --report NAME --csv` prints (SELECT * FROM tlsql_reports lists them). The GPU time
#    breakdown, TraceLens's gpu_timeline:
print(pd.read_sql("SELECT * FROM report_timeline", con).to_string(index=False))

# 4. Diff two traces: the second goes into schema `other`, then the diff report runs with its
#    parameters as a JSON object (HTA's compare_traces on iteration 1010 of both; `.parameter set`
#    in tlsql). None leaves a parameter unset.
diff = sqlite3.connect(":memory:")
diff.enable_load_extension(True)
diff.load_extension(lib)
data = os.path.join(root, "tests", "data")
diff.execute("SELECT tlsql_load(?)", (os.path.join(data, "hta_trace_compare_base.json.gz"),))
diff.execute("SELECT tlsql_load(?, 'other')", (os.path.join(data, "hta_trace_compare_test.json.gz"),))
# HTA's table: every name, by name, no totals rows
params = {"device": "ALL", "control_rank": None, "test_rank": None, "control_step": 1010, "test_step": 1010,
          "short": 1, "agg": None, "sort": "name", "top": "all", "normalize": 0, "totals": 0}
changes = pd.read_sql("SELECT * FROM report_diff(?)", diff, params=(json.dumps(params),))
print(changes[changes.ops_diff != "unchanged"][["name", "Control_counts", "Test_counts", "diff_duration", "ops_diff"]]
      .to_string(index=False))
