#!/usr/bin/env python3
"""Every column of every row equals an independent parse (Python's json with Decimal), on traces
large enough to cross every growth and chunk boundary of the loader: many small events (more rows
than the loader reserves up front, so its row array must grow while parser threads are filling
it), events larger than a chunk, and both .json and .json.gz. usage: exact_rows.py TLSQL WORK_DIR"""
import csv, gzip, io, json, os, random, shutil, subprocess, sys
csv.field_size_limit(1 << 30)
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, work = sys.argv[1:3]
work = os.path.join(work, "exact_rows")
os.makedirs(work, exist_ok=True)
rng = random.Random(15)


def small_events(n):
    # ~45 bytes each: the loader reserves rows for ~100 bytes of JSON per event (x8 for gzip),
    # so these force the row array to grow several times mid-load.
    out = []
    for i in range(n):
        e = {"ph": "X", "name": f"n{i % 97}", "pid": i % 7, "tid": i % 5, "ts": f"{i}.{i % 1000:03d}", "dur": i % 13}
        if i % 11 == 0:
            e["args"] = {"correlation": i}
        if i % 17 == 0:
            e = {"ph": "i", "name": "m", "ts": i, "pid": "P", "tid": 3}
        out.append(e)
    return out


def big_events(n, size):
    # Each event larger than a scanner chunk boundary step, so events straddle chunks.
    return [{"ph": "X", "cat": "cpu_op", "name": f"big{i}", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5,
             "args": {"External id": i, "blob": "x" * (size + rng.randrange(1000)), "n": [i, i + 0.5]}}
            for i in range(n)]


def keyed_events():
    # The store writes args keys as tokens into a dictionary of at most 65,536 keys (src/args_text.h):
    # more distinct keys than that (the later ones stay text), keys reused after the dictionary is
    # full, keys and strings with escaped quotes and backslashes, ':' inside strings, nested
    # objects, UTF-8, a key over 256 bytes. Each must come back with its keys in their order.
    out = [{"ph": "i", "name": "k", "pid": 1, "tid": 1, "ts": i, "args": {f"key {i}": i}} for i in range(70000)]
    odd = [{"a\"b": 1, "c\\": {"d\"": [1, {"e": "f\":", "g": "\\"}]}, "h": "x\\\"y"},
           {"key 3": 0, "key 69999": 1, "é ü": "ÿ", "\u0001": "\u0002"},
           {"x" * 300: "long", "": ""}, {"n": {"m": {"l": {}}}, "arr": [{"key 5": 5}, []]}]
    out += [{"ph": "i", "name": "k", "pid": 1, "tid": 1, "ts": 70000 + i, "args": a} for i, a in enumerate(odd * 50)]
    return out


# Ids at and across the boundaries of the store's 32-bit ids (src/event_store.h, Id32: values
# outside [-2^30, 2^31) are kept aside, the row holds a code); -2^63 is the loader's NULL marker.
WIDE = [0, 1, -1, 2**31 - 1, 2**31, -2**30, -2**30 - 1, -2**31, -2**31 + 1, 2**32, 2**40, -2**40, 2**63 - 1,
        -2**63 + 1, 12345678901234]


def wide_events():
    out = []
    for i in range(3000):  # every id field, each value many times
        v, w = WIDE[i % len(WIDE)], WIDE[(i * 7 + 3) % len(WIDE)]
        out.append({"ph": "i", "cat": "x", "name": "ids", "pid": v, "tid": w, "ts": i, "id": w,
                    "args": {"correlation": w, "External id": v, "Sequence number": w, "stream": v}})
    t = 10_000
    for v in WIDE:  # a launch and its kernel per correlation id: each kernel's parent is its launch
        out.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2**40, "tid": -2**35,
                    "ts": t, "dur": 2, "args": {"correlation": v}})
        out.append({"ph": "X", "cat": "kernel", "name": f"k{v}", "pid": 0, "tid": 2**33, "ts": t + 5, "dur": 1,
                    "args": {"correlation": v, "stream": 2**33, "device": 0}})
        t += 10
    # A repeated key: the last value counts, a number after a label too (write() renames DUP_*).
    out.append({"ph": "i", "name": "dup", "pid": "P", "tid": "T", "id": "F", "DUP_pid": 5, "DUP_tid": 2**40,
                "DUP_id": 7, "ts": 1})
    # Threads told apart by ids beyond 32 bits: only the op on the same (pid, tid) nests.
    out.append({"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 2**40, "tid": 2**35, "ts": t, "dur": 10, "args": {}})
    out.append({"ph": "X", "cat": "cpu_op", "name": "inner", "pid": 2**40, "tid": 2**35, "ts": t + 1, "dur": 2, "args": {}})
    out.append({"ph": "X", "cat": "cpu_op", "name": "apart", "pid": 2**40, "tid": 2**35 + 1, "ts": t + 1, "dur": 2, "args": {}})
    return out


def write(name, events, gz):
    text = json.dumps({"traceEvents": events}, separators=(",", ":")).replace('"ts":"', '"ts":').replace('","dur"', ',"dur"')
    text = text.replace('"DUP_', '"')
    path = os.path.join(work, name + (".json.gz" if gz else ".json"))
    data = text.encode()
    with open(path, "wb") as f:
        f.write(gzip.compress(data, 1) if gz else data)
    return path, len(data)


def pairs(p):
    # Objects as their (key, value) pairs in order: args must come back with its keys as written.
    return p


def ns(v):
    return None if v is None else int((Decimal(str(v)) * 1000).to_integral_value())


def expected_rows(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    rows = []
    for uid, e in enumerate(dict(json.loads(raw, parse_float=Decimal, object_pairs_hook=pairs))["traceEvents"]):
        e = dict(e)
        a = dict(e.get("args") or [])
        ts, dur = ns(e.get("ts")), ns(e.get("dur"))
        rows.append([uid, e.get("ph"), e.get("name"), e.get("pid"), e.get("tid"), ts, dur,
                     ts + dur if ts is not None and dur is not None else None,
                     a.get("correlation"), a.get("External id"), a.get("Sequence number"), a.get("stream"),
                     e.get("id"), e.get("args")])
    return rows


def as_value(text):
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return text


COLUMNS = "ph, name, pid, tid, ts, dur, end, correlation, external_id, seq, stream, flow_id, args"


def loaded_rows(path, env=None, by_trace=False):
    """The rows tlsql loads from `path`; with `by_trace` (a folder), {trace file: its rows}, each
    uid counted from its trace's first."""
    q = (f"SELECT t.path, e.uid - t.uid_base, {', '.join('e.' + c for c in COLUMNS.split(', '))} "
         "FROM event e JOIN trace t ON t.id = e.trace ORDER BY e.uid" if by_trace else
         f"SELECT uid, {COLUMNS} FROM event ORDER BY uid")
    r = subprocess.run([tlsql, path, "--csv", "-c", q], capture_output=True, text=True, timeout=600, env=env)
    check(r.returncode == 0, f"{os.path.basename(path)}: loads ({r.stderr.strip()})")
    rows, traces = [], {}
    for rec in list(csv.reader(io.StringIO(r.stdout)))[1:]:
        if by_trace:
            rows = traces.setdefault(os.path.basename(rec[0]), [])
            rec = rec[1:]
        row = [as_value(x) for x in rec[:-1]]
        row.append(json.loads(rec[-1], parse_float=Decimal, object_pairs_hook=pairs) if rec[-1] else None)
        rows.append(row)
    return traces if by_trace else rows


def compare(path, json_bytes):
    want, got = expected_rows(path), loaded_rows(path)
    check(len(got) == len(want), f"{os.path.basename(path)} ({json_bytes >> 20} MiB JSON): {len(got)} rows == {len(want)}")
    bad = [(w, g) for w, g in zip(want, got) if w != g]
    check(not bad, f"{os.path.basename(path)}: every column of every row matches the independent parse"
          + (f" ({len(bad)} differ, first: want {bad[0][0]!r:.300} got {bad[0][1]!r:.300})" if bad else ""))


small = small_events(int(os.environ.get("TLSQL_EXACT_EVENTS", "450000")))
big = big_events(40, 600_000)
for gz in (False, True):
    compare(*write("small", small, gz))
    compare(*write("big", big, gz))
    compare(*write("mixed", small[:100000] + big[:12] + small[100000:200000], gz))
compare(*write("keyed", keyed_events(), False))
# Saved (-o: the rows written as b-tree pages by src/btree_writer.cpp; 600 KB args overflow
# their page) and reopened: every row as parsed.
for name, threads in (("mixed", "3"), ("keyed", "1")):
    path = os.path.join(work, name + ".json")
    db = os.path.join(work, name + ".db")
    if os.path.exists(db):
        os.remove(db)
    r = subprocess.run([tlsql, "--threads", threads, path, "-o", db, "-c", "SELECT 1"], capture_output=True, text=True,
                       timeout=600)
    check(r.returncode == 0, f"{name}: saved with --threads {threads} ({r.stderr.strip()[:200]})")
    want, got = expected_rows(path), loaded_rows(db)
    check(got == want, f"{name}.db (--threads {threads}): every column of every saved row matches the independent parse"
          f" ({len(got)} rows, {sum(w != g for w, g in zip(want, got))} differ)")
wide, _ = write("wide", wide_events(), False)
compare(wide, 0)
# A folder loaded with 2 MiB pages asked for (the user's glibc.malloc.hugetlb=1; tlsql asks so
# itself for 32 MiB of input and more): its small traces' rows lie side by side in the store's
# RowSpace (src/event_store.h), each fitted once read, grown in place while it is the last one
# (small events: more rows than reserved), or moved to a mapping of its own (past a 64 MiB block
# of the space; larger traces have one from the start). Each trace's rows as its file's parse.
folder = os.path.join(work, "folder")
shutil.rmtree(folder, ignore_errors=True)
os.makedirs(folder)
# (In load order, rows of ~65 bytes of JSON: a, b, d, e, f, g in the space's first block, a and e
# grown in place; c a mapping of its own (17 MB reserved); h grown past the block's end, moved out.)
parts = [("a", small[:60000]), ("b", big[:6]), ("c", small[:300000]), ("d", keyed_events()[:3000]),
         ("e", small[:250000]), ("f", wide_events()), ("g", small[100000:350000]), ("h", small[200000:400000])]
for name, events in parts:
    os.replace(write(name, events, False)[0], os.path.join(folder, name + ".json"))
env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
got = loaded_rows(folder, env, by_trace=True)
for name, _ in parts:
    want = expected_rows(os.path.join(folder, name + ".json"))
    check(got.get(name + ".json") == want, f"folder with 2 MiB pages, {name}.json: every row as its parse "
          f"({len(got.get(name + '.json', []))} rows of {len(want)})")
r = subprocess.run([tlsql, wide, "--csv", "-c",
                    "SELECT k.correlation, r.correlation FROM event k JOIN event r ON r.uid = k.parent "
                    "WHERE k.kind = 'kernel' AND r.kind = 'runtime' ORDER BY k.uid"], capture_output=True, text=True)
got = [tuple(map(int, x)) for x in list(csv.reader(io.StringIO(r.stdout)))[1:]]
check(got == [(v, v) for v in WIDE], f"wide ids: each kernel's parent is the launch of its correlation ({got})")
r = subprocess.run([tlsql, wide, "--csv", "-c", "SELECT c.name, p.name FROM event c LEFT JOIN event p "
                    "ON p.uid = c.parent WHERE c.name IN ('inner', 'apart') ORDER BY c.uid"], capture_output=True, text=True)
check(r.stdout.split() == ["name,name", "inner,outer", "apart,"], f"wide ids: threads apart by tid ({r.stdout!r})")
finish()
