#!/usr/bin/env python3
"""The Nsight Systems SQLite reader (src/readers/nsys_sqlite).

1. On the shared exports: kernel counts and time sums per name, memcpy / memset / sync counts, the
   launch links (GPU rows whose correlationId a runtime call has) and the emit_nvtx op ranges, each
   against SQL over the export's own tables written here, independently of the reader.
2. The reports run on an export (or fail in one line), `ops` from NVTX op ranges.
3. A Kineto trace made here from an export's kernels compares with the export by kernel name
   (diff_kernels): every delta zero.
4. An export of another schema version loads what it can, with health rows; one without a kernel
   table is refused in one line.
5. Other exports' habits, made here.
6. Tables read ahead on a second thread give the rows and errors of a one-thread load.
usage: nsys_sqlite.py TLSQL SHARED_DIR TMP_DIR"""
import csv, io, json, os, re, sqlite3, subprocess, sys
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
    return list(csv.reader(io.StringIO(r.stdout)))


def export(path):
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


def sqlite_file(name, script):
    """A hand-made export in the work folder: made anew by `script`. Returns its path."""
    path = os.path.join(tmp, name)
    if os.path.exists(path):
        os.remove(path)
    c = sqlite3.connect(path)
    c.executescript(script)
    c.commit()
    c.close()
    return path


folder = os.path.join(shared, "native", "nsys")
names = ["mfu_2gpu_before.sqlite", "mfu_2gpu_after.sqlite", "healthy_1pct.sqlite"]
paths = [os.path.join(folder, n) for n in names if os.path.exists(os.path.join(folder, n))]
if len(paths) < 3:
    print(f"note: {folder} lacks the shared exports: their checks not run")

for path in paths:
    base = os.path.basename(path)
    db = export(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    # Kernels per name: demangledName through StringIds (shortName when there is none).
    want = {n: [c, s] for n, c, s in db.execute(
        "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value")}
    r = run([path], "SELECT name, count(*), sum(dur) FROM event WHERE kind = 'kernel' GROUP BY name")
    check(r.returncode == 0, f"{base}: loads ({r.stderr.strip()[:200]})")
    got = {row[0]: [int(row[1]), int(row[2])] for row in rows(r)[1:]}
    check(got == want and len(got) > 0, f"{base}: kernel count and ns per name == the export's ({len(got)} names)")
    for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset"),
                        ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "sync"), ("CUPTI_ACTIVITY_KIND_RUNTIME", None)):
        if table not in tables:
            continue
        n, total = db.execute(f"SELECT count(*), coalesce(sum(end - start), 0) FROM {table}").fetchone()
        where = f"kind = '{kind}'" if kind else "kind IN ('runtime', 'driver')"
        r = run([path], f"SELECT count(*), coalesce(sum(dur), 0) FROM event WHERE {where}")
        check(rows(r)[1:] == [[str(n), str(total)]], f"{base}: {table}: {n} rows, {total} ns ({rows(r)[1:]})")
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        # CUPTI's correlation ids are per process: a GPU row's launch is the runtime call with its
        # id in its own process (globalPid; runtime calls' process is globalTid >> 24).
        # (A table without globalPid, as in the small export, is a one-process run: any call matches.)
        def has(t, col):
            return col in [c[1] for c in db.execute(f"PRAGMA table_info({t})")]
        gpu = " UNION ALL ".join(f"SELECT correlationId, {'globalPid' if has(t, 'globalPid') else 'NULL'} AS pid "
                                 f"FROM {t}" for t in
                                 ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
                                 if t in tables)
        linked = db.execute(f"SELECT count(*) FROM ({gpu}) g WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                            "WHERE r.correlationId = g.correlationId AND (g.pid IS NULL "
                            "OR (r.globalTid >> 24) & 16777215 = (g.pid >> 24) & 16777215))").fetchone()[0]
        r = run([path], "SELECT count(*) FROM launch l JOIN event g ON g.uid = l.gpu "
                        "WHERE g.kind IN ('kernel', 'memcpy', 'memset')")
        check(rows(r)[1:] == [[str(linked)]], f"{base}: {linked} GPU rows linked to their runtime call ({rows(r)[1:]})")
        if has("CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"):
            pairs = {(str(p), str(d)) for p, d in db.execute(
                "SELECT DISTINCT (globalPid >> 24) & 16777215, deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")}
            r = run([path], "SELECT DISTINCT r.pid, g.device FROM launch l JOIN event r ON r.uid = l.runtime "
                            "JOIN event g ON g.uid = l.gpu WHERE g.kind = 'kernel'")
            check({tuple(x) for x in rows(r)[1:]} <= pairs,
                  f"{base}: no launch links a call of one process to a kernel of another ({rows(r)[1:]} vs {pairs})")
    if "NVTX_EVENTS" in tables:
        # emit_nvtx's ranges carry ", op_id = N"; those whose name has a space are record_function
        # ranges ("FSDP::pre_forward (blocks.3...)"), which Kineto files as user annotations.
        texts = [t for (t,) in db.execute("SELECT text FROM NVTX_EVENTS WHERE end IS NOT NULL "
                                          "AND eventType IN (59, 60) AND text LIKE '%, op_id = %'")]
        field = re.compile(r", (seq|op_id|sizes|input_op_ids|stashed seq) = ")
        ops = sum(1 for t in texts if " " not in t[:field.search(t).start()]
                  or t.startswith("autograd::engine::evaluate_function: "))
        addmm = db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'aten::addmm,%'").fetchone()[0]
        r = run([path], "SELECT count(*), sum(name = 'aten::addmm') FROM event WHERE kind = 'cpu_op'")
        check(rows(r)[1:] == [[str(ops), str(addmm)]], f"{base}: {ops} emit_nvtx op ranges -> cpu_op ({rows(r)[1:]})")
        r = run([path, "--report", "ops"])
        check(r.returncode == 0 and "aten::addmm" in r.stdout, f"{base}: ops report from NVTX op ranges")
        # Kernels under an op: their launcher is a cpu_op (the runtime call nests in the NVTX range).
        r = run([path], "SELECT count(*) FROM kernel k JOIN event o ON o.uid = k.launcher WHERE o.kind = 'cpu_op'")
        check(int(rows(r)[1][0]) > 0, f"{base}: kernels attributed to ops ({rows(r)[1:]})")
    version = db.execute("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'").fetchone()[0]
    r = run([path], "SELECT metadata ->> '$.profiler', metadata ->> '$.nsys.EXPORT_SCHEMA_VERSION' FROM trace")
    check(rows(r)[1:] == [["nsys", version]], f"{base}: trace.metadata: profiler nsys, schema {version}")
    if "TARGET_INFO_GPU" in tables:
        want = [[str(i), n] for i, n in db.execute("SELECT id, name FROM TARGET_INFO_GPU ORDER BY id")]
        r = run([path], "SELECT id, name FROM device ORDER BY id")
        check(rows(r)[1:] == want, f"{base}: TARGET_INFO_GPU -> device rows ({rows(r)[1:]})")

# --- 2. the reports --------------------------------------------------------------------------
if len(paths) == 3:
    before, after, healthy = paths
    for rep in ("summary", "kernels", "timeline", "idle", "launch", "temporal", "overlap", "collectives", "ops",
                "health"):
        r = run([before, "--report", rep])
        check(r.returncode == 0 or (r.returncode == 1 and r.stderr.count("\n") == 1),
              f"--report {rep}: runs or says why in one line ({r.stderr.strip()[:160]})")
    for rep in ("diff", "diff_kernels"):
        r = run([before, "--diff", after, "--report", rep])
        check(r.returncode == 0 and len(rows(r)) > 1, f"--report {rep} between two exports ({r.stderr.strip()[:160]})")
    out = os.path.join(tmp, "nsys.db")
    r = run([before, "-o", out], "SELECT count(*) FROM event")
    r2 = run([out], "SELECT count(*) FROM event")
    check(r.returncode == 0 and r.stdout == r2.stdout, "saved with -o: the same rows")

    r = run([healthy, "--report", "ops"])
    # Without NVTX op ranges each launch call is its own counted row (TraceLens's rule for launches
    # with no op above them): the report runs, and names the call by what launched it, here
    # nothing (work_name: a runtime call is never an op name by itself).
    check(r.returncode == 0 and [row[0] for row in rows(r)[1:]] == ["(no op) > cudaLaunchKernel"],
          f"ops on an export without NVTX: the launch call's row ({rows(r)[1:2]})")
    r = run([before, "--html", os.path.join(tmp, "before.html")], "SELECT 1")
    check(r.returncode == 0 and os.path.getsize(os.path.join(tmp, "before.html")) > 0, "--html on an export")
    r = run([before], f".plot timeline {os.path.join(tmp, 'timeline.png')}")
    check(r.returncode == 0 and os.path.getsize(os.path.join(tmp, "timeline.png")) > 0, ".plot timeline on an export")

    # --- 3. a Kineto trace of the same kernels, compared by name -------------------------------
    db = export(healthy)
    events = []
    for name, start, end, dev, stream, corr in db.execute(
            "SELECT s.value, k.start, k.end, k.deviceId, k.streamId, k.correlationId "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"):
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": dev, "tid": stream,
                       "ts": start / 1000, "dur": (end - start) / 1000,
                       "args": {"device": dev, "stream": stream, "correlation": corr}})
    kineto = os.path.join(tmp, "healthy_kineto.json")
    with open(kineto, "w") as f:
        json.dump({"traceEvents": events}, f)
    r = run([kineto, "--diff", healthy, "--report", "diff_kernels"])
    table = rows(r)
    check(r.returncode == 0 and len(table) > 1, f"diff_kernels Kineto vs Nsight runs ({r.stderr.strip()[:160]})")
    head = table[0] if table else []
    want = {n for (n,) in db.execute("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                     "JOIN StringIds s ON s.id = k.demangledName")}
    same = all(row[head.index("main_count")] == row[head.index("other_count")]
               and row[head.index("main_mean_us")] == row[head.index("other_mean_us")]
               and float(row[head.index("speedup")]) == 1.0 for row in table[1:]) if "speedup" in head else False
    check(same and {row[0] for row in table[1:]} == want,
          f"diff_kernels: each kernel name on both sides, same count and mean, speedup 1 ({len(table) - 1} names)")

# --- 4. other schema versions, no kernel table ----------------------------------------------------
odd = sqlite_file("odd_schema.sqlite", """
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'k1'), (2, 'cudaLaunchKernel_v7000');
CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '4.0.0');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, demangledName INT, correlationId INT, newColumn INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 3500, 1, 7, 0), (4000, 4000, 1, 8, 0), (5000, 6000, 99, 9, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (500, 900, 281477392629904, 7, 2);
CREATE TABLE CUPTI_ACTIVITY_KIND_OVERHEAD(start INT, end INT);
""")
r = run([odd], "SELECT kind, name, ts, dur, pid, tid FROM event ORDER BY ts")
check(rows(r)[1:] == [["runtime", "cudaLaunchKernel", "500", "400", "144", "144"],
                      ["kernel", "k1", "1000", "2500", "", "", ], ["kernel", "k1", "4000", "0", "", ""],
                      ["kernel", "unknown_kernel", "5000", "1000", "", ""]],
      f"schema 4.0 export: the rows its known columns give ({rows(r)[1:]}; {r.stderr.strip()[:160]})")
r = run([odd], """SELECT "check" FROM health WHERE "check" LIKE 'nsys%' ORDER BY 1""")
check([x[0] for x in rows(r)[1:]] == ["nsys_columns_missing", "nsys_missing_name", "nsys_no_gpu_info",
                                      "nsys_schema_unknown", "nsys_tables_not_read"],
      f"what was skipped is in health ({rows(r)[1:]})")
r = run([odd], "SELECT count(*) FROM launch")
check(rows(r)[1:] == [["1"]], "cudaLaunchKernel_v7000 -> cudaLaunchKernel, linked by correlationId")
# Another export's habits: kernels named only by mangledName, no ENUM_* or TARGET_INFO_GPU tables,
# NVTX text through textId, a named domain, an NVTXT range, a range never ended, a push record of
# its own (type 35), emit_nvtx forward / backward ranges on two threads (seq 5) and a legacy
# "stashed seq" backward range. Times in ns; threads: (pid 7 << 24 | tid).
t_main, t_bwd = (7 << 24) | 7, (7 << 24) | 8
habits = sqlite_file("habits.sqlite", f"""
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, '_Z4gemmv'), (2, 'step text'), (3, 'cudaLaunchKernel_v7000');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        mangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 7, 1, 1, {7 << 24});
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        bytes INT, copyKind INT);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (2500, 2600, 0, 7, 2, 64, 1);
CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, text TEXT, textId INT, globalTid INT, domainId INT);
INSERT INTO NVTX_EVENTS VALUES
  (0, NULL, 75, 'my_domain', NULL, {t_main}, 3),
  (100, 9000, 59, NULL, 2, {t_main}, 0),
  (200, 900, 59, 'in domain', NULL, {t_main}, 3),
  (300, 800, 70, 'nvtxt range', NULL, {t_main}, 0),
  (400, NULL, 60, 'never ended', NULL, {t_main}, 0),
  (450, NULL, 35, 'old push', NULL, {t_main}, 0),
  (500, 700, 59, 'aten::mul, seq = 5, op_id = 1, sizes = [[2, 3], [2, 3]]', NULL, {t_main}, 0),
  (3000, 3500, 59, 'MulBackward0, seq = 5, op_id = 2', NULL, {t_bwd}, 0),
  (4000, 4500, 59, 'AddBackward0, stashed seq = 9', NULL, {t_bwd}, 0);
""")
r = run([habits], "SELECT kind, name, ts, dur, tid, seq, args ->> '$.domain' FROM event ORDER BY ts, kind")
check(rows(r)[1:] == [["annotation", "step text", "100", "8900", "7", "", ""],
                      ["annotation", "in domain", "200", "700", "7", "", "my_domain"],
                      ["annotation", "nvtxt range", "300", "500", "7", "", ""],
                      ["cpu_op", "aten::mul", "500", "200", "7", "5", ""],
                      ["kernel", "_Z4gemmv", "1000", "1000", "7", "", ""],
                      ["memcpy", "Memcpy Host-to-Device", "2500", "100", "7", "", ""],
                      ["cpu_op", "MulBackward0", "3000", "500", "8", "5", ""],
                      ["cpu_op", "AddBackward0", "4000", "500", "8", "9", ""]],
      f"another export's habits: rows by hand ({rows(r)[1:]}; {r.stderr.strip()[:160]})")
# PyTorch's rule (docs/schema.md): a backward op's fwd is the last forward op with its seq.
r = run([habits], "SELECT b.name, f.name FROM event b LEFT JOIN event f ON f.uid = b.fwd "
                  "WHERE b.kind = 'cpu_op' ORDER BY b.ts")
check(rows(r)[1:] == [["aten::mul", ""], ["MulBackward0", "aten::mul"], ["AddBackward0", ""]],
      f"emit_nvtx backward ranges: fwd from seq ({rows(r)[1:]})")
r = run([habits], """SELECT "check", detail FROM health WHERE "check" LIKE 'nsys%' ORDER BY 1""")
got = {x[0]: x[1] for x in rows(r)[1:]}
check(set(got) == {"nsys_no_gpu_info", "nsys_nvtx_unclosed", "nsys_nvtx_not_read"}
      and "1 NvtxPushRange" in got.get("nsys_nvtx_not_read", "") and "1 NVTX ranges" in got.get("nsys_nvtx_unclosed", ""),
      f"the unended range, the push record and the missing GPU table in health ({got})")

# The reader selects only the columns it reads: a covering index must not reorder the rows (the
# table's stored order, as SELECT * reads it), and a known table that is a view is still read.
viewed = sqlite_file("viewed.sqlite", f"""
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel_v7000');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, demangledName INT, correlationId INT);
CREATE INDEX covering ON CUPTI_ACTIVITY_KIND_KERNEL(demangledName, start, end, correlationId);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (3000, 3500, 1, 7), (1000, 2000, 1, 8);
CREATE TABLE rt(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
INSERT INTO rt VALUES (500, 900, {t_main}, 7, 2);
CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME AS SELECT * FROM rt;
""")
r = run([viewed], "SELECT kind, ts, correlation FROM event ORDER BY uid")
check(rows(r)[1:] == [["kernel", "3000", "7"], ["kernel", "1000", "8"], ["runtime", "500", "7"]],
      f"stored order despite a covering index; a view read ({rows(r)[1:]}; {r.stderr.strip()[:160]})")

# --- 5. other exports' habits (a reviewer's variants, made here) ----------------------------------
def make(name, script):
    return sqlite_file(name, """
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel_v7000'), (3, 'cudaGraphLaunch_v10000'),
                             (4, 'cudaEventSynchronize_v3020');
""" + script)


p1, p2 = (7 << 24) | 7, (8 << 24) | 8  # threads of processes 7 and 8
# Graph-level CUDA graph tracing (nsys's default --cuda-graph-trace=graph): one eager kernel (1 µs)
# and two cudaGraphLaunch calls whose execution is only in GRAPH_TRACE (9 µs each). GPU busy time by
# hand: 1000 + 9000 + 9000 = 19000 ns.
graphs = make("graph_level.sqlite", f"""
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 3000, 0, 7, 1, 1, {7 << 24});
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE(start INT, end INT, deviceId INT, contextId INT, streamId INT,
                                             correlationId INT, globalPid INT, graphId INT, graphExecId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (10500, 19500, 0, 1, 7, 101, {7 << 24}, 12, 1),
                                                   (20500, 29500, 0, 1, 7, 102, {7 << 24}, 12, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1200, 1300, {p1}, 1, 2), (10000, 10100, {p1}, 101, 3),
                                               (20000, 20100, {p1}, 102, 3);
""")
r = run([graphs], "SELECT g.name, g.ts, g.dur, c.name FROM launch l JOIN event g ON g.uid = l.gpu "
                  "JOIN event c ON c.uid = l.runtime WHERE g.kind = 'kernel' ORDER BY g.ts")
check(rows(r)[1:] == [["k", "2000", "1000", "cudaLaunchKernel"],
                      ["CUDA graph 12", "10500", "9000", "cudaGraphLaunch"],
                      ["CUDA graph 12", "20500", "9000", "cudaGraphLaunch"]],
      f"graph-level trace: each graph launch one kernel row linked to its cudaGraphLaunch ({rows(r)[1:]})")
r = run([graphs, "--report", "summary"])
table = rows(r)
busy = table[1][table[0].index("gpu_busy_ms")] if len(table) > 1 and "gpu_busy_ms" in table[0] else None
check(busy == "0.019", f"summary: GPU busy 0.019 ms by hand ({busy})")
r = run([graphs], """SELECT "check", count, detail FROM health WHERE "check" LIKE 'nsys%'""")
got = {x[0]: x for x in rows(r)[1:]}
check("nsys_graph_level_trace" in got and got["nsys_graph_level_trace"][1] == "2"
      and "--cuda-graph-trace=node" in got["nsys_graph_level_trace"][2] and "nsys_tables_not_read" not in got,
      f"health says the graphs' kernels were traced at graph level and how to get them ({got})")

# Only graph replays captured (no eager kernel: nsys makes no KERNEL table): the export is read, not
# refused, its graph rows the kernels.
graph_only = make("graph_only.sqlite", f"""
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE(start INT, end INT, deviceId INT, contextId INT, streamId INT,
                                             correlationId INT, globalPid INT, graphId INT, graphExecId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (10500, 19500, 0, 1, 7, 101, {7 << 24}, 12, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10000, 10100, {p1}, 101, 3);
""")
r = run([graph_only], "SELECT kind, name, ts, dur FROM event ORDER BY ts", "SELECT count(*) FROM launch")
check(r.returncode == 0 and rows(r)[1:] == [["runtime", "cudaGraphLaunch", "10000", "100"],
                                            ["kernel", "CUDA graph 12", "10500", "9000"], ["count(*)"], ["1"]],
      f"an export of graph replays alone loads, linked ({rows(r)[1:]}; {r.stderr.strip()[:160]})")

# CUDA_VISIBLE_DEVICES: ranks 7 and 8 each given one GPU of a 3-GPU machine both write deviceId 0;
# TARGET_INFO_CUDA_DEVICE says rank 7's CUDA device 0 is GPU 0 and rank 8's is GPU 1 (by hand: the
# rows of process 8 on device 1, its own number kept as "cuda device"; every GPU of the machine a
# device row, as before). A row of process 9, which the table does not list, and one of no process
# keep their numbers, counted: another process's mapping is not theirs.
visible = make("visible_devices.sqlite", f"""
CREATE TABLE TARGET_INFO_GPU(id INT, name TEXT);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3'), (1, 'NVIDIA A100-SXM4-80GB'), (2, 'NVIDIA L4');
CREATE TABLE TARGET_INFO_CUDA_DEVICE(gpuId INT, cudaId INT, pid INT, uuid TEXT, numMultiprocessors INT);
INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 7, 'GPU-a', 132), (1, 0, 8, 'GPU-b', 108);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 3000, 0, 7, 1, 1, {7 << 24}), (2500, 3500, 0, 7, 1, 1, {8 << 24}),
                                              (4000, 5000, 0, 7, 2, 1, {7 << 24}), (6000, 7000, 0, 7, 3, 1, {9 << 24}),
                                              (7500, 7600, 0, 7, 5, 1, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        bytes INT, copyKind INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (8000, 9000, 0, 7, 4, 1024, 1, {8 << 24});
""")
r = run([visible], """SELECT kind, ts, device, pid, args ->> '$."cuda device"' FROM event WHERE kind IN ('kernel', 'memcpy')
                      ORDER BY ts""", "SELECT id, name FROM device ORDER BY id",
        """SELECT "check", count FROM health WHERE "check" = 'nsys_device_unmapped'""")
check(rows(r)[1:] == [["kernel", "2000", "0", "0", ""], ["kernel", "2500", "1", "1", "0"], ["kernel", "4000", "0", "0", ""],
                      ["kernel", "6000", "0", "0", ""], ["kernel", "7500", "0", "0", ""],
                      ["memcpy", "8000", "1", "1", "0"],
                      ["id", "name"], ["0", "NVIDIA H100 80GB HBM3"], ["1", "NVIDIA A100-SXM4-80GB"], ["2", "NVIDIA L4"],
                      ["check", "count"], ["nsys_device_unmapped", "2"]],
      f"each process's CUDA device read as its GPU ({rows(r)[1:]}; {r.stderr.strip()[:160]})")
r = run([visible], "SELECT count(*) FROM event a JOIN event b ON a.device = b.device AND a.stream = b.stream AND "
                   "a.uid < b.uid AND b.ts < a.ts + a.dur AND a.ts < b.ts + b.dur WHERE a.kind = 'kernel' AND b.kind = 'kernel'")
check(rows(r)[1:] == [["0"]], f"no two kernels overlap on one device's stream (the ranks' did on device 0: {rows(r)[1:]})")
# HTA's memory kinds from Nsight's copy names ("Memcpy Host-to-Device" is HtoD, not "Memcpy Host").
r = run([visible, "--report", "memory_bw"])
check([x[1] for x in rows(r)[1:]] == ["Memcpy HtoD"], f"memory_bw: the copy's kind ({rows(r)[1:]})")

# An NVTX table without eventType: its records counted as not read, said in words (not NULL's sentinel).
no_type = make("nvtx_no_type.sqlite", f"""
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 3000, 0, 7, 1, 1, {7 << 24});
CREATE TABLE NVTX_EVENTS(start INT, end INT, text TEXT, globalTid INT);
INSERT INTO NVTX_EVENTS VALUES (1000, 4000, 'step', {p1});
""")
r = run([no_type], """SELECT detail FROM health WHERE "check" = 'nsys_nvtx_not_read'""")
check(rows(r)[1:] == [["NVTX records of types tlsql does not map to events: 1 without an eventType"]],
      f"NVTX records without an eventType ({rows(r)[1:]})")

# Exports of early 2021 name their GPUs in TARGET_INFO_CUDA_GPU, keyed by the deviceId the GPU tables
# write, with CUDA's property names (a public nsys-stats query template of that version joins so).
early = make("early_2021.sqlite", f"""
CREATE TABLE TARGET_INFO_CUDA_GPU(deviceId INT, name TEXT, numMultiprocessors INT, numThreadsPerWarp INT,
                                  computeCapabilityMajor INT, computeCapabilityMinor INT, coreClockRate INT);
INSERT INTO TARGET_INFO_CUDA_GPU VALUES (0, 'NVIDIA A100-SXM4-80GB', 108, 32, 8, 0, 1410000000),
                                        (0, 'NVIDIA A100-SXM4-80GB', 108, 32, 8, 0, 1410000000);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 3000, 0, 7, 1, 1, {7 << 24});
""")
r = run([early], "SELECT id, name, sm_count, compute_capability FROM device",
        """SELECT count(*) FROM health WHERE "check" = 'nsys_no_gpu_info'""")
check(rows(r)[1:] == [["0", "NVIDIA A100-SXM4-80GB", "108", "8.0"], ["count(*)"], ["0"]],
      f"TARGET_INFO_CUDA_GPU names the devices ({rows(r)[1:]}; {r.stderr.strip()[:160]})")

# A graph row and a kernel row without an end: dur NULL, counted (nsys_no_end, 2 rows by hand).
open_ended = make("no_end.sqlite", f"""
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 3000, 0, 7, 1, 1, {7 << 24}), (4000, NULL, 0, 7, 2, 1, {7 << 24});
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE(start INT, end INT, deviceId INT, contextId INT, streamId INT,
                                             correlationId INT, globalPid INT, graphId INT, graphExecId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (10500, NULL, 0, 1, 7, 101, {7 << 24}, 12, 1);
""")
r = run([open_ended], "SELECT count(*) FILTER (WHERE dur IS NULL) FROM event WHERE kind = 'kernel'",
        """SELECT count FROM health WHERE "check" = 'nsys_no_end'""")
check(rows(r)[1:] == [["2"], ["count"], ["2"]], f"rows without an end: dur NULL, counted ({rows(r)}; {r.stderr.strip()[:160]})")

# emit_nvtx texts of other PyTorch versions and habits: ranges before op ids (seq / sizes, a bare
# op name, a "stashed seq" backward), a custom autograd.Function (MyReLU, its MyReLUBackward with
# no digits), FSDP's forward hook, record_function names with ", " and spaces. Expected rows by hand
# from the texts (PyTorch's getNvtxStr): name up to emit_nvtx's first field, cpu_op unless a user range.
texts = make("emit_nvtx_versions.sqlite", f"""
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 2500, 0, 7, 1, 1, {7 << 24});
CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, text TEXT, textId INT, globalTid INT, domainId INT);
INSERT INTO NVTX_EVENTS VALUES
  (100, 900, 59, 'aten::add, seq = 12, sizes = [[2, 3], [3]]', NULL, {p1}, 0),
  (1000, 1500, 59, 'aten::mul, seq = 13', NULL, {p1}, 0),
  (1600, 1700, 59, 'aten::empty', NULL, {p1}, 0),
  (1800, 1900, 59, 'epoch 1, seq = 3', NULL, {p1}, 0),
  (2000, 2900, 59, 'my block, part 1, op_id = 3', NULL, {p1}, 0),
  (2100, 2200, 59, '## forward ##, op_id = 9', NULL, {p1}, 0),
  (2300, 2400, 59, 'my block, part 2', NULL, {p1}, 0),
  (3000, 3900, 59, 'MyReLU, seq = 20, op_id = 30', NULL, {p1}, 0),
  (3100, 3800, 59, 'aten::relu, seq = 20, op_id = 31, sizes = [[4]], input_op_ids = [(30,0)]', NULL, {p1}, 0),
  (5000, 5500, 59, 'MulBackward0, stashed seq = 13', NULL, {p1}, 0),
  (6000, 6900, 59, 'autograd::engine::evaluate_function: MyReLUBackward, seq = 20, op_id = 40', NULL, {p1}, 0),
  (6100, 6800, 59, 'MyReLUBackward, seq = 20, op_id = 41', NULL, {p1}, 0),
  (7000, 7100, 59, 'RegisterPostBackwardFunction, seq = 21, op_id = 50', NULL, {p1}, 0);
""")
r = run([texts], "SELECT kind, name, seq, args ->> '$.op_id', args -> '$.\"Input Dims\"' FROM event "
                 "WHERE kind IN ('cpu_op', 'annotation') ORDER BY ts")
check(rows(r)[1:] == [["cpu_op", "aten::add", "12", "", "[[2,3],[3]]"],
                      ["cpu_op", "aten::mul", "13", "", ""],
                      ["cpu_op", "aten::empty", "", "", ""],
                      ["annotation", "epoch 1, seq = 3", "", "", ""],
                      ["annotation", "my block, part 1", "", "3", ""],
                      ["annotation", "## forward ##", "", "9", ""],
                      ["annotation", "my block, part 2", "", "", ""],
                      ["cpu_op", "MyReLU", "20", "30", ""],
                      ["cpu_op", "aten::relu", "20", "31", "[[4]]"],
                      ["cpu_op", "MulBackward0", "13", "", ""],
                      ["cpu_op", "autograd::engine::evaluate_function: MyReLUBackward", "20", "40", ""],
                      ["cpu_op", "MyReLUBackward", "20", "41", ""],
                      ["cpu_op", "RegisterPostBackwardFunction", "21", "50", ""]],
      f"emit_nvtx texts of other versions: rows by hand ({rows(r)[1:]})")
# Backward ranges have a fwd (PyTorch's rule: the last forward op with their seq); forward ones none.
r = run([texts], "SELECT b.name, f.name FROM event b LEFT JOIN event f ON f.uid = b.fwd "
                 "WHERE b.kind = 'cpu_op' AND b.seq IS NOT NULL ORDER BY b.ts")
check(rows(r)[1:] == [["aten::add", ""], ["aten::mul", ""], ["MyReLU", ""], ["aten::relu", ""],
                      ["MulBackward0", "aten::mul"],
                      ["autograd::engine::evaluate_function: MyReLUBackward", "aten::relu"],
                      ["MyReLUBackward", "aten::relu"], ["RegisterPostBackwardFunction", ""]],
      f"custom Functions' backward ranges and old stashed seqs are backward ({rows(r)[1:]})")

# Two processes: each numbers its NVTX domains from 1; sync rows with CUPTI's no-stream value
# (0xFFFFFFFF, as nsys stores it) and -1; tables tlsql does not read, named in health.
procs = make("two_procs.sqlite", f"""
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 2500, 0, 7, 1, 1, {7 << 24}), (2000, 2600, 1, 7, 1, 1, {8 << 24});
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1200, 1300, {p1}, 1, 2), (1250, 1350, {p2}, 1, 2),
                                               (9000, 9500, {p1}, 5, 4);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                                 syncType INT, globalPid INT);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (9100, 9400, 0, 4294967295, 5, 1, {7 << 24}),
                                                       (9600, 9700, 0, -1, 6, 4, {7 << 24});
CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, text TEXT, textId INT, globalTid INT, domainId INT);
INSERT INTO NVTX_EVENTS VALUES (10, NULL, 75, 'NCCL', NULL, {p1}, 1), (12, NULL, 75, 'MyLib', NULL, {p2}, 1),
  (1000, 1500, 59, 'nccl range', NULL, {p1}, 1), (1000, 1500, 59, 'mylib range', NULL, {p2}, 1);
CREATE TABLE CUBLAS_EVENTS(start INT, end INT, globalTid INT, nameId INT);
CREATE TABLE GPU_METRICS(timestamp INT, typeId INT, metricId INT, value INT);
CREATE TABLE OPENMP_EVENT_KIND_PARALLEL(start INT, end INT, globalTid INT);
CREATE TABLE NVVIDEO_ENCODER_API(start INT, end INT);
CREATE TABLE ThreadNames(nameId INT, priority INT, globalTid INT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INT);
""")
r = run([procs], "SELECT name, pid, args ->> '$.domain' FROM event WHERE kind = 'annotation' ORDER BY pid")
check(rows(r)[1:] == [["nccl range", "7", "NCCL"], ["mylib range", "8", "MyLib"]],
      f"NVTX domains by process ({rows(r)[1:]})")
r = run([procs], "SELECT name, stream, tid FROM event WHERE kind = 'sync' ORDER BY ts")
check(rows(r)[1:] == [["Event sync", "-1", "-1"], ["Context sync", "-1", "-1"]],
      f"no-stream sync rows: stream -1 as Kineto writes it ({rows(r)[1:]})")
r = run([procs], "SELECT r.pid, g.device FROM launch l JOIN event r ON r.uid = l.runtime "
                 "JOIN event g ON g.uid = l.gpu WHERE g.kind = 'kernel' ORDER BY 1")
check(rows(r)[1:] == [["7", "0"], ["8", "1"]], f"each process's launch links its own kernel ({rows(r)[1:]})")
r = run([procs], """SELECT detail FROM health WHERE "check" = 'nsys_tables_not_read'""")
check(rows(r)[1:] == [["tables of the export tlsql does not map to events: CUBLAS_EVENTS, GPU_METRICS, "
                       "NVVIDEO_ENCODER_API, OPENMP_EVENT_KIND_PARALLEL"]],
      f"every table of events not read is named, metadata tables are not ({rows(r)[1:]})")
# An older several-process export whose kernel table has no globalPid: the ids cannot be scoped on
# the GPU side, so they are kept as written on both (each kernel is linked), said in health.
old = make("old_no_globalpid.sqlite", f"""
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 2500, 0, 7, 1, 1), (2000, 2600, 1, 7, 2, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1200, 1300, {p1}, 1, 2), (1250, 1350, {p2}, 2, 2);
""")
r = run([old], "SELECT r.pid, g.device FROM launch l JOIN event r ON r.uid = l.runtime "
               "JOIN event g ON g.uid = l.gpu ORDER BY 1")
check(rows(r)[1:] == [["7", "0"], ["8", "1"]], f"no globalPid on kernels: ids as written, linked ({rows(r)[1:]})")
r = run([old], """SELECT detail FROM health WHERE "check" = 'nsys_correlation_unscoped'""")
check(len(rows(r)) == 2 and "CUPTI_ACTIVITY_KIND_KERNEL" in rows(r)[1][0], f"said in health ({rows(r)[1:]})")

# --- 6. tables read ahead (Rows::read_ahead, with a second thread) --------------------------------
# 5,000 kernels, runtime calls and NVTX ranges: batches of 2,048 rows, the last one partial. Kernel
# i runs [10^6 + 1000 i, + 500 + i) ns, launched by call i at 1000 i; NVTX range i spans call i.
# One load with --threads 1 (read in the scan) and one with --threads 2 (read ahead): the same rows.
n = 5000
big = make("read_ahead.sqlite", """
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, deviceId INT, streamId INT, correlationId INT,
                                        demangledName INT, gridX INT, registersPerThread INT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
CREATE TABLE NVTX_EVENTS(start INT, end INT, eventType INT, text TEXT, textId INT, globalTid INT, domainId INT);
""")
c = sqlite3.connect(big)
c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,7,?,1,?,?)",
              [(10**6 + 1000 * i, 10**6 + 1000 * i + 500 + i, i + 1, i % 7 + 1, 32.5 if i == 4321 else 32)
               for i in range(n)])
c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,2)",
              [(1000 * i + 100, 1000 * i + 200, p1, i + 1) for i in range(n)])
c.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,59,?,NULL,?,0)",
              [(1000 * i, 1000 * i + 300, f"aten::mm, op_id = {i}", p1) for i in range(n)])
# Then 8 ranges with 1 MB texts: batches end at 4 MB of text, not 2,048 rows.
c.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,59,?,NULL,?,0)",
              [(10**7 + 1000 * k, 10**7 + 1000 * k + 10, "x" * 10**6 + str(k), p1) for k in range(8)])
c.commit()
c.close()
q = ("SELECT * FROM event ORDER BY uid", "SELECT * FROM health ORDER BY 2")
one, two = run(["--threads", "1", big], *q), run(["--threads", "2", big], *q)
check(one.returncode == 0 and one.stdout == two.stdout and one.stdout.count("\n") > 3 * n,
      f"read ahead: --threads 2 gives --threads 1's rows and health ({one.stdout.count(chr(10))} lines; {two.stderr.strip()[:160]})")
# By hand: durations 500 + i, summed 500 n + n (n - 1) / 2; every call links its kernel; a real in
# an integer column reads as no integer (row 4321's registers: no arg), as in the scan.
r = run(["--threads", "2", big], "SELECT count(*), sum(dur) FROM event WHERE kind = 'kernel'",
        "SELECT count(*) FROM launch_link", "SELECT count(*) FROM event WHERE kind = 'cpu_op' AND name = 'aten::mm'",
        "SELECT count(*) FROM event WHERE kind = 'kernel' AND args ->> '$.\"registers per thread\"' IS NULL",
        "SELECT group_concat(length(name) || substr(name, -1), ' ') FROM event WHERE kind = 'annotation'")
check([x for x in rows(r) if x[0][0].isdigit()] == [[str(n), str(500 * n + n * (n - 1) // 2)], [str(n)], [str(n)], ["1"],
                                                   [" ".join(f"1000001{k}" for k in range(8))]],
      f"read ahead: {n} kernels, their ns, links and op ranges by hand ({rows(r)})")
# A page of the file made unreadable (the tables' pages follow their roots in insert order: this one
# lies in the kernel table's, past its first batch): the same one-line error, naming the same table
# and row, read ahead or not.
bad = os.path.join(tmp, "read_ahead_corrupt.sqlite")
with open(big, "rb") as f:
    data = bytearray(f.read())
c = export(big)
page = c.execute("PRAGMA page_size").fetchone()[0]
root = c.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'NVTX_EVENTS'").fetchone()[0]
c.close()
leaf = root + 20  # (the roots were made together; the tables' pages follow them in insert order)
data[(leaf - 1) * page:leaf * page] = b"\xff" * page
with open(bad, "wb") as f:
    f.write(data)
one, two = run(["--threads", "1", bad], "SELECT 1"), run(["--threads", "2", bad], "SELECT 1")
m = re.search(r"table (\w+), row (\d+): cannot read: ", one.stderr)
check(one.returncode == 1 and two.returncode == 1 and one.stderr == two.stderr and one.stderr.count("\n") == 1 and
      m and int(m[2]) > 2048,
      f"read ahead: a corrupt page, the same error ({one.stderr.strip()[:160]} / {two.stderr.strip()[:160]})")

# No kernel table, refused in one line as an export: one with a session table, and one without NVTX
# or a session table (its metadata and runtime calls only).
for name, tables in (("no_kernel.sqlite", "TARGET_INFO_SESSION_START_TIME(x INT)"),
                     ("no_kernel_runtime_only.sqlite", "META_DATA_EXPORT(name TEXT, value TEXT); CREATE TABLE "
                      "CUPTI_ACTIVITY_KIND_RUNTIME(start INT, end INT, globalTid INT, correlationId INT)")):
    r = run([sqlite_file(name, f"CREATE TABLE StringIds(id INTEGER, value TEXT); CREATE TABLE {tables};")],
            "SELECT 1")
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and "without a CUPTI_ACTIVITY_KIND_KERNEL table" in r.stderr,
          f"{name}: refused in one line ({r.stderr.strip()[:200]})")

# A kernel whose demangledName is NULL or an id StringIds lacks is named by its shortName, and
# that is counted: two of three kernels here.
fallback = sqlite_file("name_fallback.sqlite", """
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'void gemm<float>(float*)'), (2, 'gemm');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, demangledName INT, shortName INT, correlationId INT);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 1, 2, 1), (3000, 4000, 99, 2, 2), (5000, 6000, NULL, 2, 3);
""")
r = run([fallback], "SELECT name FROM event WHERE kind = 'kernel' ORDER BY ts")
check([x[0] for x in rows(r)[1:]] == ["void gemm<float>(float*)", "gemm", "gemm"],
      f"demangledName, else shortName ({rows(r)[1:]}; {r.stderr.strip()[:160]})")
r = run([fallback], """SELECT count FROM health WHERE "check" = 'nsys_name_fallback'""")
check(rows(r)[1:] == [["2"]], f"the two named by their shortName, in health ({rows(r)[1:]})")
finish()
