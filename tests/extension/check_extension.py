#!/usr/bin/env python3
"""The loadable extension in the hosts people use, against the same queries through the tlsql binary:
Debian's python3 (sqlite3 module, pandas via examples/notebook.py) and the sqlite3 shell's .load;
on a connection without tlsql tables the functions give clear errors, not crashes. Every report as
a table (report_NAME, session/report_table.h) gives exactly what `tlsql --report NAME --csv` prints:
its columns, its rows, each value's text, its error; with parameters; on one trace, a diff pair,
several traces (timeline's per-rank stand-in) and a CPU-only trace (ops' stand-in).
usage: check_extension.py TLSQL LIBTLSQL_SO DATA_DIR EXAMPLES_DIR WORK_DIR"""
import csv, io, json, os, sqlite3, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, lib, data, examples, work = sys.argv[1:6]
lib = os.path.splitext(lib)[0]  # load_extension takes the path without .so too


trace = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
queries = [
    "SELECT uid, gpu_time(uid), self_time(uid), flops(uid), bytes(uid), achieved_pct(uid), bound(uid), op_category(name) "
    "FROM op ORDER BY uid",
    "SELECT uid, (SELECT count(*) FROM descendants(o.uid)), (SELECT count(*) FROM launched(o.uid)), source(uid) "
    "FROM op o ORDER BY uid LIMIT 60",
    "SELECT k.uid, a.uid FROM kernel k, ancestors(k.uid) a ORDER BY 1, 2",
    "SELECT name, count, gpu_us, tflops FROM op_summary ORDER BY name",
]


def via_tlsql(path, q):
    r = subprocess.run([tlsql, path, "--csv", "-c", q], capture_output=True, text=True, timeout=120)
    return [tuple(row) for row in list(csv.reader(io.StringIO(r.stdout)))[1:]]


def same(py_rows, csv_rows):
    """Python values equal the CSV text tlsql printed: numbers as numbers (CSV has 15 digits), NULL as ''."""
    if len(py_rows) != len(csv_rows):
        return False
    for a, b in zip(py_rows, csv_rows):
        for v, t in zip(a, b):
            if v is None:
                if t != "":
                    return False
            elif isinstance(v, (int, float)):
                if abs(float(t) - v) > 1e-12 * max(1.0, abs(v)):
                    return False
            elif str(v) != t:
                return False
    return True


# Python: tlsql_load into an in-memory connection, then the queries, equal to the tlsql binary's.
con = sqlite3.connect(":memory:")
con.enable_load_extension(True)
con.load_extension(lib)
n = con.execute("SELECT tlsql_load(?)", (trace,)).fetchone()[0]
check(n == 2551, f"python: tlsql_load returned {n} events (the trace has 2551)")
for q in queries:
    got, want = con.execute(q).fetchall(), via_tlsql(trace, q)
    check(len(want) > 0 and same(got, want), f"python == tlsql ({len(want)} rows): {q[:70]}")
# A second tlsql_load into the same schema is refused and the loaded trace stays intact (it used
# to be freed while the event table still read it: wrong counts, then a crash).
for schema_args in [(trace,), (trace, "main")]:
    try:
        con.execute("SELECT tlsql_load(" + ", ".join("?" * len(schema_args)) + ")", schema_args).fetchone()
        check(False, "second tlsql_load into main: expected an error")
    except sqlite3.Error as e:
        check("already holds a trace" in str(e), f"second tlsql_load refused: {e}")
q = "SELECT count(*), sum(dur), sum(ts) FROM event"
check(same(con.execute(q).fetchall(), via_tlsql(trace, q)) and con.execute(q).fetchone()[0] == 2551,
      "after the refused load: every row still there")
check(same(con.execute(queries[1]).fetchall(), via_tlsql(trace, queries[1])), "after the refused load: tree functions agree")

# Into a database file, tlsql_load refuses main (its virtual table would outlive the extension there).
filedb = os.path.join(work, "host.db")
if os.path.exists(filedb):
    os.remove(filedb)
host = sqlite3.connect(filedb)
host.enable_load_extension(True)
host.load_extension(lib)
try:
    host.execute("SELECT tlsql_load(?)", (trace,)).fetchone()
    check(False, "tlsql_load into a file's main: expected an error")
except sqlite3.Error as e:
    check("the main database is a file" in str(e), f"tlsql_load into a file's main refused: {e}")
check(host.execute("SELECT tlsql_load(?, 't')", (trace,)).fetchone()[0] == 2551, "tlsql_load(path, 't') into a file-backed host")
host.close()
check(sqlite3.connect(filedb).execute("SELECT count(*) FROM sqlite_schema").fetchone()[0] == 0, "the host file stays untouched")

# A saved database opened by Python, and by the sqlite3 shell with .load.
db = os.path.join(work, "ext.db")
if os.path.exists(db):
    os.remove(db)
subprocess.run([tlsql, trace, "-o", db, "-c", "SELECT 1"], capture_output=True, check=True)
saved = sqlite3.connect(db)
saved.enable_load_extension(True)
saved.load_extension(lib)
for q in queries:
    check(same(saved.execute(q).fetchall(), via_tlsql(db, q)), f"python on saved .db == tlsql: {q[:60]}")
r = subprocess.run(["sqlite3", "-csv", db, f".load {lib}", queries[0]], capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and [tuple(x) for x in csv.reader(io.StringIO(r.stdout))] == via_tlsql(db, queries[0]),
      f"sqlite3 shell .load == tlsql {r.stderr.strip()}")

# No tlsql tables: clear errors from the functions.
empty = sqlite3.connect(":memory:")
empty.enable_load_extension(True)
empty.load_extension(lib)
for q, msg in [("SELECT gpu_time(1)", "gpu_time: no tlsql event table in schema 'main'"),
               ("SELECT * FROM ancestors(1)", "ancestors: no tlsql event table in schema 'main'"),
               ("SELECT flops(1)", "flops: no tlsql event table in schema 'main'"),
               ("SELECT replay_ir(1)", "replay_ir: no tlsql event table in schema 'main'"),
               ("SELECT tlsql_load('/nonexistent.json')", "tlsql_load: /nonexistent.json: cannot open"),
               (f"SELECT tlsql_load('{trace}', 'a\"; DROP TABLE x; --')", "tlsql_load: cannot use 'a\"; DROP TABLE x; --' as a schema name")]:
    try:
        empty.execute(q).fetchall()
        check(False, f"{q}: expected an error")
    except sqlite3.Error as e:
        check(str(e).startswith(msg), f"{q}: {e}")
check(empty.execute("SELECT op_category('aten::mm'), short_name('void f<1>(int)')").fetchone() == ("GEMM", "f"),
      "pure functions work without tables")

# The extension loaded twice on one connection (a notebook cell run again): the second load's
# trace registry is the one found. (The first load's, destroyed when the module was replaced,
# used to erase the connection's entry, so a trace loaded after the second load went unfound.)
twice = sqlite3.connect(":memory:")
twice.enable_load_extension(True)
twice.load_extension(lib)
twice.load_extension(lib)
try:
    n = twice.execute("SELECT tlsql_load(?, 'b')", (trace,)).fetchone()[0]
    got = twice.execute("SELECT count(*), sum(gpu_time(uid, 'b') IS NOT NULL) FROM b.event").fetchone()
    check(n == 2551 and got == (2551, 2551), f"loaded twice: tlsql_load then gpu_time on its schema ({n}, {got})")
except sqlite3.Error as e:
    check(False, f"loaded twice: tlsql_load then gpu_time on its schema: {e}")
twice.close()

# A loaded trace's schema detached while a statement Python keeps prepared still holds its event
# table, and an empty database attached under the name (often given the freed handle's address):
# the functions find no trace there, and once it is detached a trace loads under the name.
small = os.path.join(data, "custom_launches.json")  # (a small load: the sequence that reused the handle)
swap = sqlite3.connect(":memory:")
swap.enable_load_extension(True)
swap.load_extension(lib)
swap.execute("SELECT tlsql_load(?, 'b')", (small,))
swap.execute("SELECT count(*) FROM b.event").fetchall()  # (kept prepared in Python's statement cache)
swap.execute("DETACH b")
swap.execute("ATTACH ':memory:' AS b")
for q, msg in [("SELECT gpu_time(1, 'b')", "no tlsql event table in schema 'b'"),
               ("SELECT count(*) FROM descendants(1, 'b')", "no tlsql event table in schema 'b'")]:
    try:
        got = swap.execute(q).fetchall()
        check(False, f"{q} on an empty database attached in a loaded trace's place: {got}, expected an error")
    except sqlite3.Error as e:
        check(msg in str(e), f"{q} on an empty database attached in a loaded trace's place: {e}")
swap.execute("DETACH b")
try:
    n = swap.execute("SELECT tlsql_load(?, 'b')", (small,)).fetchone()[0]
    check(n == 45, f"then a trace loads under the name: {n}")
except sqlite3.Error as e:
    check(False, f"then a trace loads under the name: {e}")
swap.close()

# ---- Reports as tables -----------------------------------------------------------------------
def as_text(con, v):
    """A value as tlsql's CSV writes it: SQLite's own text of it (a REAL's 15 digits), NULL as ''."""
    if v is None:
        return ""
    if isinstance(v, float):
        return con.execute("SELECT CAST(? AS TEXT)", (v,)).fetchone()[0]
    return str(v)


def report_via_tlsql(args, name, params=None):
    sets = [a for k, v in (params or {}).items() for a in ("-c", f".parameter set @{k.lstrip('@')} {v}")]
    r = subprocess.run([tlsql, "-q", *args, "--csv", *sets, "--report", name], capture_output=True, text=True,
                       timeout=300)
    return r.returncode, list(csv.reader(io.StringIO(r.stdout))), r.stderr


def report_via_table(con, name, params=None):
    q = f"SELECT * FROM report_{name}" + ("(?)" if params is not None else "")
    try:
        cur = con.execute(q, (json.dumps(params),) if params is not None else ())
        rows = cur.fetchall()
        return 0, [[d[0] for d in cur.description]] + [[as_text(con, v) for v in row] for row in rows], ""
    except sqlite3.Error as e:
        return 1, [], str(e)


def same_report(con, args, name, params=None, label=""):
    rc, want, err = report_via_tlsql(args, name, params)
    grc, got, gerr = report_via_table(con, name, params)
    what = f"report_{name}{'(' + json.dumps(params) + ')' if params else ''} {label}"
    if rc != 0:  # the same error, "report NAME: ..." after tlsql's "error: "
        check(grc == 1 and err.strip().endswith(gerr), f"{what}: the same error ({err.strip()[:90]} | {gerr[:90]})")
    else:
        check(grc == 0 and got == want, f"{what} == tlsql --report {name} ({len(want) - 1} rows): "
                                        f"{gerr}{[r for r in got if r not in want][:2]} {[r for r in want if r not in got][:2]}")
    return want


names = [r[0] for r in con.execute("SELECT name FROM tlsql_reports")]
check(len(names) > 25 and {"ops", "timeline", "timeline_ranks", "diff"} <= set(names), f"tlsql_reports lists {len(names)}")
base, test = (os.path.join(data, f"hta_trace_compare_{x}.json.gz") for x in ("base", "test"))
pair = sqlite3.connect(":memory:")
pair.enable_load_extension(True)
pair.load_extension(lib)
pair.execute("SELECT tlsql_load(?)", (base,))
pair.execute("SELECT tlsql_load(?, 'other')", (test,))
rows_seen = 0
for name in names:
    if name.startswith("diff"):
        rows_seen += len(same_report(pair, [base, "--diff", test], name, label="(diff pair)")) - 1
    else:
        rows_seen += len(same_report(con, [trace], name, label="(bert)")) - 1
check(rows_seen > 150, f"the reports' rows compared: {rows_seen}")
# Parameters: a JSON object (names with or without @), bound as .parameter set binds them.
same_report(con, [trace], "ops", {"top": 3})
same_report(con, [trace], "kernels", {"@top": "2"})
same_report(con, [trace], "timeline", {"linked": 1, "steps": "all"})
same_report(pair, [base, "--diff", test], "diff",
            {"device": "ALL", "control_step": 1010, "test_step": 1010, "sort": "name", "top": "all", "totals": 0})
same_report(pair, [base, "--diff", test], "diff_tree_ops", {"top": 4})
check(con.execute("SELECT count(*) FROM report_ops(json_object('top', :n))", {"n": 2}).fetchone()[0] == 2,
      "bound parameters through json_object: report_ops(json_object('top', :n))")
for q, msg in [("SELECT * FROM report_ops('{\"tpo\": 3}')", "report_ops(params): no parameter @tpo: did you mean @top?"),
               ("SELECT * FROM report_ops('[3]')", "report_ops(params): params must be a JSON object"),
               ("SELECT * FROM report_ops('{')", "report_ops(params): malformed JSON"),
               ("SELECT * FROM report_diff", "diff needs a second trace: SELECT tlsql_load(path, 'other')")]:
    try:
        con.execute(q).fetchall()
        check(False, f"{q}: expected an error")
    except sqlite3.Error as e:
        check(str(e).startswith(msg), f"{q}: {e}")
try:
    empty.execute("SELECT * FROM report_ops").fetchall()
    check(False, "report_ops without a trace: expected an error")
except sqlite3.Error as e:
    check(str(e).startswith("report_ops: no trace in main: SELECT tlsql_load(path) first"), f"report_ops, no trace: {e}")
# Several traces (a saved database of two ranks): timeline's stand-in timeline_ranks, with the rank
# column, as the tlsql binary prints it; overlap per rank.
multi = os.path.join(work, "two_ranks.db")
if os.path.exists(multi):
    os.remove(multi)
subprocess.run([tlsql, os.path.join(data, "coll_rank0.json"), os.path.join(data, "coll_rank1.json"), "-o", multi, "-c",
                "SELECT 1"], capture_output=True, check=True)
two = sqlite3.connect(multi)
two.enable_load_extension(True)
two.load_extension(lib)
want = same_report(two, [multi], "timeline", label="(two ranks)")
check(want and want[0] == ["rank", "type", "time ms", "percent"] and {r[0] for r in want[1:]} == {"0", "1"},
      f"two ranks: timeline is per rank ({want[:2]})")
same_report(two, [multi], "timeline", {"rank": 1}, label="(two ranks)")
same_report(two, [multi], "overlap", {"steps": "all"}, label="(two ranks)")
same_report(two, [multi], "collectives", label="(two ranks)")
# A trace without GPU work: ops is cpu_ops there, in both.
cpu_trace = os.path.join(work, "cpu_only.json")
with open(cpu_trace, "w") as f:
    json.dump({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
        {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 20, "dur": 4}]}, f)
cpu = sqlite3.connect(":memory:")
cpu.enable_load_extension(True)
cpu.load_extension(lib)
cpu.execute("SELECT tlsql_load(?)", (cpu_trace,))
want = same_report(cpu, [cpu_trace], "ops", label="(CPU only)")
check(want and "self_cpu_ms" in want[0], f"CPU-only: ops is cpu_ops ({want[:1]})")
# Report tables run SQL of their own (some of it DIRECTONLY): a file's view cannot call one.
trap = os.path.join(work, "trap.db")
if os.path.exists(trap):
    os.remove(trap)
subprocess.run([tlsql, trace, "-o", trap, "-c", "SELECT 1"], capture_output=True, check=True)
t = sqlite3.connect(trap)
t.execute("CREATE VIEW sneaky AS SELECT * FROM report_summary")
t.commit()
t.enable_load_extension(True)
t.load_extension(lib)
try:
    t.execute("SELECT * FROM sneaky").fetchall()
    check(False, "a view over report_summary: expected an error")
except sqlite3.Error as e:
    check("unsafe use of virtual table" in str(e), f"a view over report_summary is refused: {e}")
check(len(t.execute("SELECT * FROM report_summary").fetchall()) == 1, "typed: report_summary answers")
# The sqlite3 shell with .load: the same table.
r = subprocess.run(["sqlite3", "-csv", "-header", trap, f".load {lib}", "SELECT * FROM report_ops('{\"top\": 5}')"],
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and list(csv.reader(io.StringIO(r.stdout))) == report_via_tlsql([trap], "ops", {"top": 5})[1],
      f"sqlite3 shell: report_ops('{{\"top\": 5}}') == tlsql --report ops {r.stderr.strip()}")

# The notebook example prints what examples/notebook.expected.txt holds.
r = subprocess.run([sys.executable, os.path.join(examples, "notebook.py"), lib], capture_output=True, text=True, timeout=300)
check(r.returncode == 0 and r.stdout == open(os.path.join(examples, "notebook.expected.txt")).read(),
      f"examples/notebook.py output {r.stderr.strip()[-300:]}")

finish()
