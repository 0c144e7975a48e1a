#!/usr/bin/env python3
"""HTA's trace counters and TraceLens's short-kernel study through the binary (docs/reports.md,
"Queue length, memory bandwidth, short kernels"): the reports queue_length, queue_blocked,
memory_bw, short_kernels, short_kernels_histogram and kernel_details, the table functions
queue_length(rank, stream [, steps]) and memory_bw(rank [, name [, steps]]) (the series), and
`--overlay` with @counters.

- tests/data/queue_membw.json, made by hand, every figure worked out below: a stream with two
  launched kernels, a launch with no kernel, a kernel with no launch (a stream with no launches),
  two overlapping copies (one without Kineto's bandwidth arg), a fill of 0 bytes and 0 µs, a copy of
  0 µs, two back-to-back copies.
- HTA's own numbers (tests/data/hta_counters, made by running HTA: tests/tools/hta_counters.py) on
  shared traces: every cell of get_queue_length_summary, the blocked time per stream and
  threshold, every cell of get_memory_bw_summary.
- The histogram against numpy.histogram (TraceLens's binning) of the kernel durations read from a
  shared trace's raw JSON.
usage: queue_membw.py TLSQL DATA_DIR SHARED_DIR WORK_DIR"""
import bisect, csv, gzip, io, json, math, os, sqlite3, statistics, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from hta_times import rounded_as_hta  # noqa: E402

tlsql, data, shared, work = sys.argv[1:5]
work = os.path.join(work, "queue_membw")
os.makedirs(work, exist_ok=True)
small = os.path.join(data, "queue_membw.json")


def report(trace, name, params=None):
    cmds = []
    for k, v in (params or {}).items():
        cmds += ["-c", f".parameter set @{k} {v}"]
    r = subprocess.run([tlsql, "-q", trace, *cmds, "--csv", "--report", name], capture_output=True, text=True,
                       timeout=600)
    check(r.returncode == 0, f"{name} on {os.path.basename(trace)} {params or ''} runs: {r.stderr.strip()[:300]}")
    return list(csv.DictReader(io.StringIO(r.stdout)))


def query(trace, sql):
    r = subprocess.run([tlsql, "-q", trace, "--csv", "-c", sql], capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"query on {os.path.basename(trace)}: {r.stderr.strip()[:300]}")
    return list(csv.reader(io.StringIO(r.stdout)))


def close(a, b, rel=1e-9, abs_=1e-9):
    if a in (None, "") or b is None:
        return (a in (None, "")) == (b is None)
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_)


STATS = [("count", "count"), ("mean", "mean"), ("std", "std"), ("min", "min"), ("p25", "25%"), ("p50", "50%"),
         ("p75", "75%"), ("max", "max")]


def same_stats(row, ref):
    return all(close(row[a], ref[b]) for a, b in STATS)


# --- the hand-made trace -----------------------------------------------------------------------
# Stream 7: launches at 10 and 12 µs (the one at 14 launches nothing: not counted), the kernels
# start at 20 and 25: the queue is 1, 2, 1, 0. mean 1; sample std sqrt(((0)²+1²+0²+1²)/3) =
# sqrt(2/3); sorted 0 1 1 2: 25% at position 0.75 -> 0.75, 50% at 1.5 -> 1, 75% at 2.25 -> 1.25.
# Stream 8 has one kernel and no launch (HTA's rule: only launched work): no row.
rows = report(small, "queue_length")
check([(r["stream"], r["count"]) for r in rows] == [("7", "4")], f"queue_length: stream 7 only, 4 points: {rows}")
if rows:
    want = {"count": 4, "mean": 1, "std": math.sqrt(2 / 3), "min": 0, "25%": 0.75, "50%": 1, "75%": 1.25, "max": 2}
    check(same_stats(rows[0], want), f"queue_length stream 7 = hand arithmetic {want}: {rows[0]}")
# The series as the table function: the same 4 points (hand arithmetic above), ns, each until the
# next, whichever way it is called. The trace has no distributedInfo: rank 0 (HTA's convention).
want_series = [["10000", "1", "12000", "launch"], ["12000", "2", "20000", "launch"],
               ["20000", "1", "25000", "start"], ["25000", "0", "", "start"]]
for sql in ("SELECT ts, length, until, kind FROM queue_length(0, 7, 'all')",
            "SELECT ts, length, until, kind FROM queue_length(0, 7)",  # no ProfilerStep: 'complete' is all
            "SELECT ts, length, until, kind FROM queue_length WHERE rank = 0 AND stream = 7 AND steps = 'all' ORDER BY ts"):
    series = query(small, sql)
    check(series[1:] == want_series, f"{sql}: the 4 points, ns, each until the next: {series}")
# A saved database: the same series; and one saved by another build (here: its series views
# dropped, a doctored queue_length_points in their place) reads this build's views, never the file's.
saved = os.path.join(work, "small.db")
if os.path.exists(saved):
    os.remove(saved)
r = subprocess.run([tlsql, "-q", small, "-c", f".save {saved}"], capture_output=True, text=True, timeout=120)
check(r.returncode == 0, f".save: {r.stderr.strip()}")
series = query(saved, "SELECT ts, length, until, kind FROM queue_length(0, 7)")
check(series[1:] == want_series, f"saved database: queue_length(0, 7): {series}")
con = sqlite3.connect(saved)
con.executescript("DROP VIEW queue_length_points; DROP VIEW memory_bw_points; CREATE VIEW queue_length_points AS "
                  "SELECT 0 AS rank, 7 AS stream, 'complete' AS steps, 1 AS ts, 99 AS length, NULL AS until, "
                  "'x' AS kind, 1 AS uid, 0 AS trace, 0 AS device;")
con.close()
series = query(saved, "SELECT ts, length, until, kind FROM queue_length(0, 7)")
check(series[1:] == want_series, f"saved by another build: queue_length(0, 7) from this build's views: {series}")
series = query(saved, "SELECT count(*) FROM memory_bw(0, NULL, 'all')")
check(series[1:] == [["12"]], f"saved by another build: memory_bw(0): 6 copies / fills, 12 points: {series}")
series = query(small, "SELECT uid, trace, device FROM queue_length(0, 7)")
check([r[0] for r in series[1:]] == ["1", "2", "4", "5"] and all(r[1:] == ["0", "0"] for r in series[1:]),
      f"queue_length(0, 7): the launches' and kernels' uids, trace 0, device 0: {series}")
series = query(small, "SELECT count(*) FROM queue_length(0, 8, 'all')")
check(series[1:] == [["0"]], f"queue_length(0, 8): a stream with a kernel and no launch has no series (HTA's rule): {series}")
for sql, why in (("SELECT * FROM queue_length(5, 7)", "queue_length(rank, stream [, steps [, schema]]): no trace has rank 5 (ranks: 0)"),
                 ("SELECT * FROM queue_length WHERE rank = 0", "queue_length(rank, stream [, steps [, schema]]): the stream argument is missing"),
                 ("SELECT * FROM queue_length(0, 7, 'last')", "steps is 'complete' or 'all', not 'last'"),
                 ("SELECT * FROM memory_bw(3)", "memory_bw(rank [, name [, steps [, schema]]]): no trace has rank 3 (ranks: 0)"),
                 ("SELECT * FROM memory_bw", "memory_bw(rank [, name [, steps [, schema]]]): the rank argument is missing")):
    r = subprocess.run([tlsql, "-q", small, "-c", sql], capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and why in r.stderr and r.stderr.count("\n") == 1 and r.stdout == "",
          f"{sql}: one-line error naming the mistake: {r.stderr!r}")
# Blocked: the span HTA divides by is the last event start - the first: 65 - 9 = 56 µs. At or
# above 2: the point at 12 holds until 20: 8 µs, 8/56. At or above 1: 10->12, 12->20, 20->25:
# 15 µs. At 1024 (the default): 0.
for th, us in ((None, 0), (2, 8), (1, 15)):
    rows = report(small, "queue_blocked", {"max_queue_length": th} if th else None)
    check(len(rows) == 1 and close(rows[0]["duration_us"], us) and close(rows[0]["relative"], us / 56)
          and rows[0]["max_queue_length"] == str(th or 1024) and rows[0]["max_length"] == "2",
          f"queue_blocked at {th or 1024}: {us} µs, {us}/56: {rows}")

# Memory bandwidth. HtoD: 30-40 µs at 0.1 GB/s (Kineto's arg), 35-45 µs at 2000 B / 10,000 ns =
# 0.2 GB/s (no arg: bytes / ns): the series 0.1, 0.3, 0.2, 0 -> points above 0: 0.1 0.3 0.2, mean
# 0.2, std 0.1, quartiles 0.15 0.2 0.25. DtoH: 60-65 at 1.0 and 65-70 at 2.0, back to back: the end
# at 65 comes first, so 1.0, 0, 2.0, 0 (never 3.0): 2 points, mean 1.5, std sqrt(0.5), quartiles
# 1.25 1.5 1.75. The fill of 0 bytes in 0 µs and the copy of 4096 bytes in 0 µs without the arg have
# 0 GB/s (no division by 0): no points above 0, no row.
rows = {r["name"]: r for r in report(small, "memory_bw")}
check(sorted(rows) == ["Memcpy DtoH", "Memcpy HtoD"], f"memory_bw: DtoH and HtoD only (0 GB/s kinds: none): {sorted(rows)}")
if "Memcpy HtoD" in rows:
    want = {"count": 3, "mean": 0.2, "std": 0.1, "min": 0.1, "25%": 0.15, "50%": 0.2, "75%": 0.25, "max": 0.3}
    check(same_stats(rows["Memcpy HtoD"], want), f"memory_bw HtoD, overlapping copies summed = {want}: {rows['Memcpy HtoD']}")
if "Memcpy DtoH" in rows:
    want = {"count": 2, "mean": 1.5, "std": math.sqrt(0.5), "min": 1, "25%": 1.25, "50%": 1.5, "75%": 1.75, "max": 2}
    check(same_stats(rows["Memcpy DtoH"], want), f"memory_bw DtoH, back to back = {want}: {rows['Memcpy DtoH']}")
series = query(small, "SELECT name, ts, round(gbps, 9), until FROM memory_bw(0, NULL, 'all')")
got = {}
for r in series[1:]:
    got.setdefault(r[0], []).append((int(r[1]), float(r[2])))
check(got.get("Memset") == [(50000, 0.0), (51000, 0.0)], f"memory_bw(0): the 0 µs fill counts 1 µs at 0 GB/s: {got.get('Memset')}")
check(got.get("Memcpy DtoD") == [(52000, 0.0), (53000, 0.0)], f"memory_bw(0): the 0 µs copy at 0 GB/s: {got.get('Memcpy DtoD')}")
check(got.get("Memcpy HtoD") == [(30000, 0.1), (35000, 0.3), (40000, 0.2), (45000, 0.0)],
      f"memory_bw(0): HtoD summed: {got.get('Memcpy HtoD')}")
# DtoH back to back (hand arithmetic above): the end at 65 before the start at 65, never 3.0 GB/s.
check(got.get("Memcpy DtoH") == [(60000, 1.0), (65000, 0.0), (65000, 2.0), (70000, 0.0)],
      f"memory_bw(0): DtoH back to back, the end first: {got.get('Memcpy DtoH')}")
for sql in ("SELECT name, ts, round(gbps, 9), until, edge FROM memory_bw(0, 'Memcpy HtoD')",
            "SELECT name, ts, round(gbps, 9), until, edge FROM memory_bw WHERE rank = 0 AND name = 'Memcpy HtoD'"):
    series = query(small, sql)
    check(series[1:] == [["Memcpy HtoD", "30000", "0.1", "35000", "start"], ["Memcpy HtoD", "35000", "0.3", "40000", "start"],
                         ["Memcpy HtoD", "40000", "0.2", "45000", "end"], ["Memcpy HtoD", "45000", "0.0", "", "end"]],
          f"{sql}: one kind's series: {series}")

# Short kernels (< 10 µs): k_add's 5 µs launch under aten::add, k_orphan's 2 µs (no op: its own
# group); the 12.5 µs k_add is not short. The timeline's total_time is the GPU span, 20 -> 70 µs =
# 50 µs: 5 / 50 = 10%, 2 / 50 = 4%; each is 1 of the 3 kernels.
rows = report(small, "short_kernels")
check([(r["parent_op"], r["kernel"], r["count"], r["sum_us"], r["pct_of_total_time"], r["pct_of_kernels"]) for r in rows]
      == [("aten::add", "k_add", "1", "5.0", "10.0", "33.333"), ("", "k_orphan", "1", "2.0", "4.0", "33.333")],
      f"short_kernels: k_add under aten::add, k_orphan alone: {rows}")
check(rows and rows[0]["input_dims"] == "[[4],[4]]", f"short_kernels: the op's Input Dims: {rows[:1]}")
rows = report(small, "short_kernels", {"threshold_us": 20})
check([(r["kernel"], r["count"], r["sum_us"]) for r in rows] == [("k_add", "2", "17.5"), ("k_orphan", "1", "2.0")],
      f"short_kernels @threshold_us 20: the 12.5 µs launch too, in k_add's group (same op, same dims): {rows}")
# Histogram, 3 bins over 2 .. 5 µs: edges 2 3 4 5; 2 in the first, 5 in the last (closed).
rows = report(small, "short_kernels_histogram", {"bins": 3})
check([(float(r["bin_start"]), float(r["bin_end"]), r["count"]) for r in rows] == [(2, 3, "1"), (3, 4, "0"), (4, 5, "1")],
      f"short_kernels_histogram @bins 3: {rows}")
# Kernel details: k_add with two grids is two rows; k_orphan has none. Of 19.5 µs of kernels.
rows = report(small, "kernel_details")
check([(r["name"], r["grid"], r["block"], r["total_us"], r["pct"]) for r in rows]
      == [("k_add", "[8,1,1]", "[128,1,1]", "12.5", "64.103"), ("k_add", "[4,1,1]", "[128,1,1]", "5.0", "25.641"),
          ("k_orphan", "", "", "2.0", "10.256")], f"kernel_details: per name, grid and block: {rows}")
# `kernels @details` (the issue's spelling) says where the per-shape rows are, and its rows stay kernels'.
r = subprocess.run([tlsql, "-q", small, "-c", ".parameter set @details 1", "--csv", "--report", "kernels"],
                   capture_output=True, text=True, timeout=600)
check(r.returncode == 0 and ".report kernel_details" in r.stderr and r.stdout.startswith("name,count,total_us"),
      f"kernels @details points at kernel_details: {r.stderr!r}")

# --overlay with counters: HTA's counter events, "Queue Length" per stream and "Memcpy BW" per kind.
out = os.path.join(work, "small_counters.json")
r = subprocess.run([tlsql, small, "-c", ".parameter set @counters 'all'", "-c", ".parameter set @critical_path 0",
                    "--overlay", out], capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and "16 counter points" in r.stderr + r.stdout, f"--overlay @counters 'all': {r.stderr.strip()} {r.stdout.strip()}")
if r.returncode == 0:
    ev = json.load(open(out))["traceEvents"]
    q = [(e["ts"], e["id"], e["args"]["Queue Length"]) for e in ev if e.get("ph") == "C" and e["name"] == "Queue Length"]
    check(sorted(q) == [(10, 7, 1), (12, 7, 2), (20, 7, 1), (25, 7, 0)], f"overlay: the queue's 4 counter points: {q}")
    m = sorted((e["name"], e["ts"], round(e["args"]["Memcpy BW"], 9)) for e in ev if e.get("ph") == "C" and "Memcpy BW" in e["args"])
    check(len(m) == 12 and ("Memcpy DtoH", 65, 2.0) in m and ("Memcpy HtoD", 35, 0.3) in m,
          f"overlay: the bandwidth's 12 counter points: {m}")
    check(len(ev) == 13 + 16, f"overlay: every event of the trace kept, 16 added: {len(ev)}")
r = subprocess.run([tlsql, "-q", small, "-c", ".parameter set @counters 'queue_length, membw'", "-c",
                    ".parameter set @critical_path 0", "--overlay", os.path.join(work, "typo.json")],
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 1 and "'membw' is not queue_length, memory_bw or all" in r.stderr
      and not os.path.exists(os.path.join(work, "typo.json")), f"--overlay @counters with a typo: one-line error, no file: {r.stderr!r}")
r = subprocess.run([tlsql, "-q", small, "-c", ".parameter set @counters 'queue_length'", "--overlay",
                    os.path.join(work, "no_step.json")], capture_output=True, text=True, timeout=120)
check(r.returncode == 1 and r.stderr.count("\n") == 1, f"--overlay with the path asked for on a trace with no ProfilerStep: one-line error: {r.stderr!r}")

def describe(vals):
    """pandas' Series.describe(): sample std (n - 1), quantiles interpolated linearly."""
    v, n = sorted(vals), len(vals)

    def q(p):
        pos = p * (n - 1)
        lo = math.floor(pos)
        return v[lo] + (v[min(lo + 1, n - 1)] - v[lo]) * (pos - lo)
    return {"count": n, "mean": statistics.fmean(v), "std": statistics.stdev(v) if n > 1 else None, "min": v[0],
            "25%": q(0.25), "50%": q(0.5), "75%": q(0.75), "max": v[-1]}


def membw_py(path, hta_order):
    """HTA's get_memory_bw_summary rule on a trace's JSON, as "pN": describe() columns per kind
    (same_stats keys). hta_order: HTA's (a start before an end at one ts, every point > 0, a
    negative duration kept); else tlsql's departures (docs/reports.md)."""
    ev = json.load(open(path))["traceEvents"]
    pts = {}
    for i, e in enumerate(ev):
        if e.get("ph") != "X" or e.get("cat") not in ("gpu_memcpy", "gpu_memset"):
            continue
        n = e["name"]
        name = "Memset" if n.startswith("Memset") else n[:11] if n.startswith("Memcpy") else "Memcpy Unknown"
        a = e.get("args", {})
        bw = a.get("memory bandwidth (GB/s)")
        if bw is None:  # tlsql's: bytes / ns (HTA: 0)
            bw = a["bytes"] / (e["dur"] * 1000) if not hta_order and a.get("bytes", 0) > 0 and e["dur"] > 0 else 0.0
        dur = e["dur"] if hta_order else max(e["dur"], 0)
        dur = dur if dur != 0 else 1
        pts.setdefault(name, []).extend([(e["ts"], 0 if hta_order else 1, i, bw), (e["ts"] + dur, 1 if hta_order else 0, i, -bw)])
    out = {}
    for name, p in pts.items():
        p.sort(key=lambda x: x[:3])
        total, vals = 0.0, []
        for x in p:
            total += x[3]
            vals.append(total)
        vals = [v for v in vals if (v > 0 if hta_order else v > 1e-9)]
        if vals:
            d = describe(vals)
            out[name] = {k: d[b] for a, b in STATS for k in (a, b)}
    return out


# @steps on tests/data/queue_steps.json (by hand): ProfilerStep#1 at 0 µs, #2 (the last) at 100.
# Kernel k_a launched at 10 starts at 150; k_b launched at 110 (in the last step) starts at 160; a
# copy launched at 120 runs 170-180 at 1 GB/s. 'complete' (HTA's scope) counts k_a's launch only:
# queue 1 at 10, 0 at 150 (2 points, mean 0.5); at or above 1 from 10 to 150 = 140 µs over the span
# of what it keeps (the step at 0 .. k_a's start at 150) = 140/150. 'all': 1, 2, 1, 0 at 10, 110,
# 150, 160: at or above 1 for 150 µs of 0 .. 170 (the copy's start): 150/170; the copy's stream 8:
# 1 from 120 to 170, 50/170. The copy is in the last step: no memory_bw row but with 'all'.
steps = os.path.join(data, "queue_steps.json")
for scope, want_q, want_b in (("complete", [("7", "2", "0.5", "1")], [("7", 140, 140 / 150)]),
                              ("all", [("7", "4", "1.0", "2"), ("8", "2", "0.5", "1")],
                               [("7", 150, 150 / 170), ("8", 50, 50 / 170)])):
    p = {"steps": f"'{scope}'", "max_queue_length": 1}
    rows = report(steps, "queue_length", p)
    check([(r["stream"], r["count"], r["mean"], r["max"]) for r in rows] == want_q, f"queue_length @steps {scope}: {rows}")
    rows = report(steps, "queue_blocked", p)
    check(len(rows) == len(want_b) and all(r["stream"] == s and close(r["duration_us"], d) and close(r["relative"], rel)
                                           for r, (s, d, rel) in zip(rows, want_b)), f"queue_blocked @steps {scope}: {rows}")
    rows = report(steps, "memory_bw", p)
    check([(r["name"], r["count"], r["max"]) for r in rows] == ([] if scope == "complete" else [("Memcpy HtoD", "1", "1.0")]),
          f"memory_bw @steps {scope}: {rows}")
# The functions' steps argument is the same scope, 'complete' (HTA's) when absent.
for sql, want in (("SELECT ts, length FROM queue_length(0, 7)", [["10000", "1"], ["150000", "0"]]),
                  ("SELECT ts, length FROM queue_length(0, 7, 'complete')", [["10000", "1"], ["150000", "0"]]),
                  ("SELECT ts, length FROM queue_length(0, 7, 'all')",
                   [["10000", "1"], ["110000", "2"], ["150000", "1"], ["160000", "0"]]),
                  ("SELECT ts, length FROM queue_length(0, 8, 'all')", [["120000", "1"], ["170000", "0"]]),
                  ("SELECT count(*) FROM memory_bw(0)", [["0"]]),
                  ("SELECT name, ts, gbps FROM memory_bw(0, NULL, 'all')",
                   [["Memcpy HtoD", "170000", "1.0"], ["Memcpy HtoD", "180000", "0.0"]])):
    series = query(steps, sql)
    check(series[1:] == want, f"queue_steps.json: {sql} = {want}: {series}")

# --- HTA's numbers on shared traces ---------------------------------------------------------
# HTA was run with its step filter off (tests/tools/hta_counters.py): the whole trace, @steps 'all'.
ALL = {"steps": "'all'"}


ref_dir = os.path.join(data, "hta_counters")
# Where tlsql departs from HTA on purpose (docs/reports.md): HTA's queue does not count
# hipExtLaunchKernel (its list has hipExtModuleLaunchKernel only); tlsql does, as the launch
# report's list does. On the MI300 ResNet trace stream 4's 12 launches are all hipExtLaunchKernel:
# HTA has no series for it.
departs = {"mi300_resnet": {"4"}}
for name in sorted(os.listdir(ref_dir)):
    ref = json.load(open(os.path.join(ref_dir, name)))
    trace = os.path.join(shared, "traces", ref["trace"])
    if not os.path.exists(trace):
        print(f"skip {ref['trace']}: not present")
        continue
    label = name[:-5]
    trace = rounded_as_hta(trace, os.path.join(work, label + "_rounded.json"))
    if "error" in ref:  # HTA could not load it: tlsql answers all the same
        for rep in ("queue_length", "memory_bw"):
            report(trace, rep)
        continue
    if "queue_summary" in ref:
        rows = {r["stream"]: r for r in report(trace, "queue_length", ALL) if r["stream"] not in departs.get(label, ())}
        for s in ref["queue_summary"]:
            got = rows.get(str(s["stream"]))
            check(got is not None and same_stats(got, s), f"{label}: queue_length stream {s['stream']} = HTA's {s}: {got}")
        # The table function's series (HTA's get_queue_length_time_series of the rank and stream),
        # every stream in one query (a join hands each stream to the function): its points'
        # number and sum against HTA's series, and summarized here as describe() does against
        # HTA's summary of its own series.
        wanted = [s for s in ref["queue_points"] if str(s["stream"]) not in departs.get(label, ())]
        streams = ", ".join(f"({int(s['stream'])})" for s in wanted) or "(NULL)"
        got = {r[0]: r[1:] for r in query(trace, f"""
            WITH s(stream) AS (VALUES {streams})
            SELECT s.stream, count(*), sum(q.length), group_concat(q.length) FROM s
            JOIN queue_length q ON q.rank = {int(ref['rank'])} AND q.stream = s.stream AND q.steps = 'all'
            GROUP BY s.stream""")[1:]}
        hta_summary = {str(s["stream"]): s for s in ref["queue_summary"]}
        for s in wanted:
            row = got.get(str(s["stream"]))
            check(row is not None and row[:2] == [str(s["points"]), str(s["sum"])],
                  f"{label}: queue_length({ref['rank']}, {s['stream']}): HTA's series has {s['points']} points summing to {s['sum']}: {row and row[:2]}")
            if row is not None and str(s["stream"]) in hta_summary:
                d = describe([float(x) for x in row[2].split(",")])
                check(same_stats({a: d[b] for a, b in STATS}, hta_summary[str(s["stream"])]),
                      f"{label}: queue_length({ref['rank']}, {s['stream']}) summarized = HTA's summary: {d}")
        for th in sorted({b["threshold"] for b in ref["blocked"]} | {1024}):
            rows = {r["stream"]: r for r in report(trace, "queue_blocked", {"max_queue_length": th, **ALL})}
            hta = {str(b["stream"]): b for b in ref["blocked"] if b["threshold"] == th}
            for s, r in rows.items():
                if s in departs.get(label, ()):
                    continue
                b = hta.get(s, {"duration": 0.0, "relative": 0.0})  # HTA lists no stream that never filled
                check(close(float(r["duration_us"]), b["duration"], abs_=1e-6) and close(r["relative"], b["relative"], abs_=1e-12),
                      f"{label}: queue_blocked @{th} stream {s} = HTA's {b}: {r['duration_us']} µs, {r['relative']}")
    elif "queue_error" in ref:
        report(trace, "queue_length")
    if "membw_summary" in ref:
        rows = {r["name"]: r for r in report(trace, "memory_bw", ALL)}
        if trace.endswith("_rounded.json"):
            # On a copy rounded to µs, copies meet at the same µs and a sub-µs copy gets -1 µs
            # (HTA's rounding), where tlsql's rules depart from HTA's on purpose: an end before a
            # start at one ts, points above 1e-9 GB/s, a negative duration (kept by the loader) read
            # as 0 and so 1 µs. HTA's rule re-implemented here first reproduces HTA's numbers
            # (HTA's order and > 0), then, with tlsql's departures, must give tlsql's.
            hta = {s["name"]: s for s in ref["membw_summary"]}
            mine = membw_py(trace, True)
            check(sorted(mine) == sorted(hta) and all(same_stats(mine[n], hta[n]) for n in mine),
                  f"{label}: memory_bw rule in Python with HTA's order = HTA's numbers: {mine} / {hta}")
            mine = membw_py(trace, False)
            check(sorted(mine) == sorted(rows)
                  and all(all(close(rows[n][a], mine[n][a]) for a, _ in STATS) for n in mine),
                  f"{label}: memory_bw rule in Python with tlsql's departures = tlsql's report: {mine} / {rows}")
            continue
        # HTA's get_memory_bw_time_series: a start and an end per copy, per kind (the sum depends on
        # the order at one ts, where tlsql departs: compared through the summary above).
        got = {r[0]: r[1] for r in query(trace, f"SELECT name, count(*) FROM memory_bw({int(ref['rank'])}, NULL, 'all') GROUP BY name")[1:]}
        for s in ref["membw_points"]:
            check(got.get(s["name"]) == str(s["points"]),
                  f"{label}: memory_bw({ref['rank']}) {s['name']}: HTA's {s['points']} points: {got.get(s['name'])}")
        for s in ref["membw_summary"]:
            got = rows.get(s["name"])
            check(got is not None and same_stats(got, s), f"{label}: memory_bw {s['name']} = HTA's {s}: {got}")
        check(len(rows) == len(ref["membw_summary"]), f"{label}: memory_bw: HTA's kinds {[s['name'] for s in ref['membw_summary']]}: {sorted(rows)}")

# The histogram: numpy.histogram's bins (TraceLens's), their rule written here from numpy's
# documentation: @bins equal bins from the shortest to the longest value (edges start + k * step),
# each half-open but the last, which holds the longest; on a shared trace's raw JSON.
h100 = os.path.join(shared, "traces", "tracelens", "h100", "bert_small_uncased.json.gz")
if os.path.exists(h100):
    ev = json.load(gzip.open(h100))["traceEvents"]
    durs = [float(e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel" and float(e["dur"]) < 10]
    lo, hi = min(durs), max(durs)
    step = (hi - lo) / 100
    edges = [lo + k * step for k in range(100)] + [hi]
    counts = [0] * 100
    for d in durs:
        counts[min(bisect.bisect_right(edges, d) - 1, 99)] += 1
    rows = report(h100, "short_kernels_histogram")
    check([int(r["count"]) for r in rows] == counts
          and all(close(r["bin_start"], a, rel=1e-12) for r, a in zip(rows, edges[:-1])),
          f"h100 bert: short_kernels_histogram = numpy.histogram's bins of the {len(durs)} kernels under 10 µs: "
          f"{[r['count'] for r in rows]} / {counts}")
    rows = report(h100, "short_kernels", {"top": 1000000})
    check(sum(int(r["count"]) for r in rows) == len(durs), f"h100 bert: short_kernels count {len(durs)} kernels")
else:
    print("skip tracelens/h100/bert_small_uncased: not present")

# TraceLens's own short-kernel study (shared/expected/tracelens: its regression tests' CSVs, made by
# TraceLens): the same groups, counts and µs; the same % of total time where TraceLens's timeline
# total is tlsql's (no GPU work without a launch call); the same histogram bin for bin. Qwen has
# GPU work no launch call links: TraceLens leaves it out of its total (tlsql's timeline counts it,
# docs/reports.md) and its groupby drops the kernels no op launched (their key is NaN), which tlsql
# lists with an empty parent_op.
def as_tuple(j):
    """A JSON array as TraceLens prints it, Python's tuple repr."""
    if j in (None, ""):
        return ""

    def t(x):
        return tuple(t(y) for y in x) if isinstance(x, list) else x
    return str(t(json.loads(j)))


for exp_dir, t, same_total in (("h100_gaunernst_bert-small-uncased", "tracelens/h100/bert_small_uncased.json.gz", True),
                               ("h100_Falconsai_nsfw_image_detection", "tracelens/h100/Falconsai_nsfw_image_detection.json.gz", True),
                               ("mi300_normalization_layer_test", "tracelens/mi300/normalization_layer_test.json.gz", True),
                               ("h100_Qwen1.5_0.5B_chat", "tracelens/h100/Qwen1.5_0.5B_chat.json.gz", False)):
    exp_path = os.path.join(shared, "expected", "tracelens", exp_dir)
    trace = os.path.join(shared, "traces", t)
    if not (os.path.exists(trace) and os.path.exists(os.path.join(exp_path, "short_kernels_summary.csv"))):
        print(f"skip {t}: not present")
        continue
    exp = list(csv.DictReader(open(os.path.join(exp_path, "short_kernels_summary.csv"))))
    got = report(trace, "short_kernels", {"top": 1000000})
    key = (lambda op, dims, k, n, us: (op, dims, k, int(n), round(float(us), 3)))
    want = sorted(key(e["Parent cpu_op"], e["Input dims"], e["Kernel name"], e["Short Kernel count"],
                      e["Short Kernel duration (µs) sum"]) for e in exp)
    mine = sorted(key(g["parent_op"], as_tuple(g["input_dims"]), g["kernel"], g["count"], g["sum_us"])
                  for g in got if g["parent_op"] or same_total)
    check(mine == want, f"{exp_dir}: short_kernels = TraceLens's {len(want)} groups (op, dims, kernel, count, µs)")
    if same_total:
        pct = sorted(round(float(e["Short Kernel duration (µs) percent of total time"]), 3) for e in exp)
        check(sorted(float(g["pct_of_total_time"]) for g in got) == pct, f"{exp_dir}: short_kernels % of total time = TraceLens's")
    else:
        check(all(not g["parent_op"] for g in got if key(g["parent_op"], as_tuple(g["input_dims"]), g["kernel"], g["count"], g["sum_us"]) not in want),
              f"{exp_dir}: the groups TraceLens lacks are the kernels no op launched")
    hist = list(csv.DictReader(open(os.path.join(exp_path, "short_kernel_histogram.csv"))))
    rows = report(trace, "short_kernels_histogram")
    check([int(r["count"]) for r in rows] == [int(h["count"]) for h in hist]
          and all(close(r["bin_start"], h["bin_start"], rel=1e-5) for r, h in zip(rows, hist)),
          f"{exp_dir}: short_kernels_histogram = TraceLens's, bin for bin")

# kernel_details on the other profilers' files: the rocprofv3 reader stores grid_size /
# workgroup_size, the Nsight reader gridX..Z / blockX..Z as grid / block (tests/shell/rocprof_json.py,
# nsys_sqlite.py check the values); every kernel of those samples has both here.
for native in ("rocprof/908_results.json.gz", "nsys/healthy_1pct.sqlite"):
    path = os.path.join(shared, "native", native)
    if not os.path.exists(path):
        print(f"skip {native}: not present")
        continue
    rows = report(path, "kernel_details", {"top": 1000000})
    check(rows and all(r["grid"].startswith("[") and r["block"].startswith("[") for r in rows),
          f"{native}: kernel_details has grid and block for every kernel ({len(rows)} rows)")

finish()
