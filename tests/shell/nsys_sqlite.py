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
odd = os.path.join(tmp, "odd_schema.sqlite")
if os.path.exists(odd):
    os.remove(odd)
c = sqlite3.connect(odd)
c.executescript("""
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
c.commit()
c.close()
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
habits = os.path.join(tmp, "habits.sqlite")
if os.path.exists(habits):
    os.remove(habits)
c = sqlite3.connect(habits)
t_main, t_bwd = (7 << 24) | 7, (7 << 24) | 8
c.executescript(f"""
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
c.commit()
c.close()
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
viewed = os.path.join(tmp, "viewed.sqlite")
if os.path.exists(viewed):
    os.remove(viewed)
c = sqlite3.connect(viewed)
c.executescript(f"""
CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel_v7000');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INT, end INT, demangledName INT, correlationId INT);
CREATE INDEX covering ON CUPTI_ACTIVITY_KIND_KERNEL(demangledName, start, end, correlationId);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (3000, 3500, 1, 7), (1000, 2000, 1, 8);
CREATE TABLE rt(start INT, end INT, globalTid INT, correlationId INT, nameId INT);
INSERT INTO rt VALUES (500, 900, {t_main}, 7, 2);
CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME AS SELECT * FROM rt;
""")
c.commit()
c.close()
r = run([viewed], "SELECT kind, ts, correlation FROM event ORDER BY uid")
check(rows(r)[1:] == [["kernel", "3000", "7"], ["kernel", "1000", "8"], ["runtime", "500", "7"]],
      f"stored order despite a covering index; a view read ({rows(r)[1:]}; {r.stderr.strip()[:160]})")

nokernel = os.path.join(tmp, "no_kernel.sqlite")
if os.path.exists(nokernel):
    os.remove(nokernel)
c = sqlite3.connect(nokernel)
c.executescript("CREATE TABLE StringIds(id INTEGER, value TEXT); CREATE TABLE TARGET_INFO_SESSION_START_TIME(x INT);")
c.close()
r = run([nokernel], "SELECT 1")
check(r.returncode == 1 and r.stderr.count("\n") == 1 and "without a CUPTI_ACTIVITY_KIND_KERNEL table" in r.stderr,
      f"no kernel table: refused in one line ({r.stderr.strip()[:200]})")
finish()
