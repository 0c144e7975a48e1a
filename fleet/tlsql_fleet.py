#!/usr/bin/python3
"""tlsql fleet: load one trace per rank on a Dask cluster into one small fleet.db.

    tlsql fleet RANKS... [-o fleet.db] [--scheduler tcp://HOST:PORT | --workers N]
    tlsql fleet.db --report fleet_summary        (fleet_stragglers, fleet_collectives, ...)

Map: each Dask task runs the tlsql binary on one rank file and returns the rows of the per-rank
reports (sql/report_fleet_{traces,steps,comm,kernel_time,ops,repairs}.sql). Reduce: this process
writes those rows, with the rank, into fleet.db with Python's sqlite3; the cross-rank reports are
SQL over it (sql/report_fleet_*.sql whose summary starts "fleet.db:"). Nothing here loads a trace
or computes a figure: the one loader and the one definition of each figure stay in tlsql
(docs/fleet.md). Run by `tlsql fleet ...`, which passes its own path as --tlsql.
"""
import argparse
import glob
import hashlib
import json
import logging
import os
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time

# The per-rank reports, in the order each task runs them; each becomes the fleet.db table of its
# name, with its own columns (rank first).
MAP_REPORTS = ("fleet_traces", "fleet_steps", "fleet_comm", "fleet_kernel_time", "fleet_ops", "fleet_repairs")
FORMAT = 1  # fleet.db's layout; a fleet.db of another format or tlsql version is not reused


class FleetError(Exception):
    pass


def trace_files(path):
    """A folder's rank files, the rule tlsql's folder loading uses (session/session.cpp
    trace_files): regular .json / .json.gz files, not execution_details.json, sorted. A glob (a
    quoted pattern no file is named, for a shell's argument limit at thousands of ranks) is its
    matches, each taken the same way. Any other path is a rank file as given, even when missing:
    its error is its rank's row."""
    if not os.path.lexists(path) and any(c in path for c in "*?["):
        matches = sorted(glob.glob(path))
        if not matches:
            raise FleetError(f"{path}: no file matches")
        return [f for m in matches for f in trace_files(m)]
    if not os.path.isdir(path):
        return [path]
    names = sorted(n for n in os.listdir(path)
                   if (n.endswith(".json") and len(n) > 5 or n.endswith(".json.gz") and len(n) > 8)
                   and n != "execution_details.json" and os.path.isfile(os.path.join(path, n)))
    if not names:
        raise FleetError(f"{path}: a directory with no .json or .json.gz trace files")
    return [os.path.join(path, n) for n in names]


def decode_arrays(text):
    """tlsql --json prints one JSON array per statement, one after another."""
    dec, pos, out = json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return out
        value, pos = dec.raw_decode(text, pos)
        out.append(value)


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def rank_task(tlsql, path, previous, keep, threads=None):
    """One rank, on a worker: stat the file; when (size, mtime, sha256) equal the previous run's,
    say so and stop; else run tlsql on it with every per-rank report. A bad file
    is a result (status 'error' and tlsql's one-line message), never an exception: exceptions are
    kept for what a retry can cure (the worker's own failures)."""
    t0 = time.monotonic()
    res = {"file": path, "status": "error", "error": None, "rank": None, "events": None, "bytes": None, "mtime_ns": None,
           "sha256": None, "seconds": None, "peak_rss_mb": None, "worker": socket.gethostname(), "kept": None, "tables": {}}
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file")
        res.update(bytes=st.st_size, mtime_ns=st.st_mtime_ns)
        # The hash decides a skip only when size and mtime already match; otherwise it is needed
        # only for the next run, and is computed while tlsql loads (the file is read twice, the
        # second time from the page cache, at no cost in wall time).
        if previous is not None and tuple(previous[:2]) == (st.st_size, st.st_mtime_ns):
            res["sha256"] = sha256_of(path)
            if res["sha256"] == previous[2] and (keep is None or os.path.exists(keep)):
                res.update(status="unchanged", seconds=time.monotonic() - t0)
                return res
    except OSError as e:
        res["error"] = f"{path}: cannot read: {e.strerror}"
        return res
    cmd = [tlsql, "-q", "--json", "--bail", path] + (["-o", keep] if keep else [])
    if threads:  # the worker's share of its machine's cores (main: --rank-threads)
        cmd += ["--threads", str(threads)]
    for r in MAP_REPORTS:
        cmd += ["--report", r]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # wait4, not communicate: the child's own peak memory (ru_maxrss), which the bench reports.
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        hash_error = None
        try:
            if res["sha256"] is None:
                res["sha256"] = sha256_of(path)
        except OSError as e:
            hash_error = f"{path}: cannot read: {e.strerror}"
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if hash_error:
        res["error"] = hash_error
        return res
    res.update(seconds=time.monotonic() - t0, peak_rss_mb=round(usage.ru_maxrss / 1024, 1))
    lines = [l for l in errors.splitlines() if l.strip()]
    if p.returncode != 0:
        died = (f"{path}: tlsql was killed by signal {-p.returncode}" + (" (out of memory?)" if p.returncode == -9 else "")
                if p.returncode < 0 else f"{path}: tlsql exited with {p.returncode}")
        msg = next((l for l in lines if "error" in l), died if p.returncode < 0 or not lines else lines[-1])
        res["error"] = msg.removeprefix("tlsql: error: ")
        return res
    try:
        arrays = decode_arrays(text)
    except ValueError as e:
        res["error"] = f"{path}: tlsql's JSON output does not parse: {e}"
        return res
    if len(arrays) != len(MAP_REPORTS):
        res["error"] = f"{path}: tlsql printed {len(arrays)} results for {len(MAP_REPORTS)} reports"
        return res
    res["tables"] = dict(zip(MAP_REPORTS, arrays))
    traces = res["tables"]["fleet_traces"]
    if len(traces) != 1:
        res["error"] = f"{path}: {len(traces)} traces in one rank file"
        return res
    if traces[0].get("rank") is None:
        res["error"] = f"{path}: no rank: the trace's distributedInfo does not say which rank it is"
        return res
    res.update(status="ok", rank=traces[0]["rank"], events=traces[0].get("events"), kept=keep)
    return res


def report_columns(tlsql):
    """The per-rank reports' columns, from tlsql itself (each report's table, prepared on an empty
    session): fleet.db's tables take them, so a report's columns are written once, in its SQL."""
    sql = " ".join(f"SELECT name FROM pragma_table_info('report_{r}');" for r in MAP_REPORTS)
    p = subprocess.run([tlsql, "-q", "--json", "--bail", "-c", sql], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise FleetError(f"{tlsql}: cannot read the fleet reports' columns: {p.stderr.strip()}")
    arrays = decode_arrays(p.stdout)
    if len(arrays) != len(MAP_REPORTS):
        raise FleetError(f"{tlsql}: printed {len(arrays)} column lists for {len(MAP_REPORTS)} fleet reports")
    cols = {r: [row["name"] for row in arr] for r, arr in zip(MAP_REPORTS, arrays)}
    for r, c in cols.items():
        if not c or c[0] != "rank":
            raise FleetError(f"{tlsql}: " + (f"has no report {r} (a tlsql older than {__file__}?)" if not c else
                                             f"report {r}'s first column is {c[0]}, not rank"))
    return cols


def tlsql_version(tlsql):
    p = subprocess.run([tlsql, "--version"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise FleetError(f"{tlsql}: cannot run it: {p.stderr.strip() or p.returncode}")
    return p.stdout.strip()


def qi(name):
    return '"' + name.replace('"', '""') + '"'


RANK_COLUMNS = ("file", "rank", "status", "error", "events", "bytes", "mtime_ns", "sha256", "seconds",
                "peak_rss_mb", "worker", "kept")


def create_tables(db, columns):
    db.execute("CREATE TABLE fleet_meta(key TEXT PRIMARY KEY, value)")
    # One row per rank file asked for, whatever became of it: status ok, error (with the error) or
    # unchanged rows reused from the previous fleet.db (then 'ok' again: their rows are kept).
    db.execute("CREATE TABLE fleet_rank(file TEXT PRIMARY KEY, rank INTEGER, status TEXT NOT NULL, error TEXT, "
               "events INTEGER, bytes INTEGER, mtime_ns INTEGER, sha256 TEXT, seconds REAL, peak_rss_mb REAL, "
               "worker TEXT, kept TEXT)")
    db.execute("CREATE INDEX fleet_rank_rank ON fleet_rank(rank)")
    for r, cols in columns.items():
        # Untyped columns: each value keeps the type tlsql printed (integer, real, text, NULL).
        db.execute(f"CREATE TABLE {r}({', '.join(qi(c) for c in cols)})")
        db.execute(f"CREATE INDEX {r}_rank ON {r}(rank)")


def previous_run(path, version, columns):
    """(size, mtime_ns, sha256) per file of the previous fleet.db's ok ranks, when that file was
    written by this tlsql with these columns; else nothing is reused."""
    if not os.path.exists(path):
        return {}
    try:
        old = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        meta = dict(old.execute("SELECT key, value FROM fleet_meta"))
        if meta.get("format") != FORMAT or meta.get("tlsql") != version or json.loads(meta.get("columns", "null")) != columns:
            return {}
        rows = old.execute("SELECT file, bytes, mtime_ns, sha256 FROM fleet_rank WHERE status = 'ok'").fetchall()
        old.close()
    except (sqlite3.Error, ValueError):
        raise FleetError(f"{path}: exists and is not a fleet.db tlsql fleet wrote; remove it or choose another -o")
    return {f: (b, m, s) for f, b, m, s in rows}


def connect(args):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as e:
        raise FleetError(f"Dask distributed is not installed for {sys.executable} ({e}): apt-get install python3-distributed")
    # distributed's own logging goes to stderr line by line; the user sees tlsql's lines and errors.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if args.scheduler:
        try:
            return Client(args.scheduler, timeout=args.connect_timeout), None
        except Exception as e:  # OSError, TimeoutError, ValueError (a malformed address)
            raise FleetError(f"cannot reach the Dask scheduler at {args.scheduler} within {args.connect_timeout:g} s "
                             f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no answer'})")
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run(args):
    tlsql = os.path.abspath(args.tlsql)
    version = tlsql_version(tlsql)
    columns = report_columns(tlsql)
    files = []
    for p in args.ranks:
        files += trace_files(p)
    files = list(dict.fromkeys(os.path.abspath(f) for f in files))
    out = os.path.abspath(args.output)
    if out in files:
        raise FleetError(f"{args.output}: is one of the rank files")
    previous = previous_run(out, version, columns)
    keeps = keep_paths(files, args.keep) if args.keep else {}

    client, cluster = connect(args)  # first: an unreachable scheduler leaves no file behind
    tmp = f"{out}.tmp-{os.getpid()}"
    try:
        wall, counts, done_bytes = reduce_into(tmp, out, args, client, tlsql, version, columns, files, previous, keeps)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    os.replace(tmp, out)
    errors = db_errors(out)
    mb = done_bytes / 1e6
    print(f"fleet: {len(files)} rank files: {counts['ok']} loaded, {counts['unchanged']} unchanged, "
          f"{len(errors)} failed; {mb:.2f} MB in {wall:.1f} s ({mb / max(wall, 1e-9):.2f} MB/s) -> {args.output}",
          file=sys.stderr)
    return 1 if errors else 0


def reduce_into(tmp, out, args, client, tlsql, version, columns, files, previous, keeps):
    """Submits one task per rank file and writes each result into the scratch database `tmp` as it
    comes (rows are never all held at once); the previous fleet.db `out` gives unchanged ranks' rows."""
    from dask.distributed import as_completed
    if os.path.exists(tmp):
        os.remove(tmp)
    db = sqlite3.connect(tmp)
    db.execute("PRAGMA journal_mode=OFF")  # a scratch file renamed into place at the end
    create_tables(db, columns)
    if previous:
        db.execute("ATTACH ? AS old", (out,))
    t_start = time.monotonic()
    counts = {"ok": 0, "error": 0, "unchanged": 0}
    done_bytes = 0
    futures = {client.submit(rank_task, tlsql, f, previous.get(f), keeps.get(f), args.rank_threads, key=f"tlsql-fleet-{i}-{f}",
                             pure=False, retries=args.retries): f for i, f in enumerate(files)}
    for n, fut in enumerate(as_completed(list(futures)), 1):
        f = futures.pop(fut)
        try:
            res = fut.result()
        except Exception as e:  # the task failed on every try (KilledWorker: its workers died)
            res = {"file": f, "status": "error", "error": f"{f}: worker failed: {type(e).__name__}: {e}", "tables": {}}
        fut.release()  # its rows are in fleet.db now: the cluster need not hold them
        store(db, res, columns)
        counts[res["status"]] += 1
        done_bytes += res.get("bytes") or 0
        if not args.quiet:
            progress(n, len(files), res, done_bytes, time.monotonic() - t_start)
    duplicate_ranks(db, columns)
    wall = time.monotonic() - t_start
    meta = {"format": FORMAT, "tlsql": version, "columns": json.dumps(columns), "created": time.time(),
            "ranks": len(files), "wall_s": round(wall, 3),
            "scheduler": args.scheduler or f"LocalCluster({args.workers} processes)"}
    db.executemany("INSERT INTO fleet_meta VALUES (?, ?)", meta.items())
    db.commit()
    if previous:
        db.execute("DETACH old")
    db.close()
    return wall, counts, done_bytes


def keep_paths(files, folder):
    """--keep: each rank's saved database, DIR/NAME.db from the file's name less .json(.gz); a name
    two files share gets its position in the list too."""
    os.makedirs(folder, exist_ok=True)
    folder = os.path.abspath(folder)
    stems = [os.path.basename(f).removesuffix(".gz").removesuffix(".json") for f in files]
    seen = {s: stems.count(s) for s in stems}
    return {f: os.path.join(folder, f"{s}.db" if seen[s] == 1 else f"{s}-{i}.db") for i, (f, s) in
            enumerate(zip(files, stems))}


def store(db, res, columns):
    f = res["file"]
    if res["status"] == "unchanged":
        # The previous run's rows of this file, kept as they were.
        db.execute("INSERT INTO fleet_rank SELECT * FROM old.fleet_rank WHERE file = ?", (f,))
        for r in columns:
            db.execute(f"INSERT INTO {r} SELECT * FROM old.{r} WHERE rank = (SELECT rank FROM old.fleet_rank "
                       "WHERE file = ?)", (f,))
        return
    db.execute(f"INSERT INTO fleet_rank VALUES ({', '.join('?' * len(RANK_COLUMNS))})",
               [res.get(c) for c in RANK_COLUMNS])
    if res["status"] != "ok":
        return
    for r, cols in columns.items():
        rows = res["tables"][r]
        for row in rows:
            if list(row) != cols:  # never expected: the same binary printed other columns
                raise FleetError(f"{f}: report {r} printed columns {list(row)}, not {cols}")
        db.executemany(f"INSERT INTO {r} VALUES ({', '.join('?' * len(cols))})",
                       [[row[c] for c in cols] for row in rows])


def duplicate_ranks(db, columns):
    """Two files that say they are the same rank cannot both be that rank: both are errors and
    that rank's rows go (which file is right is not for tlsql to guess)."""
    dups = db.execute("SELECT rank, group_concat(file, ', ') FROM fleet_rank WHERE status = 'ok' "
                      "GROUP BY rank HAVING count(*) > 1").fetchall()
    for rank, names in dups:
        db.execute("UPDATE fleet_rank SET status = 'error', error = file || ': rank ' || rank || "
                   "' is also the rank of another file (' || ? || ')' WHERE status = 'ok' AND rank = ?",
                   (names, rank))
        for r in columns:
            db.execute(f"DELETE FROM {r} WHERE rank = ?", (rank,))


def db_errors(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT error FROM fleet_rank WHERE status = 'error' ORDER BY file").fetchall()
    con.close()
    for (e,) in rows:
        print(f"tlsql fleet: error: {e}", file=sys.stderr)
    return rows


def progress(n, total, res, done_bytes, elapsed):
    name = os.path.basename(res["file"])
    if res["status"] == "error":
        what = f"{name}: failed"
    elif res["status"] == "unchanged":
        what = f"{name}: unchanged, rows kept"
    else:
        mb, s = (res["bytes"] or 0) / 1e6, res["seconds"] or 0
        what = f"rank {res['rank']} ({name}): {mb:.2f} MB in {s:.2f} s, {mb / max(s, 1e-9):.2f} MB/s"
    print(f"fleet: {n}/{total} {what}; all {done_bytes / 1e6 / max(elapsed, 1e-9):.2f} MB/s", file=sys.stderr,
          flush=True)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 1, as every tlsql error (argparse: usage, exit 2)
        print(f"tlsql fleet: error: {message} (tlsql fleet --help)", file=sys.stderr)
        sys.exit(1)


def main(argv):
    p = Parser(prog="tlsql fleet", description=__doc__.split("\n\n")[0],
                                epilog="docs/fleet.md: the tables, the reports, a scheduler by hand and under Slurm.")
    p.add_argument("ranks", nargs="+", metavar="RANKS", help="rank trace files or folders of them (one per rank)")
    p.add_argument("-o", "--output", default="fleet.db", help="the fleet database to write (default fleet.db); "
                   "a rerun reuses the rows of rank files unchanged since (size, mtime, SHA-256)")
    p.add_argument("--scheduler", help="a running Dask scheduler (tcp://HOST:PORT); default: a local cluster")
    p.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                   help="worker processes of the local cluster (default min(4, CPUs))")
    p.add_argument("--retries", type=int, default=2, help="retries of a rank task whose worker failed (default 2)")
    p.add_argument("--connect-timeout", type=float, default=5.0, help="seconds to reach --scheduler (default 5)")
    p.add_argument("--tlsql", required=True, help="the tlsql binary the workers run (tlsql fleet passes its own)")
    p.add_argument("--keep", metavar="DIR", help="also save each rank's database there (NAME.db, as tlsql -o: "
                   "reopen one with tlsql DIR/NAME.db); workers must reach DIR")
    p.add_argument("--rank-threads", type=int, metavar="N",
                   help="load threads of each rank's tlsql (its --threads); default: with the local cluster, "
                   "the CPUs over --workers, so that the workers do not each take every core; with --scheduler, "
                   "tlsql's own default (every CPU of the worker's machine: set this when a machine runs several workers)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be 1 or more")
    if args.rank_threads is not None and args.rank_threads < 1:
        p.error("--rank-threads must be 1 or more")
    if args.rank_threads is None and not args.scheduler:
        args.rank_threads = max(1, len(os.sched_getaffinity(0)) // args.workers)
    try:
        return run(args)
    except FleetError as e:
        print(f"tlsql fleet: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tlsql fleet: interrupted", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
