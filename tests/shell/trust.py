#!/usr/bin/env python3
"""Traces and saved databases travel (bug reports, CI artifacts): opening one must never make tlsql
write a file or start a process, and an answer must never come from another file. One hostile
case per class, through the real binary (and the loadable extension in Debian's python3):
  2  a saved database's views and triggers cannot call replay / replay_ir / optimizable_events /
     queue_length / memory_bw / idle_breakdown, and
     the names tlsql reads must be tables;
  3  no output replaces an input, by any name (same path, hard link, symlink, /proc/self/fd);
  4  control characters in names are shown, not obeyed, on a terminal; piped output is exact;
  5  a path read from a database (--overlay) must be the regular file that was loaded;
  6  a schema detached and attached again answers from what it holds now;
  7  a file replaced by rename, and a copy beside its original, never mix their numbers;
  8  a loop of parent links is reported by the tree diff, not followed;
  9  gpu_spec figures no GPU has, and .width beyond int, give results or errors at once;
  10 a folder with link loops loads its traces; a 253-byte -o name saves;
  11 insert mode quotes its column names;
  13 --augment writes only an event's own numbers: reloaded, every op reads as before;
  14 an escaped key is the same key;
  15 every line for a terminal goes through one filter: report notes, folder loads' lines, .dump,
     and tab completion never offers a word holding a control character (issue 45.2);
  16 a sidecar tlsql read (a capture folder's execution_details.json) is an input too (45.5);
  17 an empty output name is an error, not a silent success (45.8);
  18 a folder's links out of it, or to a file it holds already, are skipped and said (45.9);
  19 clear errors: sums past int64, a parameter of the wrong type, hex / NaN parameters,
     matched() of no event, devices as scripts or CSV (45.10);
  20 no name from a file is spliced into SQL: a schema argument that closes quotes is refused in
     the binary, the sqlite3 shell and Python, and a real schema with such a name still answers;
  21 a saved event table that may repeat uids is refused in every host, at once;
  22 metadata read whole is bounded, and running out of memory is one line and exit 1;
  23 a saved database in WAL mode opens with no -wal / -shm file appearing beside it.
usage: trust.py TLSQL LIBTLSQL DATA_DIR WORK_DIR"""
import gzip, hashlib, json, os, pty, select, shutil, sqlite3, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, lib, data, work = sys.argv[1:5]
lib = os.path.splitext(lib)[0]
work = os.path.join(work, "trust")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)
bert = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
small = os.path.join(data, "hta_backward_thread.json")


def run(*args, timeout=120, **kw):
    return subprocess.run([tlsql, *args], capture_output=True, text=True, timeout=timeout, **kw)


def csv_rows(r):
    return [line.split(",") for line in r.stdout.strip().splitlines()[1:]]


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def sql(db, text):
    con = sqlite3.connect(db)
    con.executescript(text)
    con.commit()
    con.close()


shutil.copy(bert, "in.json.gz")
r = run("in.json.gz", "-q", "-o", "a.db")
check(r.returncode == 0 and os.path.exists("a.db"), f"saved a.db: {r.stderr.strip()}")

# --- 2: what a file's schema may call ---------------------------------------------------------
shutil.copy("a.db", "evil_self.db")
sql("evil_self.db", "DROP TABLE tlsql_self; CREATE VIEW tlsql_self AS SELECT replay(1) AS token;")
r = run("evil_self.db", "--report", "ops")
check(r.returncode == 1 and "'tlsql_self' is a view where tlsql writes a table" in r.stderr,
      f"2: tlsql_self turned into a view: refused on opening ({r.stderr.strip()})")
shutil.copy("a.db", "evil_event.db")
sql("evil_event.db", "PRAGMA legacy_alter_table = ON; ALTER TABLE event RENAME TO event_rows; "
    "CREATE VIEW event AS SELECT * FROM event_rows;")
r = run("evil_event.db", "-c", "SELECT 1")
check(r.returncode == 1 and "'event' is a view where tlsql writes a table" in r.stderr,
      f"2: event turned into a view: refused ({r.stderr.strip()})")
shutil.copy("a.db", "evil_views.db")
sql("evil_views.db", "CREATE VIEW boom AS SELECT replay(5) AS x; CREATE VIEW boom_ir AS SELECT replay_ir(5) AS x; "
    "CREATE VIEW boom_opt AS SELECT * FROM optimizable_events(0); "
    "CREATE VIEW boom_queue AS SELECT * FROM queue_length(0, 7); CREATE VIEW boom_bw AS SELECT * FROM memory_bw(0); "
    "CREATE VIEW boom_idle AS SELECT * FROM idle_breakdown(); "
    "CREATE TRIGGER boom_trigger AFTER INSERT ON health BEGIN SELECT replay(5); END;")
for q, fn in [("SELECT * FROM boom", "replay"), ("SELECT * FROM boom_ir", "replay_ir"),
              ("SELECT * FROM boom_opt", "optimizable_events"), ("SELECT * FROM boom_queue", "queue_length"),
              ("SELECT * FROM boom_bw", "memory_bw"), ("SELECT * FROM boom_idle", "idle_breakdown"),
              ("INSERT INTO health(\"check\") VALUES('x')", "replay")]:
    r = run("evil_views.db", "-c", q)
    # (a table-valued function is refused as SQLite words it for a virtual table)
    refused = f"unsafe use of {fn}()" in r.stderr or f'unsafe use of virtual table "{fn}"' in r.stderr
    check(r.returncode == 1 and refused, f"2: {q}: refused ({r.stderr.strip()})")
r = run("evil_views.db", "-c", "SELECT replay_ir(5) IS NULL OR 1")  # typed by the user: allowed
check("unsafe use" not in r.stderr, f"2: replay_ir typed at the prompt still runs ({r.stderr.strip()[:80]})")
con = sqlite3.connect("evil_views.db")
con.enable_load_extension(True)
con.load_extension(lib)
for q, fn in [("SELECT * FROM boom", "replay"), ("SELECT * FROM boom_ir", "replay_ir")]:
    try:
        con.execute(q).fetchall()
        check(False, f"2: extension: {q} ran")
    except sqlite3.OperationalError as e:
        check(f"unsafe use of {fn}()" in str(e), f"2: extension: {q}: refused ({e})")
con.close()

# --- 3: no output onto an input ----------------------------------------------------------------
before = md5("in.json.gz"), md5("a.db")
os.link("in.json.gz", "hard.svg")
os.symlink("in.json.gz", "sym.csv")
os.link("a.db", "hard.db")
fd = os.open("in.json.gz", os.O_RDONLY)
writers = [  # (what, arguments given the target)
    ("-o", lambda t: ["in.json.gz", "-q", "-o", t]),
    (".save", lambda t: ["in.json.gz", "-q", "-c", f".save {t}"]),
    ("--html", lambda t: ["in.json.gz", "-q", "--html", t]),
    ("--overlay", lambda t: ["in.json.gz", "-q", "--overlay", t]),
    ("--augment", lambda t: ["in.json.gz", "-q", "--augment", t]),
    (".export-replay", lambda t: ["in.json.gz", "-q", "-c", f".export-replay {t}"]),
    (".output", lambda t: ["in.json.gz", "-q", "-c", f".output {t}", "-c", "SELECT 1"]),
    (".once", lambda t: ["in.json.gz", "-q", "-c", f".once {t}", "-c", "SELECT 1"]),
    ("--overlay of a saved database", lambda t: ["a.db", "-q", "--overlay", t]),
    ("--html of a saved database", lambda t: ["a.db", "-q", "--html", t]),
]
for what, args in writers:
    for target in ["in.json.gz", "hard.svg", "sym.csv", f"/proc/self/fd/{fd}"]:
        r = run(*args(target), pass_fds=(fd,))
        check(r.returncode == 1 and "it is an input of this session" in r.stderr,
              f"3: {what} {target}: refused ({r.stderr.strip()[:120]})")
for target in ["hard.svg", "sym.csv"]:
    r = run("in.json.gz", "-q", "-c", f".plot roofline {target}")
    check(r.returncode == 1 and "it is an input of this session" in r.stderr, f"3: .plot roofline {target}: refused")
for target in ["a.db", "hard.db"]:
    r = run("a.db", "-q", "--overlay", target)
    check(r.returncode == 1 and "it is an input" in r.stderr, f"3: {target} --overlay onto the database: refused")
os.close(fd)
check((md5("in.json.gz"), md5("a.db")) == before, "3: the inputs are unchanged, byte for byte")
r = run("in.json.gz", "-q", "--html", "page.html")
check(r.returncode == 0 and os.path.getsize("page.html") > 0, "3: --html to a new file still writes it")

# --- 4: control characters on a terminal -------------------------------------------------------
evil_name = "evil\x1b]0;pwned\x07\x1b[2J\u009b31m\x7fend"
with open("esc.json", "w") as f:
    json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": evil_name, "pid": 1, "tid": 1, "ts": 1,
                                "dur": 5, "args": {}}]}, f)


def on_pty(args):
    master, slave = pty.openpty()
    p = subprocess.Popen([tlsql, *args], stdout=slave, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=60)
    os.close(master)
    return out


for mode in ["--box", "--csv", "--line", "--list", "--insert", "--json"]:
    out = on_pty(["esc.json", "-q", mode, "-c", "SELECT name FROM event"])
    raw = b"\x1b" in out or b"\x07" in out or b"\xc2\x9b" in out or b"\x7f" in out
    shown = (b"\\u001b" in out) if mode == "--json" else (b"^[]0;pwned^G^[[2J\\u009b31m^?end" in out)
    check(not raw and shown, f"4: {mode} on a terminal shows the controls: {out[-90:]!r}")
out = on_pty(["esc.json", "-q", "-c", ".tree 0"])
check(b"\x1b" not in out and b"Name: evil^[" in out, f"4: .tree on a terminal: {out[-80:]!r}")
r = subprocess.run([tlsql, "esc.json", "-q", "--csv", "-c", "SELECT name FROM event"], capture_output=True)
check(r.stdout == b"name\n" + evil_name.encode() + b"\n", "4: piped CSV is byte-exact")

# --- 5: paths read from a database -------------------------------------------------------------
os.mkfifo("fifo.json")
with open("bigger.json", "w") as f:
    f.write(" " * 5_000_000)
for target, why in [("/dev/zero", "not a regular file"), (os.path.abspath("fifo.json"), "not a regular file"),
                    (os.path.abspath("bigger.json"), "not the trace that was loaded")]:
    shutil.copy("a.db", "moved.db")
    sql("moved.db", f"UPDATE trace SET path = '{target}'")
    t0 = time.time()
    r = run("moved.db", "-q", "--overlay", "ov.json", timeout=60)
    check(r.returncode == 1 and why in r.stderr and time.time() - t0 < 30 and not os.path.exists("ov.json"),
          f"5: trace.path = {os.path.basename(target)}: '{r.stderr.strip()[:110]}' in {time.time() - t0:.1f} s")

# --- 6: a name detached and attached again -----------------------------------------------------
r = run(small, "-q", "-o", "other.db")
q_own = ("SELECT count(*), sum(gpu_time(uid)), (SELECT count(*) FROM perf_rows()), "
         "(SELECT count(*) FROM ancestors((SELECT max(uid) FROM event))) FROM event")
own = csv_rows(run("other.db", "-q", "-c", q_own))
q_x = ("SELECT count(*), sum(gpu_time(uid, 'x')), (SELECT count(*) FROM perf_rows('x')), "
       "(SELECT count(*) FROM ancestors((SELECT max(uid) FROM x.event), 'x')) FROM x.event")
r = run("in.json.gz", "-q", "-c", f".attach {bert} AS x", "-c", "SELECT sum(gpu_time(uid, 'x')) FROM x.event",
        "-c", "DETACH x", "-c", ".attach other.db AS x", "-c", q_x)
check(r.returncode == 0 and csv_rows(r)[-1] == own[0],
      f"6: after DETACH x, x (a saved database now) answers from its own rows: {csv_rows(r)[-1:]} == {own}")
r = run("in.json.gz", "-q", "-c", f".attach {bert} AS x", "-c", "DETACH x", "-c", f".attach {small} AS x", "-c", q_x)
check(r.returncode == 0 and csv_rows(r)[-1] == own[0], f"6: ... and so does another trace attached as x: {csv_rows(r)}")
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension(lib)
con.execute("SELECT tlsql_load(?, 'x')", (bert,)).fetchone()
con.execute("SELECT sum(gpu_time(uid, 'x')) FROM x.event").fetchone()
con.execute("DETACH x")
con.execute("ATTACH 'other.db' AS x")
got = [str(v) for v in con.execute(q_x).fetchone()]
check(got == own[0], f"6: extension: tlsql_load, DETACH, ATTACH a saved database: {got} == {own[0]}")
con.execute("DETACH x")
con.execute("SELECT tlsql_load(?, 'x')", (small,)).fetchone()
got = [str(v) for v in con.execute(q_x).fetchone()]
check(got == own[0], f"6: extension: the name loaded again: {got} == {own[0]}")
con.close()

# --- 7: rename and copies ----------------------------------------------------------------------
# A trace past the perf pass's two-reader threshold (10,000 rows): 4,000 ops, each a launch and a kernel.
events = []
for i in range(4000):
    ts = 10 + i * 10
    events += [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts, "dur": 8,
                "args": {"External id": i + 1}},
               {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 1,
                "dur": 2, "args": {"correlation": i + 1, "External id": i + 1}},
               {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": ts + 4, "dur": 3,
                "args": {"correlation": i + 1, "stream": 7, "device": 0}}]
with open("big.json", "w") as f:
    json.dump({"traceEvents": events}, f)
run("big.json", "-q", "-o", "big.db")
sql("big.db", "DELETE FROM tlsql_perf")  # (the pass then runs on the saved rows, on two connections)
shutil.copy("big.db", "big2.db")
sql("big2.db", "UPDATE event SET dur = dur * 3, \"end\" = ts + dur * 3 WHERE kind = 'kernel'")
q = "SELECT sum(gpu_time(uid)), sum(self_time(uid)) FROM event"
want = csv_rows(run("big.db", "-q", "-c", q))
# Each op, launch call and kernel holds its kernel's 3 us: 3 x 4,000 x 3,000 ns.
check(want and want[0][0] == str(3 * 4000 * 3000), f"7: the big trace's GPU time is 3 x 4,000 x 3 us: {want}")
r = run("big.db", "-q", "-c", ".shell mv big2.db big.db", "-c", q)
check(csv_rows(r) == want, f"7: big.db replaced by rename while open: the open file's numbers {csv_rows(r)} == {want}")
shutil.copy("a.db", "copy.db")
sql("copy.db", "UPDATE event SET dur = dur * 3, \"end\" = ts + dur * 3 WHERE kind = 'kernel'")
q_other = "SELECT sum(gpu_us), sum(count) FROM other.op_summary"
q_alone = "SELECT sum(gpu_us), sum(count) FROM op_summary"
alone = csv_rows(run("copy.db", "-q", "-c", q_alone))
mine = csv_rows(run("a.db", "-q", "-c", q_alone))
r = run("a.db", "-q", "--diff", "copy.db", "-c", q_other, "-c", "SELECT sum(gpu_ns) FROM perf_rows('other')",
        "-c", q_alone)
rows = csv_rows(r)
check(r.returncode == 0 and rows[0] == alone[0] and rows[-1] == mine[0] and alone != mine,
      f"7: a.db --diff copy.db (an edited copy): other's summaries are the copy's {rows[0]} == {alone[0]}, "
      f"main's its own {rows[-1]} == {mine[0]}")
tok = csv_rows(run("a.db", "-q", "-c", "SELECT token FROM tlsql_self"))[0][0]
r = run("a.db", "-q", "--diff", "copy.db", "-c", f"SELECT count(*) FROM ancestors(5, 'db:{tok}')")
check(r.returncode == 1 and "a token held by main and other" in r.stderr,
      f"7: a copied token names neither database ({r.stderr.strip()[:120]})")

# --- 8: parent loops ---------------------------------------------------------------------------
shutil.copy("a.db", "loop.db")
k = csv_rows(run("a.db", "-q", "-c", "SELECT uid FROM kernel ORDER BY uid LIMIT 1"))[0][0]
sql("loop.db", f"UPDATE event SET parent = {k} WHERE uid = (SELECT parent FROM event WHERE uid = "
    f"(SELECT parent FROM event WHERE uid = {k}))")
shutil.copy("loop.db", "loop2.db")
# A walk that follows the loop grows without bound: cap the memory at 4 GB so that it fails fast.
# AddressSanitizer reserves terabytes of address space up front, so under it the cap is its own
# RSS limit instead of ulimit -v.
sanitized = "asan" in os.environ.get("LD_PRELOAD", "")
cap = "" if sanitized else "ulimit -v 4000000; "
env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":hard_rss_limit_mb=4000")
for q in ["SELECT count(*) FROM tree_diff", "SELECT count(*) FROM tree_diff_groups", f"SELECT * FROM matched({k})"]:
    r = subprocess.run(["sh", "-c", f"{cap}exec '{tlsql}' loop.db --diff loop2.db -c '{q}'"],
                       capture_output=True, text=True, timeout=60, env=env)
    check(r.returncode == 1 and "the parent links loop through uid" in r.stderr,
          f"8: {q} over a looping tree: {r.stderr.strip()[:100]}")

# --- 9: values no GPU has ----------------------------------------------------------------------
for change in ["hbm_tbps = 0", "hbm_tbps = 1e308", "matrix_tflops = 1e308, vector_tflops = 1e308",
               "matrix_tflops = -1, hbm_tbps = 'fast'"]:
    t0 = time.time()
    r = run("in.json.gz", "-q", "-c", f"UPDATE gpu_spec SET {change}", "-c", ".plot roofline r.svg", timeout=60)
    r2 = run("in.json.gz", "-q", "-c", f"UPDATE gpu_spec SET {change}", "--html", "r.html", timeout=60)
    check(r.returncode == 0 and r2.returncode == 0 and time.time() - t0 < 40,
          f"9: gpu_spec SET {change}: .plot and --html finish ({time.time() - t0:.1f} s)")
r = run("in.json.gz", "-q", "-c", "UPDATE gpu_spec SET hbm_tbps = 0",
        "-c", "SELECT count(*) FROM kernel WHERE peak_tbps(uid) IS NOT NULL")
check(csv_rows(r) == [["0"]], f"9: a bandwidth of 0 is no peak: {csv_rows(r)}")
for w in ["99999999999", "-5000000000", "20000"]:
    r = run("in.json.gz", "-q", "-c", f".width {w}", "-c", "SELECT 1", timeout=30)
    check(r.returncode == 1 and "numbers from -10000 to 10000" in r.stderr, f".width {w}: refused")

# --- 10: folders and names ---------------------------------------------------------------------
os.makedirs("dir")
shutil.copy(small, "dir/a.json")
os.symlink("loop_b.json", "dir/loop_a.json")
os.symlink("loop_a.json", "dir/loop_b.json")
os.symlink("nowhere.json", "dir/dangling.json")
r = run("dir", "-q", "-c", "SELECT count(*) FROM trace")
check(r.returncode == 0 and csv_rows(r) == [["1"]], f"10: a folder with a link loop loads its trace ({r.stderr})")
long_name = "n" * 250 + ".db"
r = run(small, "-q", "-o", long_name)
check(r.returncode == 0 and os.path.exists(long_name), f"10: -o with a {len(long_name)}-byte name ({r.stderr})")

# --- 11: insert mode ---------------------------------------------------------------------------
r = run(small, "-q", "--insert", "-c", ".headers on", "-c",
        "SELECT 1 AS \"my name\", 2 AS \"count(*)\", 'x' AS \"a); DROP TABLE t; --\"")
con = sqlite3.connect(":memory:")
con.execute('CREATE TABLE "table"("my name", "count(*)", "a); DROP TABLE t; --")')
con.executescript(r.stdout)
check(con.execute('SELECT * FROM "table"').fetchall() == [(1, 2, "x")], f"11: insert mode's SQL runs: {r.stdout!r}")

# --- 13: --augment keeps every op's figures ----------------------------------------------------
r = run("in.json.gz", "-q", "--augment", "aug.json")
q = ("SELECT uid, coalesce(round(achieved_pct(uid), 9), ''), coalesce(round(flops(uid), 3), '') FROM event "
     "WHERE kind IN ('cpu_op', 'kernel') ORDER BY uid")
a, b = csv_rows(run("in.json.gz", "-q", "-c", q)), csv_rows(run("aug.json", "-q", "-c", q))
diffs = [(x, y) for x, y in zip(a, b) if x != y]
check(r.returncode == 0 and len(a) == len(b) > 100 and not diffs,
      f"13: augmented and reloaded, every op and kernel has the original's figures ({len(diffs)} differ: {diffs[:2]})")
beneath = {int(row[0]) for row in csv_rows(run("in.json.gz", "-q", "-c",
                                                "SELECT uid FROM op WHERE perf_source(uid) = 'beneath'"))}
with open("aug.json") as f:
    aug = json.load(f)["traceEvents"]
check(beneath and not any("kernel_flop" in aug[u].get("args", {}) for u in beneath),
      f"13: no kernel_flop on the {len(beneath)} ops whose numbers are the sum beneath them")

# --- 14: escaped keys --------------------------------------------------------------------------
with open("esc_keys.json", "w") as f:
    f.write('{"trace\\u0045vents": [{"ph": "X", "cat": "cpu_op", "n\\u0061me": "aten::mm", "pid": 1, "tid": 1, '
            '"ts": 1, "dur": 5, "args": {"Input \\u0044ims": [[2, 3], [3, 4]], "Input type": ["float", "float"], '
            '"Ext\\u0065rnal id": 7}}]}')
r = run("esc_keys.json", "-q", "-c", "SELECT name, external_id, input_dims, flops(uid) FROM event",
        "-c", "SELECT count FROM health WHERE \"check\" = 'escaped_key'")
# aten::mm [2,3] x [3,4]: 2 * 2 * 3 * 4 = 48 FLOPs.
check(r.returncode == 0 and csv_rows(r)[0] == ["aten::mm", "7", '"[[2', '3]', '[3', '4]]"', "48.0"]
      and csv_rows(r)[-1] == ["3"], f"14: escaped keys read as the keys they spell: {r.stdout!r} {r.stderr!r}")

# --- 15: one filter for every line bound for a terminal ---------------------------------------
osc52 = "\x1b]52;c;aGk=\x07"  # writes "hi" to the clipboard of a terminal that obeys it
step = "ProfilerStep#1" + osc52 + "\x1b[2J"
with open("esc_step.json", "w") as f:
    json.dump({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": step, "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm" + osc52, "pid": 1, "tid": 1, "ts": 10, "dur": 50, "args": {}}]},
        f)


def raw_controls(out):
    return b"\x1b]52" in out or b"\x1b[2J" in out or b"aGk=\x07" in out


# (a report's notes on stderr quote the window's name; the rows were filtered before)
out = on_pty(["esc_step.json", "-q", "--report", "critical_path"])
check(not raw_controls(out) and b"ProfilerStep#1^[]52" in out, f"15: critical_path's note on a terminal: {out[:160]!r}")
out = on_pty(["esc_step.json", "-q", "--overlay", "esc_overlay.json"])
check(not raw_controls(out), f"15: --overlay's message on a terminal: {out[:160]!r}")
os.makedirs("escdir")
shutil.copy(small, "escdir/rank0" + osc52 + ".json")
with open("escdir/conf\x1b[2J.json", "w") as f:
    f.write('{"not": "a trace"}')
out = on_pty(["escdir", "-c", "SELECT 1"])  # (not -q: the `loaded` line)
check(not raw_controls(out) and b"loaded escdir/rank0^[]52" in out and b"conf^[[2J.json" in out,
      f"15: a folder's loaded / skipped lines on a terminal: {out[:300]!r}")
shutil.copy("a.db", "esc_tables.db")
sql("esc_tables.db", f'CREATE TABLE "evil{osc52}"(x); INSERT INTO "evil{osc52}" VALUES(1); '
    'CREATE VIEW "evil_v\x1b[2J" AS SELECT 1; CREATE TABLE evil_ok(x); CREATE TABLE evil_ok2(x); '
    'INSERT INTO evil_ok2 VALUES(42);')
out = on_pty(["esc_tables.db", "-c", ".dump evil%"])
check(not raw_controls(out) and b"CREATE TABLE \"evil^[]52" in out, f"15: .dump on a terminal: {out[:200]!r}")
r = subprocess.run([tlsql, "esc_tables.db", "-c", ".dump evil%"], capture_output=True)
check(f'CREATE TABLE "evil{osc52}"'.encode() in r.stdout, "15: .dump to a pipe keeps the bytes (SQL that rebuilds)")
# Tab completion, interactive on a pseudo-terminal: a table and a file named with controls are
# never offered (libedit would list them raw and put them on the line).
with open("evfile" + osc52 + ".sql", "w") as f:
    f.write("SELECT 1;\n")
home = os.path.join(work, "home")
os.makedirs(home, exist_ok=True)
pid, fd = pty.fork()
if pid == 0:
    os.environ["HOME"], os.environ["TERM"] = home, "xterm"
    os.execv(tlsql, [tlsql, "esc_tables.db"])
screen = b""


def pty_until(marker, timeout=90):  # (generous: a loaded CI machine; it returns at the marker)
    global screen
    end = time.time() + timeout
    while marker not in screen and time.time() < end:
        r_, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
        if r_:
            try:
                screen += os.read(fd, 65536)
            except OSError:
                break
    return marker in screen


pty_until(b"tlsql> ")
os.write(fd, b"SELECT * FROM evi\t\t")  # (evil_ok and evil_ok2 offered, listed on the second tab)
time.sleep(1.0)
os.write(fd, b"2;\r")
pty_until(b"tlsql> ", 10)
os.write(fd, b".read evf\t\t")
time.sleep(1.0)
os.write(fd, b"\r")
pty_until(b"tlsql> ", 10)
os.write(fd, b".exit\r")
pty_until(b"\x00", 5)
os.close(fd)
os.waitpid(pid, 0)
check(not raw_controls(screen) and b"\xe2\x94\x82 42 \xe2\x94\x82" in screen and b"cannot open 'evf'" in screen,
      f"15: tab completion offers evil_ok and evil_ok2, no table or file name holding controls: {screen[-500:]!r}")

# --- 16: sidecars are inputs -------------------------------------------------------------------
os.makedirs("cap")
shutil.copy(small, "cap/cap.json")
with open("cap/execution_details.json", "w") as f:
    json.dump([{"file": "cap.json", "batch_size": 4, "mode": "FULL"}], f)
sidecar_before = md5("cap/execution_details.json")
for args in (["--html", "cap/execution_details.json"], ["-o", "cap/execution_details.json"],
             ["-c", ".output cap/execution_details.json", "-c", "SELECT 1"]):
    r = run(small, "-q", "--capture", "cap", *args)
    check(r.returncode == 1 and "it is an input of this session" in r.stderr,
          f"16: {args[0]} onto the capture folder's execution_details.json: refused ({r.stderr.strip()[:120]})")
check(md5("cap/execution_details.json") == sidecar_before, "16: the sidecar is unchanged")

# --- 17: empty output names --------------------------------------------------------------------
for args in (["-o", ""], ["--html", ""], ["--augment", ""], ["--overlay", ""], ["-c", ".save ''"],
             ["-c", ".output ''"], ["-c", ".once ''"], ["-c", ".export-replay ''"], ["-c", ".html ''"]):
    r = run(small, "-q", *args)
    check(r.returncode == 1 and "an empty file name" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          f"17: {' '.join(args)!r}: one line, exit 1 ({r.returncode}: {r.stderr.strip()[:100]})")
r = run(small, "-q", "-c", ".plot roofline ''")  # (.plot wants a name ending in .svg, .png or .csv first)
check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, f"17: .plot roofline '': {r.stderr.strip()}")
r = run(small, "-q", "-c", ".output x.csv", "-c", ".output", "-c", "SELECT 7 AS n")
check(r.returncode == 0 and r.stdout == "n\n7\n", f"17: .output with no name is stdout again ({r.stdout!r})")

# --- 18: links in a folder ---------------------------------------------------------------------
os.makedirs("linkdir/sub")
os.makedirs("elsewhere")
shutil.copy(small, "linkdir/a.json")
shutil.copy(bert, "elsewhere/secret.json.gz")
shutil.copy(small, "linkdir/sub/b.json")
os.symlink(os.path.abspath("elsewhere/secret.json.gz"), "linkdir/out.json.gz")
os.symlink("a.json", "linkdir/dup.json")
os.symlink("sub/b.json", "linkdir/inside.json")
r = run("linkdir", "-q", "-o", "linkdir.db", "-c", "SELECT count(*) FROM trace",
        "-c", "SELECT detail FROM health WHERE \"check\" = 'folder_link_skipped' ORDER BY detail")
rows = csv_rows(r)
check(r.returncode == 0 and rows[0] == ["2"], f"18: a.json and inside.json (a link inside) load: {rows[:1]} ({r.stderr})")
check(r.stdout.count("a link to a file") == 2 and "linkdir/dup.json: a link to a file the directory holds already" in r.stdout
      and "linkdir/out.json.gz: a link to a file outside the directory" in r.stdout,
      f"18: the links out and to a sibling skipped, named in health: {r.stdout}")
check(r.stderr.count("skipped") == 2, f"18: ... and said on stderr ({r.stderr.strip()})")
r = run("linkdir.db", "-q", "-c", "SELECT count(*) FROM trace WHERE path LIKE '%secret%' OR path LIKE '%out.json%'")
check(csv_rows(r) == [["0"]], "18: the saved database holds nothing of the file outside")
r = run("linkdir/out.json.gz", "-q", "-c", "SELECT count(*) > 100 FROM event")
check(r.returncode == 0 and csv_rows(r) == [["1"]], "18: the link named itself on the command line loads")

# --- 19: clear errors --------------------------------------------------------------------------
mem = [{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 1, "dur": 50, "args": {}}]
for i in range(3):  # Bytes only (a 2021-era trace): allocated is their running sum, past int64
    mem.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
                "ts": 2 + i, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 2**62, "Addr": 100 + i}})
with open("mem_big.json", "w") as f:
    json.dump({"traceEvents": mem}, f)
r = run("mem_big.json", "-q", "--report", "memory")
rows = [dict(zip(r.stdout.splitlines()[0].split(","), x)) for x in csv_rows(r)] if r.stdout else []
check(r.returncode == 0 and rows and rows[0]["peak_bytes"] == str(2**63 - 1),
      f"19: --report memory on sums past int64: saturated at 2^63 - 1 ({r.stderr.strip()[:100]} {rows[:1]})")
r = run(small, "-q", "-c", ".parameter set @top abc", "--report", "cpu_ops")
check(r.returncode == 1 and "@top is 'abc' where a whole number goes" in r.stderr,
      f"19: a parameter of the wrong type is named ({r.stderr.strip()})")
r = run(small, "-q", "-c", ".parameter set @top 0x10", "--report", "cpu_ops")
check(r.returncode == 1 and "@top is '0x10'" in r.stderr, f"19: 0x10 is no number ({r.stderr.strip()})")
r = run(small, "-q", "-c", ".parameter set @a NaN", "-c", ".parameter set @b 1e999", "-c", ".parameter set @c 2.5e1",
        "-c", "SELECT typeof(@a), typeof(@b), @c")
check(csv_rows(r) == [["text", "text", "25.0"]], f"19: NaN and 1e999 are text, 2.5e1 a number: {csv_rows(r)}")
r = run("a.db", "-q", "--diff", "copy.db", "-c", "SELECT * FROM matched(-1)")
check(r.returncode == 1 and "matched(-1): no event has uid -1" in r.stderr,
      f"19: matched(-1) raises as every walk does ({r.stderr.strip()})")
for cmd in [".read /dev/zero", ".import /dev/zero t"]:
    t0 = time.time()
    r = subprocess.run(["sh", "-c", f"{cap}exec '{tlsql}' '{small}' -q -c '{cmd}'"],
                       capture_output=True, text=True, timeout=60, env=env)
    check(r.returncode == 1 and "/dev/" in r.stderr and "not a regular file or a pipe" in r.stderr
          and len(r.stderr.strip().splitlines()) == 1 and time.time() - t0 < 30,
          f"19: {cmd}: one line, exit 1 ({r.stderr.strip()[:100]})")
t0 = time.time()
r = subprocess.run(["sh", "-c", f"{cap}exec '{tlsql}' '{small}' -q -f /dev/zero"],
                   capture_output=True, text=True, timeout=60, env=env)
check(r.returncode == 1 and "not a regular file or a pipe" in r.stderr, f"19: -f /dev/zero ({r.stderr.strip()[:100]})")
# --- 20: no name from a file reaches SQL text (issue 45.1) -------------------------------------
# A view passes a "schema" that would close the quotes of a hand-built `"SCHEMA".event` and add a
# subquery: run as the SQL the function prepares (top-level SQL, where DIRECTONLY does not apply),
# it would start the replay worker, write a file through the sqlite3 shell's writefile() or call
# the host's functions. The witness worker writes a file if it is ever started.
witness = os.path.join(work, "witness")
with open("worker.sh", "w") as f:
    f.write(f"#!/bin/sh\ntouch {witness}\n")
os.chmod("worker.sh", 0o755)
env15 = dict(os.environ, TLSQL_REPLAY_WORKER=os.path.join(work, "worker.sh"))


def payload(sub):
    return 'main"."tlsql_self" AS t0, (SELECT 1 WHERE ' + sub + ') AS z, "main'


calls = {  # view -> SQL over a schema argument P (each function that takes one and a view may call)
    "v_descendants": "SELECT * FROM descendants(0, P)", "v_ancestors": "SELECT * FROM ancestors(5, P)",
    "v_children": "SELECT * FROM children(0, P)", "v_launched": "SELECT * FROM launched(0, P)",
    "v_stack": "SELECT * FROM stack(5, P)", "v_self": "SELECT self_time(5, P)", "v_source": "SELECT source(5, P)",
    "v_gpu_time": "SELECT gpu_time(5, P)", "v_flops": "SELECT flops(5, P)", "v_peak": "SELECT peak_tflops(5, P)",
    "v_class": "SELECT gpu_class(5, 'tlsql', P)", "v_perf_rows": "SELECT * FROM perf_rows(P)",
    "v_marker": "SELECT marker(5, P)", "v_stats": "SELECT trace_stats(0, P)",
    "v_kinds": "SELECT * FROM trace_kinds(0, P)", "v_cp": "SELECT * FROM critical_path('a', 0, 0, P)",
    "v_matched": "SELECT * FROM matched(0, P)", "v_steps": "SELECT * FROM engine_steps(P)",
    "v_members": "SELECT * FROM engine_step_members(P)", "v_loop": "SELECT * FROM engine_loop_events(P)",
}
shutil.copy("a.db", "evil_names.db")
views = []
for i, (view, q) in enumerate(calls.items()):
    p = payload("replay(1) IS NOT NULL")
    views.append(f"CREATE VIEW {view} AS {q.replace('P', repr(p).replace(chr(92), ''))};")
sql("evil_names.db", "\n".join(views))
for view in calls:
    r = run("evil_names.db", "-c", f"SELECT * FROM {view}", env=env15)
    check(r.returncode == 1 and "no database is attached as" in r.stderr and not os.path.exists(witness),
          f"20: tlsql: {view} with a quote-closing schema: refused, no worker ({r.stderr.strip()[:110]})")
# Quotes, dots and comments: each names no attached database.
for name in ['main"', 'main.event', 'main -- x', 'main/*', "main'", '"main"', 'main\x00x']:
    r = run("a.db", "-c", f"SELECT count(*) FROM descendants(0, {chr(39)}{name.replace(chr(39), chr(39) * 2)}{chr(39)})"
            if "\x00" not in name else "SELECT count(*) FROM descendants(0, 'main' || char(0) || 'x')")
    check(r.returncode == 1 and "no database is attached as" in r.stderr,
          f"20: schema {name!r}: refused by name ({r.stderr.strip()[:100]})")
# A real schema with such a name (attached by the user) is read through its quoted name.
r = run("a.db", "-c", "ATTACH 'a.db' AS \"we\"\"ird -- .x\"",
        "-c", "SELECT (SELECT count(*) FROM descendants(0, 'we\"ird -- .x')) = (SELECT count(*) FROM descendants(0))",
        "-c", "SELECT gpu_time(5, 'we\"ird -- .x') IS gpu_time(5)")
lines = r.stdout.splitlines()
check(r.returncode == 0 and len(lines) == 4 and lines[1] == lines[3] == "1",
      f"20: a schema named with quotes, comment and dot answers as main ({r.stdout!r} {r.stderr.strip()[:100]})")
# The sqlite3 shell with the extension: writefile() in the payload writes nothing.
pwn = os.path.join(work, "pwned.txt")
sql("evil_names.db", "CREATE VIEW v_write AS SELECT * FROM descendants(0, '" +
    payload(f"writefile('{pwn}', 'x') > 0").replace("'", "''") + "');")
r = subprocess.run(["sqlite3", "evil_names.db", f".load {lib}", "SELECT * FROM v_write;"], capture_output=True,
                   text=True, timeout=60, env=env15)
check("no database is attached as" in r.stderr and not os.path.exists(pwn),
      f"20: sqlite3 shell: writefile() in a schema argument never runs ({r.stderr.strip()[:100]})")
# Python (the README's snippet): the host's own functions are never called through a name.
called = []
con = sqlite3.connect("evil_names.db")
con.enable_load_extension(True)
con.load_extension(lib)
con.create_function("witness_fn", 0, lambda: called.append(1) or 1)
con.execute("CREATE TEMP VIEW v_py AS SELECT * FROM descendants(0, '" + payload("witness_fn()").replace("'", "''") +
            "')")
try:
    con.execute("SELECT * FROM v_py").fetchall()
    check(False, "20: python: the payload view answered")
except sqlite3.OperationalError as e:
    check("no database is attached as" in str(e) and not called,
          f"20: python: a host function in a schema argument is never called ({e})")
for view in ("v_flops", "v_launched", "v_steps"):
    try:
        con.execute(f"SELECT * FROM {view}").fetchall()
        check(False, f"20: python: {view} answered")
    except sqlite3.OperationalError as e:
        check("no database is attached as" in str(e), f"20: python: {view}: refused ({e})")
con.close()
check(not os.path.exists(witness), "20: the replay worker never started")

# --- 21: an event table that repeats uids (issue 45.3) -----------------------------------------
# 60 levels, each event's uid repeated: a walk that followed every duplicate would visit 2^60 nodes.
con = sqlite3.connect("dup.db")
con.execute("ATTACH 'a.db' AS src")
con.executescript("""
CREATE TABLE main.event AS SELECT * FROM src.event WHERE 0;
""")
con.close()
shutil.copy("a.db", "dup.db")
with sqlite3.connect("dup.db") as con:
    cols = [r[1] for r in con.execute("PRAGMA table_info(event)")]
    con.execute("PRAGMA legacy_alter_table = ON")
    con.execute("ALTER TABLE event RENAME TO event_keyed")
    con.execute("CREATE TABLE event AS SELECT * FROM event_keyed WHERE 0")  # the same columns, no key
    con.execute("DROP VIEW IF EXISTS op")
    rows = []
    for u in range(60):
        for _ in range(2):
            rows.append((u, 0, "cpu_op", f"level{u}", 1000 + u, 1000 - u, u - 1 if u else None, u))
    con.executemany("INSERT INTO event(uid, trace, kind, name, ts, dur, parent, depth) VALUES (?,?,?,?,?,?,?,?)", rows)
    con.execute("CREATE VIEW op AS SELECT * FROM event WHERE kind = 'cpu_op'")
start = time.time()
r = run("dup.db", "-c", "SELECT count(*) FROM descendants(0)", timeout=60)
check(r.returncode == 1 and "uid INTEGER PRIMARY KEY" in r.stderr and time.time() - start < 10,
      f"21: tlsql refuses a saved database whose uids may repeat, on opening ({r.stderr.strip()[:120]})")
con = sqlite3.connect("dup.db")
con.enable_load_extension(True)
con.load_extension(lib)
for q in ["SELECT count(*) FROM descendants(0)", "SELECT gpu_time(0)", "SELECT * FROM ancestors(59)"]:
    start = time.time()
    try:
        con.execute(q).fetchall()
        check(False, f"21: python: {q} answered over repeated uids")
    except sqlite3.OperationalError as e:
        check("uid INTEGER PRIMARY KEY" in str(e) and time.time() - start < 10,
              f"21: python: {q}: refused at once ({e})")
# --- 22: sidecars and metadata are bounded; running out of memory is one line ----------------
# A 55 MB execution_details.json beside capture traces took 1.7 GB in a whole-file JSON parser and,
# under a 1 GB address cap, died of an uncaught std::bad_alloc (SIGABRT). Every file read whole as
# metadata stops at 16 MiB (src/input.h) with its name; whatever runs out of memory anyway says so
# in one line, exit 1. Under AddressSanitizer (which reserves terabytes of address space) the cap
# is its RSS limit, as in 8.
cap1g = "" if sanitized else "ulimit -v 1000000; "
env1g = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":hard_rss_limit_mb=1000")


def capped(*args, cap=cap1g):
    line = " ".join("'" + a.replace("'", "'\\''") + "'" for a in args)
    return subprocess.run(["sh", "-c", f"{cap}exec '{tlsql}' {line}"], capture_output=True, text=True, timeout=120,
                          env=env1g)


os.makedirs("capdir")
shutil.copy(small, "capdir/capture.json")
big_details = json.dumps([{"file": f"capture_{i}.json", "batch_size": i, "mode": "FULL"} for i in range(900000)])
with open("capdir/execution_details.json", "w") as f:
    f.write(big_details)
r = capped(small, "-q", "--capture", "capdir", "-c", "SELECT 1")
check(r.returncode == 1 and r.stderr == f"tlsql: error: capdir/execution_details.json: {len(big_details)} bytes, "
      "more than the 16 MiB tlsql reads of TraceLens's execution_details.json ([{\"file\", \"batch_size\", \"mode\"}, "
      "...]) (a few KB expected)\n", f"22: a {len(big_details) >> 20} MB execution_details.json is refused by name "
      f"under a 1 GB cap (rc {r.returncode}): {r.stderr.strip()[:300]}")
with open("models.sql", "w") as f:
    f.write("-- " + "x" * (17 << 20) + "\n")
r = capped(small, "-q", "--models", "models.sql", "-c", "SELECT 1")
check(r.returncode == 1 and r.stderr.startswith("tlsql: error: models.sql: ") and r.stderr.count("\n") == 1
      and "more than the 16 MiB tlsql reads of a --models file" in r.stderr,
      f"22: a 17 MB --models file is refused by name (rc {r.returncode}): {r.stderr.strip()[:200]}")
# Past any bound: what needs more than the cap allows ends in one line and exit 1, never
# std::terminate's SIGABRT (134): a trace loaded, a script read whole (-f, .read: 1 GB of a sparse
# file's zeros) outside the loader's own catch.
if not sanitized:
    with open("sparse.sql", "wb") as f:
        f.truncate(1 << 30)
    for args, said in [(("-o", "oom.db", "-c", "SELECT 1"), "tlsql: error: in.json.gz: out of memory: "),
                       (("-f", "sparse.sql"), "tlsql: error: out of memory while running the SQL"),
                       (("-c", ".read sparse.sql"), "error: -c: near line 1: out of memory while running .read")]:
        r = capped("in.json.gz", "-q", *args, cap=f"ulimit -v {100000 if 'oom.db' in args else 600000}; ")
        check(r.returncode == 1 and r.stderr.count("\n") == 1 and r.stderr.startswith(said)
              and not os.path.exists("oom.db"),
              f"22: {' '.join(args)} under an address cap: one line, exit 1 (rc {r.returncode}): {r.stderr.strip()[:200]!r}")
    os.remove("sparse.sql")
    # An event's args parsed whole by the perf models are bounded (args::kMaxParsedArgs): a 12 MB
    # "Input Dims" aborted in nlohmann's destructor under a 400 MB cap; now the op has no model.
    with open("big_args.json", "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1,
                                    "dur": 5, "args": {"Input Dims": [[1] * 4000000], "Input type": ["float"]}}]}, f)
    r = capped("big_args.json", "-q", "-c", "SELECT count(*), flops(uid) FROM event", cap="ulimit -v 400000; ")
    check(r.returncode == 0 and csv_rows(r) == [["1", ""]],
          f"22: a 12 MB Input Dims under a 400 MB cap: no model, no abort (rc {r.returncode}) {r.stderr.strip()[-200:]!r}")
    os.remove("big_args.json")
    # tlsql-replay's IR bundle is its input, read whole: 58 MB of it under a 1 GB cap is out of
    # memory in one line (a bundle held as one nlohmann array aborted in its destructor).
    replay_bin = os.path.join(os.path.dirname(tlsql), "tlsql-replay")
    # (A LibTorch whose libraries alone pass the cap cannot start under it: nothing to check there.)
    starts = os.path.exists(replay_bin) and subprocess.run(
        ["sh", "-c", f"ulimit -v 1000000; exec '{replay_bin}' --help"], capture_output=True, timeout=60).returncode == 0
    if starts:
        op = {"op_name": "aten::add", "replay_ir": {"list_pos_args": [{"arg_type": "Tensor", "shape": [2, 3],
                                                                       "dtype": "float32"}] * 2, "kwargs": {}}}
        with open("big_ir.json", "w") as f:
            json.dump([op] * 300000, f)
        r = subprocess.run(["sh", "-c", f"ulimit -v 1000000; exec '{replay_bin}' big_ir.json --device cpu --limit 1"],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 1 and r.stderr == "tlsql-replay: error: out of memory while reading big_ir.json\n",
              f"22: tlsql-replay on a 58 MB bundle under a 1 GB cap (rc {r.returncode}): {r.stderr.strip()[-200:]!r}")
        os.remove("big_ir.json")

# --- 23: opening a saved database writes no file beside it ---------------------------------
# A saved database someone set to WAL mode got -wal and -shm files beside it at its first read, and
# could not be read from a folder tlsql may not write. Read-only and immutable now (file_uri,
# src/db_writer.cpp), also when attached (--diff, .attach) and for the perf pass's second reader.
# (Tests run as root, which writes a 555 folder anyway: what is checked is that nothing appears.)
os.makedirs("walro")
shutil.copy("a.db", "walro/w.db")
con = sqlite3.connect("walro/w.db")
check(con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal", "23: the copy is in WAL mode")
con.close()
os.chmod("walro", 0o555)
before = sorted(os.listdir("walro"))
expect = csv_rows(run("a.db", "-q", "-c", "SELECT count(*), sum(flops(uid) IS NOT NULL) FROM event"))
for args in [("walro/w.db", "-c", "SELECT count(*), sum(flops(uid) IS NOT NULL) FROM event"),
             ("a.db", "--diff", "walro/w.db", "-c", "SELECT count(*), sum(flops(uid) IS NOT NULL) FROM other.event"),
             (small, "-c", ".attach walro/w.db AS w", "-c", f"SELECT count(*), {expect[0][1]} FROM w.event"),
             ("walro/w.db", "-c", "SELECT count(*), 0 FROM optimizable_events(0)")]:
    # SQLite removes -wal and -shm when its last connection closes: the folder is watched while
    # tlsql runs (a second of counting after the query keeps it open).
    p = subprocess.Popen([tlsql, *args, "-q", "-c", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                          "WHERE x < 3000000) SELECT count(*) FROM c"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    seen = set()
    while p.poll() is None:
        seen.update(os.listdir("walro"))
        time.sleep(0.01)
    out, err = p.communicate()
    rows = [line.split(",") for line in out.strip().splitlines()[1:2]]
    check(p.returncode == 0 and (rows == expect or "optimizable_events" in args[-1]) and sorted(seen) == before
          and sorted(os.listdir("walro")) == before,
          f"23: {' '.join(args[:3])}: answers {rows} == {expect}, no file beside it ({sorted(seen)}) {err.strip()[:200]}")
os.chmod("walro", 0o755)
# A -wal file that holds changes another connection committed is read as SQLite reads it (not
# immutable): the change shows.
shutil.copy("a.db", "live.db")
con = sqlite3.connect("live.db")
con.execute("PRAGMA journal_mode=WAL")
con.execute("PRAGMA wal_autocheckpoint=0")
con.execute("UPDATE gpu_spec SET source = 'live edit'")
con.commit()
r = run("live.db", "-q", "-c", "SELECT count(*) FROM gpu_spec WHERE source = 'live edit'")
check(r.returncode == 0 and csv_rows(r) != [["0"]], f"23: a live -wal's changes are read: {r.stdout!r} {r.stderr!r}")
con.close()

finish()
