#!/usr/bin/env python3
"""The rocprofv3 JSON reader (src/readers/rocprof_json) and the names of files that are not traces
(src/readers/formats.cpp).

1. On the shared rocprofv3 sample, the `kernels` report and the kernel rows against TraceLens's
   kernel summary rule (TraceLens/Reporting/rocprof_analysis.py, re-implemented here over the raw
   JSON): per kernel, count / total / mean / min / max of end_timestamp - start_timestamp (ns).
   TraceLens keys kernels by truncated_kernel_name (template arguments dropped); tlsql names them by
   formatted_kernel_name and keeps the truncated name in args, so both groupings are checked.
   `timeline` against TraceLens's GPU timeline rule: the union of the kernel and copy intervals.
2. Hand-made rocprofv3 files: a HIP launch linked to its kernel by correlation id, a copy, a roctx
   range, and the repairs (missing symbol, zero-length dispatch, unknown agent) in `health`; rows
   and figures by hand.
3. Files of other profilers are named, with what to do, exit 1.
usage: rocprof_json.py TLSQL SHARED_DIR TMP_DIR"""
import copy, gzip, json, os, sqlite3, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)


def run(args, *sql):
    cmd = [tlsql, "-q", "--csv"] + args
    for s in sql:
        cmd += ["-c", s]
    return subprocess.run(cmd, capture_output=True, text=True)


def rows(r):
    import csv, io
    return list(csv.reader(io.StringIO(r.stdout)))


# --- 1. the shared sample against TraceLens's rules --------------------------------------------
sample = os.path.join(shared, "native", "rocprof", "908_results.json.gz")
if os.path.exists(sample):
    tool = json.load(gzip.open(sample))["rocprofiler-sdk-tool"][0]
    symbols = {k["kernel_id"]: k for k in tool["kernel_symbols"]}
    dispatches = tool["buffer_records"]["kernel_dispatch"]

    def tracelens_name(kid):  # RocprofParser.extract_kernel_events
        k = symbols.get(kid, {})
        return (k.get("truncated_kernel_name") or k.get("formatted_kernel_name")
                or k.get("kernel_name", f"unknown_kernel_{kid}"))

    def summary(key):
        out = {}
        for d in dispatches:
            dur = d["end_timestamp"] - d["start_timestamp"]  # ns: TraceLens's "(µs)" columns hold these
            s = out.setdefault(key(d), [0, 0, None, None])
            s[0] += 1
            s[1] += dur
            s[2] = dur if s[2] is None else min(s[2], dur)
            s[3] = dur if s[3] is None else max(s[3], dur)
        return out

    by_truncated = summary(lambda d: tracelens_name(d["dispatch_info"]["kernel_id"]))
    r = run([sample], """SELECT args ->> '$."truncated name"', count(*), sum(dur), min(dur), max(dur)
                         FROM event WHERE kind = 'kernel' GROUP BY 1""")
    check(r.returncode == 0, f"sample loads ({r.stderr.strip()[:200]})")
    mine = {row[0]: [int(x) for x in row[1:]] for row in rows(r)[1:]}
    check(mine == by_truncated,
          f"per truncated name (TraceLens's key): count, total, min, max ns equal ({len(mine)} vs {len(by_truncated)})")
    check(sum(v[0] for v in mine.values()) == len(dispatches) == 43915, "43,915 kernel dispatches, each one row")

    # The kernels report per formatted name (tlsql's kernel name): µs, three decimals.
    by_name = summary(lambda d: symbols[d["dispatch_info"]["kernel_id"]]["formatted_kernel_name"])
    r = run([sample], ".parameter set @top 100000", ".report kernels")
    rep = rows(r)
    head = rep[0]
    got = {row[0]: row for row in rep[1:]}
    ok = len(got) == len(by_name)
    for name, (n, total, lo, hi) in by_name.items():
        row = got.get(name)
        ok = ok and row is not None and int(row[head.index("count")]) == n
        ok = ok and abs(float(row[head.index("total_us")]) - total / 1e3) < 6e-4
        ok = ok and abs(float(row[head.index("mean_us")]) - total / n / 1e3) < 6e-4
        ok = ok and abs(float(row[head.index("min_us")]) - lo / 1e3) < 6e-4
        ok = ok and abs(float(row[head.index("max_us")]) - hi / 1e3) < 6e-4
    check(r.returncode == 0 and ok, f"kernels report == TraceLens's summary rule per name ({len(got)} names)")

    # TraceLens's gpu_timeline: union of kernel (and copy: none here) intervals = busy; its total is
    # the process's fini_time - init_time, tlsql's the GPU span (first start to last end).
    iv = sorted((d["start_timestamp"], d["end_timestamp"]) for d in dispatches)
    busy, cur_s, cur_e = 0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += cur_e - cur_s
    span = max(e for _, e in iv) - min(s for s, _ in iv)
    r = run([sample], ".report timeline")
    tl = {row[0]: float(row[1]) for row in rows(r)[1:]}
    check(abs(tl.get("busy_time", -1) - busy / 1e6) < 1e-9 * max(1, busy / 1e6),
          f"timeline busy_time == union of kernel intervals ({tl.get('busy_time')} vs {busy / 1e6} ms)")
    check(abs(tl.get("total_time", -1) - span / 1e6) < 1e-9 * span / 1e6, "timeline total_time == GPU span")
    meta = tool["metadata"]
    r = run([sample], "SELECT metadata ->> '$.profiler', (metadata ->> '$.rocprofv3.fini_time') - "
                      "(metadata ->> '$.rocprofv3.init_time') FROM trace")
    check(rows(r)[1:] == [["rocprofv3", str(meta["fini_time"] - meta["init_time"])]],
          "trace.metadata: profiler rocprofv3, and TraceLens's total (fini_time - init_time) kept")
    r = run([sample], "SELECT id, name, vendor, sm_count, warp_size, compute_capability FROM device ORDER BY id")
    devs = rows(r)[1:]
    check(len(devs) == 8 and devs[0] == ["0", "AMD Instinct MI350X", "AMD", "256", "64", "9.5"],
          f"8 GPU agents -> device rows ({devs[:1]})")
    # gpu_spec's MI350X row: 256 CUs x 4096 dense fp16 matrix FLOP/clk x 2.2 GHz peak clock (AMD's
    # MI350X sheet, 2.3 PFLOP/s dense) = 2306.9 TFLOP/s; HBM3E 8 TB/s.
    r = run([sample], "SELECT g.gpu, s.matrix_tflops, s.hbm_tbps FROM device_gpu g "
                      "JOIN gpu_spec s ON s.gpu = g.gpu AND s.dtype = 'bf16' WHERE g.id = 0")
    check(rows(r)[1:] == [["MI350X", str(round(256 * 4096 * 2.2e9 / 1e12, 1)), "8.0"]],
          f"'AMD Instinct MI350X' -> gpu_spec MI350X peaks ({rows(r)[1:]})")
    # stream: the HIP stream (stream_id) when the dispatch has one, else its HSA queue
    streams = sorted({d["stream_id"]["handle"] if "stream_id" in d else d["dispatch_info"]["queue_id"]["handle"]
                      for d in dispatches})
    r = run([sample], "SELECT DISTINCT device, stream FROM event WHERE kind = 'kernel' ORDER BY stream")
    check(rows(r)[1:] == [["0", str(q)] for q in streams],
          f"agent -> device 0 (gpu_index), HIP stream -> stream ({len(streams)} streams)")
    first = dispatches[0]
    r = run([sample], "SELECT ts, dur, args ->> '$.grid', args ->> '$.block', correlation FROM event "
                      "WHERE kind = 'kernel' ORDER BY ts LIMIT 1")
    di = first["dispatch_info"]
    check(rows(r)[1:] == [[str(first["start_timestamp"]), str(first["end_timestamp"] - first["start_timestamp"]),
                           json.dumps([di["grid_size"][a] for a in "xyz"], separators=(",", ":")),
                           json.dumps([di["workgroup_size"][a] for a in "xyz"], separators=(",", ":")),
                           str(first["correlation_id"]["internal"])]],
          f"first dispatch: ns exact, grid / block, correlation ({rows(r)[1:]})")
    # The reports that cannot answer say why in one line.
    for rep, why in (("ops", "ops: no rows: no ops: rocprofv3 records HIP calls and GPU work but no CPU ops"),
                     ("launch", "launch: no rows: no GPU work linked to a launch call in this trace")):
        r = run([sample, "--report", rep])
        check(r.returncode == 0 and r.stderr.startswith(why) and r.stderr.count("\n") == 1,
              f"--report {rep}: says why in one line ({r.stderr.strip()[:160]})")
    # No HIP call in the sample (recorded without --hip-trace): health says that is why no GPU work
    # has a launch, not "launched before profiling started".
    r = run([sample], "SELECT detail FROM health WHERE \"check\" = 'gpu_without_launch'")
    check("(it holds none: the runtime API was not recorded; rocprofv3: --hip-trace" in r.stdout
          and f"0 of {len(dispatches)} linked" in r.stdout, f"gpu_without_launch says why ({r.stdout.strip()[:200]})")
    for rep in ("summary", "kernels", "idle", "temporal", "overlap", "collectives", "health"):
        r = run([sample, "--report", rep])
        check(r.returncode == 0 and len(rows(r)) > 1, f"--report {rep} runs ({r.stderr.strip()[:160]})")
else:
    print(f"note: {sample} not found: its checks not run")


# --- 2. hand-made files ----------------------------------------------------------------------
def agent(handle, gpu_index, name):
    return {"id": {"handle": handle}, "type": 2 if gpu_index >= 0 else 1, "gpu_index": gpu_index, "name": "gfx942",
            "product_name": name, "cu_count": 304, "wave_front_size": 64, "gfx_target_version": 90402}


def dispatch(corr, kid, start, end, agent_handle=11, queue=5):
    return {"kind": 11, "operation": 2, "thread_id": 7, "correlation_id": {"internal": corr, "external": 0},
            "start_timestamp": start, "end_timestamp": end,
            "dispatch_info": {"agent_id": {"handle": agent_handle}, "queue_id": {"handle": queue}, "kernel_id": kid,
                              "dispatch_id": corr, "private_segment_size": 0, "group_segment_size": 1024,
                              "workgroup_size": {"x": 256, "y": 1, "z": 1},
                              "grid_size": {"x": 4096, "y": 2, "z": 1}}}


kinds = [{"kind": "NONE", "operations": []}] * 5 + [
    {"kind": "HIP_RUNTIME_API", "operations": ["hipMalloc", "hipLaunchKernel", "hipMemcpyAsync"]},
    {"kind": "HIP_COMPILER_API", "operations": []},
    {"kind": "MARKER_CORE_API", "operations": ["roctxMarkA", "roctxRangePushA", "roctxRangePop"]},
    {"kind": "MARKER_CONTROL_API", "operations": []}, {"kind": "MARKER_NAME_API", "operations": []},
    {"kind": "MEMORY_COPY", "operations": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_DEVICE"]},
    {"kind": "KERNEL_DISPATCH", "operations": ["NONE", "ENQUEUE", "COMPLETE"]}]
doc = {"rocprofiler-sdk-tool": [{
    "metadata": {"pid": 4242, "init_time": 1000, "fini_time": 90000, "command": ["python", "t.py"],
                 "node": {"hostname": "h"}},
    "agents": [agent(10, -1, "AMD EPYC"), agent(11, 0, "AMD Instinct MI300X")],
    "strings": {"buffer_records": kinds, "marker_api": [{"key": 40, "value": "my range \"x\""}]},
    "kernel_symbols": [{"kernel_id": 1, "kernel_name": "_Z3addv.kd", "formatted_kernel_name": "add()",
                        "truncated_kernel_name": "add"}],
    "buffer_records": {
        # hipLaunchKernel (corr 1) launches dispatch corr 1 (1.5 µs); the others repair or skip
        "hip_api": [{"kind": 5, "operation": 1, "thread_id": 7, "correlation_id": {"internal": 1, "external": 0},
                     "start_timestamp": 2000, "end_timestamp": 2500},
                    {"kind": 5, "operation": 2, "thread_id": 7, "correlation_id": {"internal": 3, "external": 0},
                     "start_timestamp": 2600, "end_timestamp": 2900}],
        "kernel_dispatch": [dispatch(1, 1, 3000, 4500),
                            dispatch(2, 99, 5000, 5000),          # no symbol, zero length
                            dispatch(4, 1, 6000, 6001, agent_handle=77)],  # an agent the list lacks
        "memory_copy": [{"kind": 10, "operation": 1, "thread_id": 7, "correlation_id": {"internal": 3, "external": 0},
                         "start_timestamp": 7000, "end_timestamp": 9000, "dst_agent_id": {"handle": 11},
                         "src_agent_id": {"handle": 10}, "bytes": 4096}],
        "marker_api": [{"kind": 7, "operation": 1, "thread_id": 7, "correlation_id": {"internal": 40, "external": 0},
                        "start_timestamp": 1500, "end_timestamp": 9500}],
        "memory_allocation": [{"kind": 99}, {"kind": 99}],
    }}]}
small = os.path.join(tmp, "small_results.json")
with open(small, "w") as f:
    json.dump(doc, f)
r = run([small], "SELECT kind, name, ts, dur, device, stream, correlation FROM event ORDER BY ts, kind")
check(r.returncode == 0, f"hand-made file loads ({r.stderr.strip()[:200]})")
check(rows(r)[1:] == [
    ["annotation", 'my range "x"', "1500", "8000", "", "", ""],
    ["runtime", "hipLaunchKernel", "2000", "500", "", "", "1"],
    ["runtime", "hipMemcpyAsync", "2600", "300", "", "", "3"],
    ["kernel", "add()", "3000", "1500", "0", "5", "1"],
    ["kernel", "unknown_kernel_99", "5000", "0", "0", "5", "2"],
    ["kernel", "add()", "6000", "1", "", "5", "4"],
    ["memcpy", "MEMORY_COPY_HOST_TO_DEVICE", "7000", "2000", "0", "", "3"]], f"rows by hand ({rows(r)[1:]})")
r = run([small], """SELECT "check", count FROM health WHERE "check" LIKE 'rocprof%' ORDER BY 1""")
check(rows(r)[1:] == [["rocprof_missing_symbol", "1"], ["rocprof_records_not_read", "1"],
                      ["rocprof_unknown_agent", "1"], ["rocprof_zero_duration", "1"]],
      f"repairs and skips counted in health ({rows(r)[1:]})")
# The launch links: hipLaunchKernel -> add() (corr 1), hipMemcpyAsync -> the copy (corr 3).
r = run([small], "SELECT r.name, g.name FROM launch l JOIN event r ON r.uid = l.runtime "
                 "JOIN event g ON g.uid = l.gpu ORDER BY g.ts")
check(rows(r)[1:] == [["hipLaunchKernel", "add()"], ["hipMemcpyAsync", "MEMORY_COPY_HOST_TO_DEVICE"]],
      f"GPU work under the runtime call with its correlation id ({rows(r)[1:]})")
r = run([small, "--report", "launch"])
check(r.returncode == 0, f"launch report runs ({r.stderr.strip()[:120]})")
r = run([small], "SELECT name, vendor FROM device")
check(rows(r)[1:] == [["AMD Instinct MI300X", "AMD"]], "the GPU agent is the one device row (CPU agents are not)")
pretty = os.path.join(tmp, "pretty_results.json")  # rocprofv3 can indent its output
with open(pretty, "w") as f:
    json.dump(doc, f, indent=2)
q = "SELECT kind, name, ts, dur, device, stream, correlation, args FROM event ORDER BY ts, kind"
check(run([pretty], q).stdout == run([small], q).stdout and run([small], q).stdout.count("\n") == 8,
      "indented JSON: the same rows and args")
with gzip.open(small + ".gz", "wt") as f:
    json.dump(doc, f)
r = run([small + ".gz"], "SELECT count(*) FROM event")
check(rows(r)[1:] == [["7"]], "gzip'd: the same rows")

# An older / trimmed layout: buffer_records before everything, no agents, kernel_symbols or strings
# (read after the walk, from the copy kept), a second process (counted, not read).
trimmed = {"rocprofiler-sdk-tool": [{
    "buffer_records": {"kernel_dispatch": [dispatch(1, 1, 3000, 4500)],
                       "hip_api": [{"kind": 5, "operation": 1, "thread_id": 7, "start_timestamp": 2000,
                                    "end_timestamp": 2500, "correlation_id": {"internal": 1, "external": 0}}]},
    "metadata": {"pid": 9}}, {"metadata": {"pid": 10}}]}
p = os.path.join(tmp, "trimmed_results.json")
with open(p, "w") as f:
    json.dump(trimmed, f)
r = run([p], "SELECT kind, name, ts, dur, pid, device, correlation FROM event ORDER BY ts")
check(rows(r)[1:] == [["runtime", "hip_api operation 1", "2000", "500", "9", "", "1"],
                      ["kernel", "unknown_kernel_1", "3000", "1500", "11", "", "1"]],
      f"no agents / kernel_symbols / strings: rows by hand, pid the agent handle ({rows(r)[1:]}; {r.stderr[:160]})")
r = run([p], """SELECT "check" FROM health WHERE "check" LIKE 'rocprof%' ORDER BY 1""")
check([x[0] for x in rows(r)[1:]] == ["rocprof_missing_symbol", "rocprof_processes_skipped",
                                      "rocprof_tables_missing", "rocprof_unknown_agent"],
      f"missing tables and the second process in health ({rows(r)[1:]})")

# Many dispatches: the reader parses buffer_records in ~1 MB batches; rows and sums across batches.
many = json.loads(json.dumps(doc))
n = 6000
many["rocprofiler-sdk-tool"][0]["buffer_records"] = {
    "kernel_dispatch": [dispatch(i + 1, 1, 10000 + 100 * i, 10000 + 100 * i + (i % 7) + 1) for i in range(n)]}
p = os.path.join(tmp, "many_results.json")
with open(p, "w") as f:
    json.dump(many, f)
check(os.path.getsize(p) > 2 << 20, "the file spans more than two batches")
r = run([p], "SELECT count(*), sum(dur), count(DISTINCT correlation) FROM event WHERE kind = 'kernel'")
check(rows(r)[1:] == [[str(n), str(sum(i % 7 + 1 for i in range(n))), str(n)]],
      f"{n} dispatches: count, sum of ns and ids by hand ({rows(r)[1:]})")
# A defect inside a record of a later batch: the error names the byte of the file where it is.
text = open(p).read()
bad_at = text.index('"dispatch_id": 5000,') + len('"dispatch_id": ')
broken = text[:bad_at] + "5x0" + text[bad_at + 4:]
with open(p, "w") as f:
    f.write(broken)
r = run([p], "SELECT 1")
import re
m = re.search(r"at byte (\d+)", r.stderr)
check(r.returncode == 1 and r.stderr.count("\n") == 1 and m and bad_at <= int(m.group(1)) <= bad_at + 3,
      f"a broken number in a later batch: one line, its byte ({bad_at}; {r.stderr.strip()[:200]})")
# Records are checked on the parse threads: simdjson's parse checks every byte, and check_json
# walks a chunk only where simdjson refuses it or it holds an escape simdjson takes as it is. Each
# defect the loader repairs is counted in health as from any other input (one of each, by hand):
# NUL and a lone surrogate (JSON simdjson takes), a raw control byte and invalid UTF-8 (it refuses);
# an escaped backslash before "u0000" is no NUL.
fixes = json.loads(json.dumps(doc))
fixes["rocprofiler-sdk-tool"][0]["buffer_records"] = {
    "kernel_dispatch": [dict(dispatch(i + 1, 1, 1000 * i, 1000 * i + 10), note=f"NOTE{i}") for i in range(3000)]}
text = json.dumps(fixes).replace('"NOTE10"', '"a\\u0000b"').replace('"NOTE900"', '"\\ud800x"')
text = text.replace('"NOTE1500"', '"a\x01b"').replace('"NOTE2999"', '"\\\\u0000"').encode()
text = text.replace(b'"NOTE2000"', b'"a\xffb"')
p = os.path.join(tmp, "repairs_results.json")
with open(p, "wb") as f:
    f.write(text)
for threads in ("1", "2"):
    r = run(["--threads", threads, p], """SELECT (SELECT count(*) FROM event WHERE kind = 'kernel'),
             (SELECT group_concat("check" || '=' || count, ' ') FROM (SELECT * FROM health WHERE "check" IN
              ('nul_character', 'lone_surrogate', 'control_characters', 'invalid_utf8') ORDER BY "check"))""")
    check(rows(r)[1:] == [["3000", "control_characters=1 invalid_utf8=1 lone_surrogate=1 nul_character=1"]],
          f"--threads {threads}: 3000 dispatches, each repair counted once ({rows(r)[1:]} {r.stderr.strip()[:160]})")
# A defect inside a record, then the text cut short within the same chunk (the scan's error, met
# before the chunk is cut and checked): the record's defect is reported.
text = json.dumps(fixes)
bad_at = text.index('"dispatch_id": 7,') + len('"dispatch_id": ')
with open(p, "w") as f:
    f.write(text[:bad_at] + "7x" + text[bad_at + 1:text.index('"dispatch_id": 20,')])
r = run([p], "SELECT 1")
m = re.search(r"at byte (\d+)", r.stderr)
check(r.returncode == 1 and m and bad_at <= int(m.group(1)) <= bad_at + 2,
      f"a broken record, then the text cut in its chunk: the record's byte ({bad_at}; {r.stderr.strip()[:200]})")
# Two defects: one inside a record of the first chunk, one after the records (the scan's): the
# first in the file is the one reported, with any number of threads.
text = json.dumps(fixes)
bad_at = text.index('"dispatch_id": 7,') + len('"dispatch_id": ')
text = text[:bad_at] + "7x" + text[bad_at + 1:] + " x"
with open(p, "w") as f:
    f.write(text)
for threads in ("1", "2", "3"):
    r = run(["--threads", threads, p], "SELECT 1")
    m = re.search(r"at byte (\d+)", r.stderr)
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and m and bad_at <= int(m.group(1)) <= bad_at + 2,
          f"--threads {threads}: of two defects the first in the file ({bad_at}; {r.stderr.strip()[:200]})")

# kernel_symbols is read as text and a symbol's names parsed on first use (most symbols are never
# used); records are parsed on the parse threads. Names by hand: the last entry of an id wins, an
# entry whose kernel_id is not an integer names nothing, names keep brackets, quotes, backslashes
# and escaped characters; a batch holding an entry with a nested member (parsed whole) the same.
odd = '[x] {y} "q" \\ \u00e9 \u2603 '
symbols = [{"kernel_id": i, "code_object_id": 1, "kernel_name": f"_Z{i}k" + "m" * 600,
            "formatted_kernel_name": f"k{i}({odd if i % 5 == 0 else ''})" + "f" * 300,
            "truncated_kernel_name": f"k{i}", "sgpr_count": 16} for i in range(3000)]
symbols[2500] = dict(symbols[2500], kernel_id=7, formatted_kernel_name="seven again")  # id 7 again
symbols[2600] = dict(symbols[2600], nested={"a": [1, {"b": 2}]})
symbols[2700] = dict(symbols[2700], kernel_id=2700.0)  # not an integer: names nothing
symbols.append({"kernel_id": 3001, "kernel_name": "_Zonly", "formatted_kernel_name": "",
                "truncated_kernel_name": ""})  # formatted and truncated empty: the mangled name
named = {}
for k in symbols:
    if type(k["kernel_id"]) is int:
        named[k["kernel_id"]] = k
used = [5, 7, 10, 2600, 2700, 2999, 3001, 5, 12345]
lazy = json.loads(json.dumps(doc))
lazy["rocprofiler-sdk-tool"][0]["kernel_symbols"] = symbols
lazy["rocprofiler-sdk-tool"][0]["buffer_records"] = {
    "kernel_dispatch": [dispatch(i + 1, used[i % len(used)], 10000 + 100 * i, 10050 + 100 * i) for i in range(9000)]}
p = os.path.join(tmp, "lazy_symbols_results.json")
with open(p, "w") as f:
    json.dump(lazy, f)
want = []
for i in range(9000):
    k = named.get(used[i % len(used)])
    name = (k["formatted_kernel_name"] or k["truncated_kernel_name"] or k["kernel_name"]) if k else \
        f"unknown_kernel_{used[i % len(used)]}" if used[i % len(used)] != 2700 else "unknown_kernel_2700"
    # (the mangled name only names a symbol that has no other name: not kept in args, docs/formats.md)
    want.append([str(i + 1), name, k["truncated_kernel_name"] if k else "", "0"])
q = """SELECT correlation, name, coalesce(args ->> '$."truncated name"', ''), json_type(args, '$."mangled name"') IS NOT NULL
       FROM event WHERE kind = 'kernel' ORDER BY correlation"""
for threads in ("1", "2", "3"):
    r = run(["--threads", threads, p], q)
    check(r.returncode == 0 and rows(r)[1:] == want,
          f"--threads {threads}: 9000 dispatches named by their symbols by hand ({r.stderr.strip()[:160]})")
r = run([p], """SELECT "check", count FROM health WHERE "check" = 'rocprof_missing_symbol'""")
check(rows(r)[1:] == [["rocprof_missing_symbol", str(2 * 1000)]],
      f"dispatches of ids 12345 and 2700 (not an integer) counted unnamed ({rows(r)[1:]})")
# kernel_symbols' batches are checked on the load's threads, then taken in file order: of a defect
# inside an entry of the first batch and a later one the scan meets while that batch waits to be
# checked (a missing ','), the first is reported; a
# batch holding an entry simdjson refuses (a number past 64 bits, which check_json accepts) is
# parsed entry by entry as before, and reports it at the batch's start.
text = open(p).read()
bad_at = text.index('"kernel_id": 100,') + len('"kernel_id": ')
comma = text.index(', {"kernel_id": 1500,')  # an entry not followed by ',': the scan's error
with open(p, "w") as f:
    f.write(text[:bad_at] + "1x0" + text[bad_at + 3:comma] + text[comma + 1:])
for threads in ("1", "2", "3"):
    r = run(["--threads", threads, p], "SELECT 1")
    m = re.search(r"at byte (\d+)", r.stderr)
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and m and bad_at <= int(m.group(1)) <= bad_at + 3,
          f"--threads {threads}: a symbol's defect before the scan's: its byte ({bad_at}; {r.stderr.strip()[:200]})")
with open(p, "w") as f:
    f.write(text + " x")
r = run(["--threads", "2", p], "SELECT 1")
check(r.returncode == 1 and f"at byte {len(text) + 1}: expected the end of the text" in r.stderr,
      f"symbols sound, the scan's defect after them reported ({r.stderr.strip()[:200]})")
# The same when the scan's defect lies in the batch it is cutting: the text is truncated inside a
# later entry of the batch that holds the broken one (the scan walks strings and brackets only).
cut_at = text.index('{"kernel_id": 150,')
with open(p, "w") as f:
    f.write(text[:bad_at] + "1x0" + text[bad_at + 3:cut_at + 40])
for threads in ("1", "2"):
    r = run(["--threads", threads, p], "SELECT 1")
    m = re.search(r"at byte (\d+)", r.stderr)
    check(r.returncode == 1 and m and bad_at <= int(m.group(1)) <= bad_at + 2,
          f"--threads {threads}: a broken symbol, then the text cut in its batch: the symbol's byte ({bad_at}; "
          f"{r.stderr.strip()[:200]})")
big_at = text.index('"sgpr_count": 16, "nested"')
with open(p, "w") as f:
    f.write(text[:big_at] + '"sgpr_count": 123456789012345678901234567890' + text[big_at + len('"sgpr_count": 16'):])
r = run(["--threads", "2", p], "SELECT 1")
check(r.returncode == 1 and "not JSON" in r.stderr and r.stderr.count("\n") == 1,
      f"a number simdjson refuses inside a symbol: one line ({r.stderr.strip()[:200]})")

# A kernel launched on HIP stream 0 runs on HSA queue 16; a copy on stream 0: one stream, as HIP
# and Kineto see it (the queue in args); a dispatch without stream_id keeps its queue.
sq = json.loads(json.dumps(doc))
sq["rocprofiler-sdk-tool"][0]["buffer_records"] = {
    "kernel_dispatch": [dict(dispatch(1, 1, 3000, 4000, queue=16), stream_id={"handle": 0}),
                        dispatch(2, 1, 9000, 9500, queue=16)],
    "memory_copy": [{"kind": 10, "operation": 1, "thread_id": 7, "correlation_id": {"internal": 3, "external": 0},
                     "start_timestamp": 5000, "end_timestamp": 6000, "dst_agent_id": {"handle": 11},
                     "src_agent_id": {"handle": 10}, "bytes": 4096, "stream_id": {"handle": 0}}]}
p = os.path.join(tmp, "stream_results.json")
with open(p, "w") as f:
    json.dump(sq, f)
r = run([p], "SELECT kind, stream, tid, args ->> '$.queue', args ->> '$.\"hip stream\"' FROM event ORDER BY ts")
check(rows(r)[1:] == [["kernel", "0", "0", "16", "0"], ["memcpy", "0", "0", "", ""], ["kernel", "16", "16", "16", ""]],
      f"stream: the HIP stream of a kernel and a copy alike, else the queue ({rows(r)[1:]})")

# HTA's memory kinds from rocprofv3's copy names (MEMORY_COPY_HOST_TO_DEVICE is HtoD, not "Memcpy Unknown").
r = run([small, "--report", "memory_bw"])
check([x[1] for x in rows(r)[1:]] == ["Memcpy HtoD"], f"memory_bw: the copy's kind ({rows(r)[1:]})")

# rocprofv3 --group-by-queue (metadata.config.group_by_queue): the tool attributes no record to a HIP
# stream, every stream_id is 0 (rocprofiler-sdk's tool.cpp); two queues' overlapping dispatches
# are then two streams, by their queue, not one stream 0 whose kernels overlap.
def by_queue(flag):
    g = json.loads(json.dumps(doc))
    t = g["rocprofiler-sdk-tool"][0]
    t["metadata"]["config"] = {"group_by_queue": flag}
    t["buffer_records"] = {"kernel_dispatch": [dict(dispatch(1, 1, 2000, 6000, queue=5), stream_id={"handle": 0}),
                                               dict(dispatch(2, 1, 3000, 5000, queue=6), stream_id={"handle": 0})]}
    p = os.path.join(tmp, f"by_queue_{flag}_results.json")
    with open(p, "w") as f:
        json.dump(g, f)
    return rows(run([p], """SELECT stream, args ->> '$.queue', coalesce(args ->> '$."hip stream"', '') FROM event
                            ORDER BY ts"""))[1:]
check(by_queue(True) == [["5", "5", ""], ["6", "6", ""]], f"group_by_queue: streams by queue ({by_queue(True)})")
check(by_queue(False) == [["0", "5", "0"], ["0", "6", "0"]], f"otherwise stream_id 0 is a stream ({by_queue(False)})")

# Counter collection (--pmc) writes its dispatches under callback_records, not read: counted.
cc = json.loads(json.dumps(doc))
cc["rocprofiler-sdk-tool"][0]["callback_records"] = {
    "counter_collection": [{"dispatch_data": dispatch(i, 1, 1000 * i, 1000 * i + 10), "thread_id": 7,
                            "records": [{"counter_id": {"handle": 1}, "value": 12.0}]} for i in range(3)],
    "hip_api": []}
p = os.path.join(tmp, "counters_results.json")
with open(p, "w") as f:
    json.dump(cc, f)
r = run([p], """SELECT detail FROM health WHERE "check" = 'rocprof_records_not_read'""")
check(r.returncode == 0 and len(rows(r)) == 2 and "3 callback_records.counter_collection" in rows(r)[1][0]
      and "2 memory_allocation" in rows(r)[1][0],
      f"counter collection's 3 dispatches counted as not read ({rows(r)[1:]})")

# roctxMarkA (MARKER_CORE_API operation 0) is an instant, as Nsight's marks are; not a zero-length
# defect in health. A range of zero length still is.
mk = json.loads(json.dumps(doc))
mk["rocprofiler-sdk-tool"][0]["strings"]["marker_api"] = [{"key": 41, "value": "a mark"},
                                                          {"key": 42, "value": "empty range"}]
mk["rocprofiler-sdk-tool"][0]["buffer_records"] = {"marker_api": [
    {"kind": 7, "operation": 0, "thread_id": 7, "correlation_id": {"internal": 41, "external": 0},
     "start_timestamp": 5000, "end_timestamp": 5000},
    {"kind": 7, "operation": 1, "thread_id": 7, "correlation_id": {"internal": 42, "external": 0},
     "start_timestamp": 6000, "end_timestamp": 6000}]}
p = os.path.join(tmp, "mark_results.json")
with open(p, "w") as f:
    json.dump(mk, f)
r = run([p], "SELECT name, ph, ts, dur FROM event ORDER BY ts",
        """SELECT "check", count FROM health WHERE "check" = 'rocprof_zero_duration'""")
check(rows(r)[1:] == [["a mark", "i", "5000", "0"], ["empty range", "X", "6000", "0"],
                      ["check", "count"], ["rocprof_zero_duration", "1"]],
      f"roctxMarkA: an instant, the zero-length range alone counted ({rows(r)[1:]})")

# --kernel-rename: a dispatch is named by the roctx range it was launched in, the name keyed by its
# external correlation id in strings.correlation_id.external (rocprofiler-sdk's get_kernel_name:
# the rename when the id has one, else the symbol's formatted name); the symbol's name in args.
# With metadata.config.kernel_rename false the table is not used.
def renamed_file(flag):
    rn = json.loads(json.dumps(doc))
    t = rn["rocprofiler-sdk-tool"][0]
    if flag is not None:
        t["metadata"]["config"] = {"kernel_rename": flag}
    t["strings"]["correlation_id"] = {"external": [{"key": 1, "value": "attention.qkv"}, {"key": 2, "value": "mlp.up"}]}
    ds = [dispatch(i + 1, 1, 1000 * (i + 1), 1000 * (i + 1) + 10) for i in range(4)]
    for d, ext in zip(ds, (1, 2, 0, 9)):
        d["correlation_id"]["external"] = ext
    t["buffer_records"] = {"kernel_dispatch": ds}
    p = os.path.join(tmp, f"rename_{flag}_results.json")
    with open(p, "w") as f:
        json.dump(rn, f)
    return rows(run([p], """SELECT name, coalesce(args ->> '$."kernel name"', '') FROM event ORDER BY ts"""))[1:]
check(renamed_file(True) == [["attention.qkv", "add()"], ["mlp.up", "add()"], ["add()", ""], ["add()", ""]],
      f"--kernel-rename: the range's name, the symbol's in args ({renamed_file(True)})")
check(renamed_file(None) == renamed_file(True), "no metadata.config: the rename table is used as given")
check(renamed_file(False) == [["add()", ""]] * 4, f"kernel_rename false: symbol names ({renamed_file(False)})")
# rocprofiler-sdk builds whose dispatch records carry kernel_rename_val (the renames keyed by it, a
# 64-bit string hash, here one past 2^63; external then holds something else): named the same way.
rv = json.loads(json.dumps(doc))
t = rv["rocprofiler-sdk-tool"][0]
t["strings"]["correlation_id"] = {"external": [{"key": 11529215046068469760, "value": "attention.qkv"}]}
t["buffer_records"] = {"kernel_dispatch": [dict(dispatch(1, 1, 1000, 1010), kernel_rename_val=11529215046068469760),
                                           dispatch(2, 1, 2000, 2010)]}
t["buffer_records"]["kernel_dispatch"][0]["correlation_id"]["external"] = 94823749234688
p = os.path.join(tmp, "rename_val_results.json")
with open(p, "w") as f:
    json.dump(rv, f)
got = rows(run([p], """SELECT name, coalesce(args ->> '$."kernel name"', '') FROM event ORDER BY ts"""))[1:]
check(got == [["attention.qkv", "add()"], ["add()", ""]], f"kernel_rename_val keys the rename ({got})")

# A gzip bomb inside a member tlsql skips (no rows for the pipeline's guard to count): refused
# once 256 MB have inflated from 200 times fewer compressed bytes, not scanned to its end.
bomb = os.path.join(tmp, "bomb_results.json.gz")
with gzip.open(bomb, "wb") as f:
    f.write(b'{"rocprofiler-sdk-tool": [{"code_objects": "')
    for _ in range(300):
        f.write(b"a" * (1 << 20))
    f.write(b'"}]}')
r = run([bomb], "SELECT 1")
check(r.returncode == 1 and "a gzip bomb, not a trace" in r.stderr and r.stderr.count("\n") == 1,
      f"a gzip bomb in a skipped member: one line ({r.stderr.strip()[:200]})")

for text, msg in (('{"rocprofiler-sdk-tool": [', "at byte"),
                  ('{"rocprofiler-sdk-tool": 5}', "not a trace: \"rocprofiler-sdk-tool\" is not an array"),
                  ('{"rocprofiler-sdk-tool": [{}]} x', "at byte 31: expected the end of the text"),
                  ('{"rocprofiler-sdk-tool": [{"metadata": {"pid": 1}, "agents": [1 2]}]}', "at byte"),
                  ('{"rocprofiler-sdk-tool": [{"code_objects": [{"a": "unterminated}]}]}', "at byte")):
    bad = os.path.join(tmp, "bad_results.json")
    with open(bad, "w") as f:
        f.write(text)
    r = run([bad], "SELECT 1")
    check(r.returncode == 1 and msg in r.stderr and r.stderr.count("\n") == 1,
          f"{text!r}: one line, {msg!r} ({r.stderr.strip()[:160]})")


# emit_nvtx under ROCm: roctx ranges whose messages are PyTorch's op ranges (getNvtxStr) become
# cpu_op events as on Nsight (src/readers/emit_nvtx.h): name, seq, op_id, Input Dims; a user's
# range and a record_function range ("my block, part 1, op_id = 9") stay annotations.
nvtx_doc = json.loads(json.dumps(doc))
tool = nvtx_doc["rocprofiler-sdk-tool"][0]
messages = {41: "aten::addmm, seq = 3, op_id = 12, sizes = [[16], [4, 8], [8, 16]]", 42: "train step",
            43: "AddmmBackward0, seq = 3, op_id = 40", 44: "my block, part 1, op_id = 9"}
tool["strings"]["marker_api"] = [{"key": k, "value": v} for k, v in messages.items()]
tool["buffer_records"]["marker_api"] = [
    {"kind": 7, "operation": 1, "thread_id": 7, "correlation_id": {"internal": k, "external": 0},
     "start_timestamp": s, "end_timestamp": e} for k, s, e in ((42, 1000, 9800), (41, 1900, 2700), (44, 1950, 2650),
                                                               (43, 9000, 9500))]
p = os.path.join(tmp, "emit_nvtx_results.json")
with open(p, "w") as f:
    json.dump(nvtx_doc, f)
r = run([p], "SELECT kind, name, ts, dur, seq, args ->> '$.op_id', args -> '$.\"Input Dims\"' FROM event "
             "WHERE kind IN ('cpu_op', 'annotation') ORDER BY ts")
check(rows(r)[1:] == [["annotation", "train step", "1000", "8800", "", "", ""],
                      ["cpu_op", "aten::addmm", "1900", "800", "3", "12", "[[16],[4,8],[8,16]]"],
                      ["annotation", "my block, part 1", "1950", "700", "", "9", ""],
                      ["cpu_op", "AddmmBackward0", "9000", "500", "3", "40", ""]],
      f"roctx op ranges -> cpu_op ({rows(r)[1:]}; {r.stderr.strip()[:160]})")
# The kernel's launch call nests in aten::addmm's range: the op is its launcher; the backward op's
# fwd is the forward op with its seq.
r = run([p], "SELECT o.name FROM kernel k JOIN event o ON o.uid = k.launcher WHERE k.name = 'add()' ORDER BY k.ts")
check(rows(r)[1:2] == [["aten::addmm"]], f"the kernel attributed to the op range ({rows(r)[1:]})")
r = run([p], "SELECT f.name FROM event b JOIN event f ON f.uid = b.fwd WHERE b.name = 'AddmmBackward0'")
check(rows(r)[1:] == [["aten::addmm"]], f"backward op range: fwd by seq ({rows(r)[1:]})")

# Many op ranges (over 128 KB of marker records: past one record chunk): every backward range,
# on the backward thread, finds its forward range's thread by seq, whatever the threads, since a
# process's marker_api array is parsed in record order. 1,500 forward ranges on thread 7, then
# their backward ranges on thread 8: each backward's "Fwd thread id" is 7.
many = json.loads(json.dumps(doc))
tool = many["rocprofiler-sdk-tool"][0]
n = 1500
tool["strings"]["marker_api"] = ([{"key": 1000 + i, "value": f"aten::mul, seq = {i}, op_id = {i}"} for i in range(n)] +
                                 [{"key": 5000 + i, "value": f"MulBackward0, seq = {i}, op_id = {n + i}"}
                                  for i in range(n)])
tool["buffer_records"]["marker_api"] = (
    [{"kind": 7, "operation": 1, "thread_id": 7, "correlation_id": {"internal": 1000 + i, "external": 0},
      "start_timestamp": 10000 + 10 * i, "end_timestamp": 10005 + 10 * i} for i in range(n)] +
    [{"kind": 7, "operation": 1, "thread_id": 8, "correlation_id": {"internal": 5000 + i, "external": 0},
      "start_timestamp": 50000 + 10 * i, "end_timestamp": 50005 + 10 * i} for i in range(n)])
p = os.path.join(tmp, "many_ranges_results.json")
with open(p, "w") as f:
    json.dump(many, f)
check(os.path.getsize(p) > 300 << 10, "the marker records span several 128 KB chunks")
for threads in ("1", "2", "3"):
    r = run([p, "--threads", threads], "SELECT count(*), count(b.fwd), "
            "sum(b.args ->> '$.\"Fwd thread id\"' = 7), sum(f.seq = b.seq AND f.tid = 7) FROM event b "
            "LEFT JOIN event f ON f.uid = b.fwd WHERE b.name = 'MulBackward0'")
    check(rows(r)[1:] == [[str(n)] * 4], f"--threads {threads}: {n} backward ranges paired with their forward "
          f"ranges ({rows(r)[1:]}; {r.stderr.strip()[:160]})")

# Two defects a repair must count: kernel id 1 given twice in kernel_symbols (the later entry names
# the dispatch), in a batch read as text and in one with a lone surrogate (repaired: the batch is
# then parsed entry by entry);
# and a time past 2^63 - 1 ns (rocprofv3 writes unsigned: 18446744073709551615 is not -1).
odd = copy.deepcopy(doc)
tool = odd["rocprofiler-sdk-tool"][0]
tool["kernel_symbols"] = [{"kernel_id": 1, "kernel_name": "_Z3addv.kd", "formatted_kernel_name": "add()"},
                          {"kernel_id": 1, "kernel_name": "_Z3mulv.kd", "formatted_kernel_name": "mul()"},
                          {"kernel_id": 2, "kernel_name": "_Z3subv.kd", "formatted_kernel_name": "NOTE_SUB"},
                          {"kernel_id": 2, "kernel_name": "_Z3divv.kd", "formatted_kernel_name": "div()"}]
tool["buffer_records"]["kernel_dispatch"] = [dispatch(1, 1, 3000, 4500), dispatch(2, 2, 5000, 6000),
                                             dispatch(4, 1, 18446744073709551615, 18446744073709551615)]
for batch_escaped in (False, True):
    path = os.path.join(tmp, f"odd_{batch_escaped}.json")
    text = json.dumps(odd)
    if batch_escaped:
        text = text.replace('"NOTE_SUB"', '"sub\\ud800"')  # a lone surrogate: repaired, so parsed entry by entry
    with open(path, "w") as f:
        f.write(text)
    r = run([path], "SELECT name, ts, dur FROM event WHERE kind = 'kernel' ORDER BY uid")
    check(rows(r)[1:] == [["mul()", "3000", "1500"], ["div()", "5000", "1000"], ["mul()", "", ""]],
          f"the later symbol names the dispatch; a time past INT64_MAX absent ({rows(r)[1:]}; {r.stderr[:160]})")
    r = run([path], """SELECT "check", count FROM health WHERE "check" IN ('rocprof_duplicate_symbol',
                       'rocprof_time_out_of_range') ORDER BY 1""")
    check(rows(r)[1:] == [["rocprof_duplicate_symbol", "2"], ["rocprof_time_out_of_range", "1"]],
          f"both counted in health ({rows(r)[1:]})")

# --- 3. other formats are named ----------------------------------------------------------------
def db(path, tables):
    if os.path.exists(path):
        os.remove(path)
    c = sqlite3.connect(path)
    for t in tables:
        c.execute(f"CREATE TABLE {t}(id INTEGER)")
    c.commit()
    c.close()
    return path


cases = [
    (db(os.path.join(tmp, "run.rocpd.db"), ["rocpd_info_agent_x", "rocpd_kernel_dispatch_x"]), "a rocpd database"),
    (db(os.path.join(tmp, "nsys_no_kernels.sqlite"), ["StringIds", "TARGET_INFO_SESSION_START_TIME", "NVTX_EVENTS"]),
     "an Nsight Systems SQLite export without a CUPTI_ACTIVITY_KIND_KERNEL table"),
]
for name, data, msg in (("report.nsys-rep", b"\x00\x01binary", "an Nsight Systems report"),
                        ("trace.pftrace", b"\x0a\x10\x08\x01", "a Perfetto protobuf trace"),
                        ("model_et.json", b'{"schema": "1.0.2-chakra.0.0.4", "pid": 1, "nodes": [', "a PyTorch execution trace"),
                        ("kernel_trace.csv", b'"Kind","Agent_Id","Queue_Id"\n', "a rocprofv3 CSV result")):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    cases.append((p, msg))
for path, msg in cases:
    r = run([path], "SELECT 1")
    check(r.returncode == 1 and f"{path}: not a trace: {msg}" in r.stderr and r.stderr.count("\n") == 1
          and "at byte 0" not in r.stderr, f"{os.path.basename(path)}: {msg} ({r.stderr.strip()[:200]})")
finish()
