#!/usr/bin/env python3
"""The loadable extension in the hosts people use, against the same queries through the tlsql binary:
Debian's python3 (sqlite3 module, pandas via examples/notebook.py) and the sqlite3 shell's .load;
on a connection without tlsql tables the functions give clear errors, not crashes.
usage: check_extension.py TLSQL LIBTLSQL_SO DATA_DIR EXAMPLES_DIR WORK_DIR"""
import csv, io, os, sqlite3, subprocess, sys
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

# The notebook example prints what examples/notebook.expected.txt holds.
r = subprocess.run([sys.executable, os.path.join(examples, "notebook.py"), lib], capture_output=True, text=True, timeout=300)
check(r.returncode == 0 and r.stdout == open(os.path.join(examples, "notebook.expected.txt")).read(),
      f"examples/notebook.py output {r.stderr.strip()[-300:]}")

finish()
