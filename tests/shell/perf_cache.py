#!/usr/bin/env python3
"""The perf table a saved database carries (udf/perf/perf_cache.h): reopening reads it instead of
recomputing, gives the loaded trace's numbers, and is used only while it certainly describes the
file. The stored format is read and rewritten here with Python's zlib (raw deflate) to prove which
path answered: a planted value shows through only while the table is valid.
usage: perf_cache.py TLSQL DATA_DIR WORK_DIR"""
import csv, io, os, shutil, sqlite3, struct, subprocess, sys, zlib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from fifo import new_fifo, open_when_read  # noqa: E402

tlsql, data, work = sys.argv[1:4]
work = os.path.join(work, "perf_cache")
os.makedirs(work, exist_ok=True)
trace = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
saved = os.path.join(work, "bert.db")
if os.path.exists(saved):
    os.remove(saved)


def run_args(args, *sqls):
    cmd = [tlsql, "-q", *args, "--csv"]
    for q in sqls:
        cmd += ["-c", q]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{os.path.basename(args[0])}: {sqls[-1][:50]}: {r.stderr.strip()[:200]}")
    return r.stdout


def run(target, sql):
    r = subprocess.run([tlsql, target, "--csv", "-c", sql], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{os.path.basename(target)}: {sql[:50]}: {r.stderr.strip()[:200]}")
    return r.stdout


r = subprocess.run([tlsql, "-q", trace, "-o", saved, "-c", "SELECT 1"], capture_output=True, text=True)
check(r.returncode == 0, f"save: {r.stderr.strip()[:200]}")

# A plain SQLite file: Python reads the table without tlsql.
con = sqlite3.connect(saved)
rows = con.execute("SELECT rules, first_uid, rows, raw_size, data FROM tlsql_perf").fetchall()
check(len(rows) == 1, f"one stored perf table ({len(rows)})")
rules, first_uid, n, raw_size, blob = rows[0]
raw = zlib.decompress(blob, -15)
check(len(raw) == raw_size, f"the blob inflates to raw_size ({len(raw)} vs {raw_size})")
# Layout (perf_cache.cpp): rows u64, first_uid i64, then gpu_ns: count u64 + rows x i64, ...
hdr_rows, hdr_first, count = struct.unpack_from("<QqQ", raw, 0)
check(hdr_rows == n and hdr_first == first_uid and count == n, "header: rows, first uid, gpu_ns count")
events = int(con.execute("SELECT count(*) FROM event").fetchone()[0])
check(n == events, f"one entry per event ({n} vs {events})")

# Every perf number of every event: loaded = saved (stored table) = saved without it (recomputed).
ALL = "SELECT * FROM perf_rows() ORDER BY uid"
loaded = run(trace, ALL)
check(loaded.count("\n") == events + 1, "perf_rows has every event")
check(run(saved, ALL) == loaded, "the stored table answers as the loaded trace")

# Which path answered: plant a GPU time the trace does not have in the stored table.
kernel = int(con.execute("SELECT min(uid) FROM event WHERE kind = 'kernel'").fetchone()[0])
truth = run(trace, f"SELECT gpu_time({kernel})").split()[-1]
planted = bytearray(raw)
struct.pack_into("<q", planted, 24 + 8 * (kernel - first_uid), 123456789)


def store(data_bytes, rules_text=rules):
    c = zlib.compressobj(1, zlib.DEFLATED, -15)
    con.execute("UPDATE tlsql_perf SET data = ?, raw_size = ?, rules = ?",
                (c.compress(bytes(data_bytes)) + c.flush(), len(data_bytes), rules_text))
    con.commit()


def gpu_time():
    return run(saved, f"SELECT gpu_time({kernel})").split()[-1]


store(planted)
check(gpu_time() == "123456789", "reopening reads the stored table (the planted value shows)")
store(planted, "other rules")
check(gpu_time() == truth, f"a table made by other perf rules is recomputed ({truth})")
store(planted)
# Any later schema change (CREATE INDEX, ...) makes it stale.
backup = os.path.join(work, "bert_planted.db")
con.close()
shutil.copyfile(saved, backup)
con = sqlite3.connect(saved)
con.execute("CREATE INDEX by_path ON trace(path)")
con.commit()
check(gpu_time() == truth, "after a schema change the table is recomputed")
con.close()
shutil.copyfile(backup, saved)
con = sqlite3.connect(saved)
check(gpu_time() == "123456789", "(planted again)")
# A change to the rows, by any program: the triggers drop the stored table.
con.execute("UPDATE event SET dur = dur + 1000, end = end + 1000 WHERE uid = ?", (kernel,))
con.commit()
check(con.execute("SELECT count(*) FROM tlsql_perf").fetchone()[0] == 0, "a change to event drops the stored table")
check(gpu_time() == str(int(truth) + 1000), "and the numbers follow the edited rows")
con.close()
shutil.copyfile(backup, saved)
con = sqlite3.connect(saved)
con.execute("DELETE FROM launch_link WHERE gpu = ?", (kernel,))
con.commit()
check(con.execute("SELECT count(*) FROM tlsql_perf").fetchone()[0] == 0, "so does a change to launch_link")

# Hostile stored tables: each is refused (the numbers are recomputed), never read out of bounds.
shutil.copyfile(backup, saved)
con.close()
con = sqlite3.connect(saved)
offset_model = 24 + 8 * n + 8  # the model array: count u64 + rows x u32
bad_model = bytearray(raw)
struct.pack_into("<I", bad_model, offset_model + 4 * (kernel - first_uid), 0x7FFFFFF0)
# The trace runs after the flags (count u64, then (first row u64, trace i32) each): one trace, one
# run from row 0. Its trace planted as one the file has no GPU for: the peaks then read none.
offset_runs = offset_model + 4 * n + 8 + n
runs, first_row, trace_id = struct.unpack_from("<QQi", raw, offset_runs)
check((runs, first_row) == (1, 0), f"one trace run from row 0 ({runs}, {first_row})")
peak = f"SELECT peak_tflops({kernel}) IS NOT NULL"
check(run(saved, peak).split()[-1] == "1", "the kernel has a peak")
planted_trace = bytearray(raw)
struct.pack_into("<i", planted_trace, offset_runs + 16, trace_id + 1000)
store(planted_trace)
check(run(saved, peak).split()[-1] == "0", "the peaks read the stored trace runs (a planted trace has no GPU)")
# Bad runs, each in a table that also holds the planted GPU time (which shows if one is read),
# each laid out so that only the check it names can refuse it.
run_bytes = 8 + 12 * runs  # the count and the one run
check(struct.unpack_from("<Q", raw, offset_runs + run_bytes)[0] == n, "the device column follows the runs")


def with_runs(*pairs, count=None):
    head = struct.pack("<Q", len(pairs) if count is None else count)
    body = b"".join(struct.pack("<Qi", first, trace) for first, trace in pairs)
    return planted[:offset_runs] + head + body + planted[offset_runs + run_bytes:]


bad_runs = [("no trace run", with_runs()), ("a first run after row 0", with_runs((1, trace_id))),
            ("runs not ascending", with_runs((0, trace_id), (0, trace_id))),
            ("a run past the rows", with_runs((0, trace_id), (n, trace_id))),
            ("more trace runs than rows", with_runs((0, trace_id), count=1 << 62))]
for what, payload in [("a model index past the models", bad_model), ("a truncated table", raw[: len(raw) // 2]),
                      ("trailing bytes", raw + b"\0"), ("a wrong row count", struct.pack("<Q", n + 1) + raw[8:])] + bad_runs:
    store(payload)
    check(gpu_time() == truth and run(saved, ALL) == loaded and run(saved, peak).split()[-1] == "1",
          f"{what}: recomputed, same numbers")
con.execute("UPDATE tlsql_perf SET data = x'00112233'")
con.commit()
check(gpu_time() == truth, "bytes that do not inflate: recomputed")
store(raw)
con.execute("UPDATE tlsql_perf SET raw_size = ?", (1 << 50,))  # a petabyte: refused before allocating
con.commit()
check(gpu_time() == truth, "a raw size the file cannot explain: recomputed")
con.close()

# Within one session a scalar perf function keeps the table it found last (perf_row) only while
# the schema it names holds the same database: another file attached under the same name (a
# handle SQLite may allocate at the same address), the same file changed, are seen at the next call.
other = os.path.join(work, "bert_other.db")
shutil.copyfile(backup, saved)
shutil.copyfile(backup, other)
con = sqlite3.connect(other)
other_planted = bytearray(raw)
struct.pack_into("<q", other_planted, 24 + 8 * (kernel - first_uid), 987654321)
c = zlib.compressobj(1, zlib.DEFLATED, -15)
con.execute("UPDATE tlsql_perf SET data = ?", (c.compress(bytes(other_planted)) + c.flush(),))
con.commit()
con.close()
session = run(saved, f"SELECT gpu_time({kernel}, 'x') FROM (SELECT 1) WHERE 0; "
                     f"ATTACH '{saved}' AS x; SELECT gpu_time({kernel}, 'x'); SELECT gpu_time({kernel}, 'X'); "
                     f"DETACH x; ATTACH '{other}' AS x; SELECT gpu_time({kernel}, 'x'); "
                     f"UPDATE x.event SET dur = dur + 1000, end = end + 1000 WHERE uid = {kernel}; "
                     f"SELECT gpu_time({kernel}, 'x'); DETACH x; SELECT gpu_time({kernel})").split()
answers = [v for v in session if v.lstrip("-").isdigit()]
check(answers == ["123456789", "123456789", "987654321", str(int(truth) + 1000), "123456789"],
      f"one session: each call answers for the database the schema holds then ({answers})")
# A change by another process to an attached file that the calling statement does not read: the
# next call sees it (SQLite's data version counter reads the file only when a read transaction
# starts; data_version in src/event_table.h starts one). The session waits on `.read` of a FIFO
# while this process changes the file.
shutil.copyfile(backup, saved)
script = new_fifo(os.path.join(work, "script.sql"))
p = subprocess.Popen([tlsql, "-q", "--csv", "-c", f"ATTACH '{saved}' AS x", "-c", f"SELECT gpu_time({kernel}, 'x') AS g",
                      "-c", f".read {script}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
fd = open_when_read(script, p, 300)  # (once tlsql reads the script: the first call has answered)
if fd is not None:
    con = sqlite3.connect(saved)
    con.execute("UPDATE event SET dur = dur + 1000, end = end + 1000 WHERE uid = ?", (kernel,))
    con.commit()
    con.close()
    os.write(fd, f"SELECT gpu_time({kernel}, 'x') AS g;\n".encode())
    os.close(fd)
out, err = p.communicate(timeout=300)
answers = [v for v in out.split() if v.lstrip("-").isdigit()]
check(answers == ["123456789", str(int(truth) + 1000)],
      f"a file changed by another process between two calls: the second sees it ({answers}; {err.strip()[:200]})")
# A 'db:TOKEN' argument is resolved on every call: once a second attached file holds the token,
# the call fails (which file was meant is not known), as in a fresh session.
token = sqlite3.connect(backup).execute("SELECT token FROM tlsql_self").fetchone()[0]
twin = os.path.join(work, "bert_twin.db")
shutil.copyfile(backup, saved)
shutil.copyfile(backup, twin)
c = sqlite3.connect(twin)
c.execute("UPDATE tlsql_self SET token = 'other'")
c.commit()
c.close()
r = subprocess.run([tlsql, "-q", "--csv", "-c", f"ATTACH '{saved}' AS x", "-c", f"ATTACH '{twin}' AS y", "-c",
                    f"SELECT gpu_time({kernel}, 'db:{token}')", "-c", f"UPDATE y.tlsql_self SET token = '{token}'",
                    "-c", f"SELECT gpu_time({kernel}, 'db:{token}')"], capture_output=True, text=True, timeout=300)
check("123456789" in r.stdout and r.returncode != 0 and "x and y" in r.stderr,
      f"a token two files then hold: refused at the next call ({r.stdout.split()}; {r.stderr.strip()[:200]})")

# Saving a reopened database (a page copy) keeps a valid table; with the user's own models none is stored.
copy = os.path.join(work, "copy.db")
for p in (copy,):
    if os.path.exists(p):
        os.remove(p)
shutil.copyfile(backup, saved)
r = subprocess.run([tlsql, saved, "-c", f".save {copy}"], capture_output=True, text=True)
check(r.returncode == 0 and run(copy, f"SELECT gpu_time({kernel})").split()[-1] == "123456789",
      "a saved database saved again keeps its table (valid in the copy)")
# perf_tables(schema, ...) makes the named schemas' tables at once (a loaded trace's on a thread of
# its own) and keeps them for the queries after it: the same rows as each made when first read,
# loaded (a job) or saved (through SQL), on main and other; a schema named twice is made once.
both = [trace, "--diff", trace]
ROWS = "SELECT * FROM perf_rows('{}') ORDER BY uid"
for side in ("main", "other"):
    lazy = run_args(both, ROWS.format(side))
    made = run_args(both, f"SELECT perf_tables('main', 'other', 'main') AS n", ROWS.format(side))
    check(made.startswith("n\n2\n") and made[len("n\n2\n"):] == lazy and lazy.count("\n") > 1000,
          f"perf_tables('main', 'other', 'main'): 2 tables, then {side}'s rows as made lazily "
          f"({lazy.count(chr(10))} lines; {made[:20]!r})")
for target in ([saved, "--diff", trace], [trace, "--diff", saved]):
    check(run_args(target, "SELECT perf_tables('main', 'other') AS n").split() == ["n", "2"],
          f"perf_tables over {os.path.basename(target[0])} --diff {os.path.basename(target[2])}: 2")

# Markers (marker / marker_path): the array is stored only where some event is named "## ... ##"
# (fx_markers.json: "## fwd ##" above "## 3 ##"), and a stored array whose markers loop, which only
# a hand-made file can hold, is refused rather than walked forever.
def marker_offset(raw, n):
    """Where the marker array's count lies: after gpu_ns, model, flags, the trace runs, device and
    gpu_classes (perf_cache.cpp's order)."""
    at = 16 + 8 + 8 * n + 8 + 4 * n + 8 + n
    at += 8 + 12 * struct.unpack_from("<Q", raw, at)[0]
    return at + 8 + 4 * n + 8 + 2 * n


check(struct.unpack_from("<Q", raw, marker_offset(raw, n))[0] == 0, "no marker names (BERT): no marker array stored")
fx = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "fx_markers.json")
fx_saved = os.path.join(work, "fx.db")
if os.path.exists(fx_saved):
    os.remove(fx_saved)
MARKERS = "SELECT uid, marker(uid), marker_path(uid) FROM event ORDER BY uid"
r = subprocess.run([tlsql, "-q", fx, "-o", fx_saved, "--csv", "-c", MARKERS], capture_output=True, text=True, timeout=300)
check(r.returncode == 0 and "## fwd ## > ## 3 ##" in r.stdout, f"fx_markers: marker_path loaded ({r.stderr.strip()[:200]})")
fx_loaded = r.stdout
con = sqlite3.connect(fx_saved)
fx_n, fx_blob = con.execute("SELECT rows, data FROM tlsql_perf").fetchone()
fx_raw = bytearray(zlib.decompress(fx_blob, -15))
at = marker_offset(fx_raw, fx_n)
check(struct.unpack_from("<Q", fx_raw, at)[0] == fx_n, "marker names: one marker per row stored")
# Row 2 (aten::mm) has marker 1 ("## 3 ##"), whose marker is 0 ("## fwd ##"): plant 0 -> 2 -> 1 -> 0.
check(struct.unpack_from("<II", fx_raw, at + 8 + 4 * 1) == (0, 1), "rows 1 and 2: markers 0 and 1")
struct.pack_into("<I", fx_raw, at + 8, 2)
c = zlib.compressobj(1, zlib.DEFLATED, -15)
con.execute("UPDATE tlsql_perf SET data = ?", (c.compress(bytes(fx_raw)) + c.flush(),))
con.commit()
con.close()
r = subprocess.run([tlsql, fx_saved, "--csv", "-c", MARKERS], capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and r.stdout == fx_loaded, f"markers that loop: refused, recomputed ({r.stdout[-200:]!r})")
r = subprocess.run([tlsql, "-q", trace, "-c", "SELECT perf_tables('main', 'nope')"], capture_output=True, text=True,
                   timeout=300)
check(r.returncode == 1 and r.stderr.count("\n") == 1 and "nope" in r.stderr,
      f"perf_tables of a schema not attached: one line, exit 1 ({r.stderr.strip()[:200]})")
finish()
