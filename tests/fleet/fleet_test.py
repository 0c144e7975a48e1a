#!/usr/bin/python3
"""tlsql fleet, end to end through the binary (docs/fleet.md).

    fleet_test.py TLSQL SOURCE_DIR [SHARED_DIR [LIBTLSQL]]

Checks, each against a path that does not go through the fleet:
- every fleet.db table a per-rank report fills equals that report's rows on the folder loaded in
  one process (`tlsql FOLDER --report R`), on tests/data's two collective ranks and on the 8 DLRM
  ranks of ../shared (skipped when absent); fleet_collectives (over fleet.db) equals the
  collectives report on the folder, row for row;
- the kernel times per rank and name, and fleet_kernels' cross-rank figures (median, outliers),
  from Python over the raw JSON; fleet_stragglers' per-step medians, ratios and flags and
  fleet_summary's step time from Python over the stored step rows;
- --keep leaves each rank's saved database, which gives that rank's rows; the extension's
  report_fleet_* tables on fleet.db equal `tlsql fleet.db --report`;
- a truncated, a corrupt and a missing rank file: one fleet_rank row each with its error, the
  good rank complete, exit 1 and one line per error; fleet_health lists them and the missing rank;
- a rerun (the ranks named by a quoted glob) skips unchanged files (rows kept) and reloads a file
  whose mtime changed;
- an unreachable scheduler: one line, exit 1, within seconds;
- a scheduler and two workers started as separate processes on 127.0.0.1, one worker killed
  (SIGKILL) while it runs a rank: Dask runs that rank again elsewhere and fleet.db is whole;
- a fleet.db whose fleet table is a view is refused on open; fleet and trace reports each refuse
  the other kind of database with one line.
"""
import gzip
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

TLSQL, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
DATA = os.path.join(SRC, "tests", "data")
SHARED = sys.argv[3] if len(sys.argv) > 3 else os.path.join(SRC, "..", "shared")
DLRM = os.path.join(SHARED, "traces", "dlrm_8xv100")
LIB = sys.argv[4] if len(sys.argv) > 4 else None
MAP = ("fleet_traces", "fleet_steps", "fleet_comm", "fleet_kernel_time", "fleet_ops", "fleet_repairs")
PY = "/usr/bin/python3"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def run(args, timeout=120, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kw)


def fleet(ranks, out, *extra, timeout=120):
    return run([TLSQL, "fleet", *ranks, "-o", out, *extra], timeout=timeout)


def one_process(folder, report, *pre):
    """A report's rows on the folder loaded by one tlsql process, as JSON values."""
    cmd = [TLSQL, "-q", "--json", folder, *[x for p in pre for x in ("-c", p)], "--report", report]
    p = run(cmd)
    assert p.returncode == 0, (cmd, p.stderr)
    return json.loads(p.stdout)


def table(db, name):
    con = sqlite3.connect(db)
    cur = con.execute(f"SELECT * FROM {name}")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    con.close()
    return rows


def canon(rows):
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def same_as_one_process(db, folder, label, nonempty_exempt=("fleet_repairs",)):
    for r in MAP:
        want, got = one_process(folder, r), table(db, r)
        check(len(got) > 0 or r in nonempty_exempt, f"{label}: {r} has rows")
        check(canon(got) == canon(want), f"{label}: fleet.db {r} = `tlsql folder --report {r}` "
                                         f"({len(got)} vs {len(want)} rows)")
    want = one_process(folder, "collectives", ".parameter set @top 1000000")
    p = run([TLSQL, "-q", "--json", db, "-c", ".parameter set @top 1000000", "--report", "fleet_collectives"])
    check(p.returncode == 0, f"{label}: fleet_collectives runs: {p.stderr}")
    got = json.loads(p.stdout) if p.returncode == 0 else []
    check(len(want) > 0 and got == want, f"{label}: fleet_collectives = the collectives report on the folder, "
                                         f"in order ({len(got)} vs {len(want)} rows)")


def raw_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        t = json.load(f)
    return t, t["traceEvents"] if isinstance(t, dict) else t


def kernel_times_from_json(files):
    """(rank, name) -> (launches, total ns) over kernels, memcpys and memsets, from the JSON."""
    out = {}
    for path in files:
        t, events = raw_events(path)
        rank = t["distributedInfo"]["rank"]
        for e in events:
            if e.get("ph") == "X" and str(e.get("cat", "")).lower() in ("kernel", "gpu_memcpy", "gpu_memset"):
                n, ns = out.get((rank, e["name"]), (0, 0))
                # µs with up to 3 decimals in the text: exact ns
                out[(rank, e["name"])] = (n + 1, ns + round(float(e["dur"]) * 1000))
    return out


def check_kernels(db, files, label):
    want = kernel_times_from_json(files)
    got = {(r["rank"], r["name"]): (r["count"], round(r["total_us"] * 1000)) for r in table(db, "fleet_kernel_time")}
    check(got == want, f"{label}: fleet_kernel_time = per rank and name launches and ns from the JSON "
                       f"({len(got)} vs {len(want)} keys)")
    # fleet_kernels over fleet.db against the same JSON figures, every name
    p = run([TLSQL, "-q", "--json", db, "-c", ".parameter set @top 1000000", "--report", "fleet_kernels"])
    check(p.returncode == 0, f"{label}: fleet_kernels runs: {p.stderr}")
    rows = {r["name"]: r for r in json.loads(p.stdout)} if p.returncode == 0 else {}
    names = {n for _, n in want}
    check(set(rows) == names, f"{label}: fleet_kernels has one row per kernel name of the JSON")
    for name in names:
        per = {rk: ns for (rk, n), (_, ns) in want.items() if n == name}
        r = rows.get(name, {})
        slowest = min(per, key=lambda rk: (-per[rk], rk))
        med = statistics.median(per.values())
        outliers = sorted((rk for rk in per if per[rk] >= 1.1 * med and med > 0), key=lambda rk: (-per[rk], rk))
        ok = (r.get("ranks") == len(per) and r.get("launches") == sum(want[(rk, name)][0] for rk in per)
              and abs(r.get("total_ms", -1) - sum(per.values()) / 1e6) < 0.0006
              and abs(r.get("median_rank_ms", -1) - med / 1e6) < 0.0006
              and abs(r.get("max_rank_ms", -1) - max(per.values()) / 1e6) < 0.0006
              and r.get("outliers") == len(outliers)
              and [int(x.split(":")[0]) for x in (r.get("outlier_ranks") or "").split()] == outliers[:10]
              and (not outliers or outliers[0] == slowest))
        check(ok, f"{label}: fleet_kernels {name[:60]}: {r} vs JSON {per}")


def union_ns(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def check_step_split(db, files, label):
    """fleet_steps' compute / comm / exposed comm from the JSON: a ProfilerStep's GPU work is what
    runtime calls inside its window launched (by correlation id); communication = kernels named
    nccl*, computation = the other kernels and memsets (memcpys on neither side), each a union of
    intervals; exposed = the union of both less computation's."""
    want = {}
    for path in files:
        t, events = raw_events(path)
        rank = t["distributedInfo"]["rank"]
        ns = lambda v: round(float(v) * 1000)
        steps = [(int(e["name"].split("#")[1]), ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
                 if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("ph") == "X"]
        launch = {e["args"]["correlation"]: ns(e["ts"]) for e in events
                  if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
        for it, a, b in steps:
            comp, comm = [], []
            for e in events:
                cat = e.get("cat")
                if cat not in ("kernel", "gpu_memset") or not (a <= launch.get(e["args"].get("correlation"), -1) <= b):
                    continue
                span = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
                (comm if cat == "kernel" and e["name"].lower().startswith("nccl") else comp).append(span)
            c, m = union_ns(comp), union_ns(comm)
            want[(rank, it)] = (round(c / 1e6, 3), round(m / 1e6, 3), round((union_ns(comp + comm) - c) / 1e6, 3))
    got = {(r["rank"], r["iteration"]): (r["compute_ms"], r["comm_ms"], r["exposed_comm_ms"])
           for r in table(db, "fleet_steps")}
    check(len(want) > 0 and got == want, f"{label}: fleet_steps compute / comm / exposed comm ms = the JSON's: "
                                         f"{got} vs {want}")


def check_stragglers(db, label):
    """fleet_stragglers and fleet_summary against Python over the stored per-rank step rows."""
    steps = table(db, "fleet_steps")
    rows = json.loads(run([TLSQL, "-q", "--json", db, "-c", ".parameter set @top 1000000",
                           "--report", "fleet_stragglers"]).stdout)
    want = {}
    for it in {s["iteration"] for s in steps}:
        these = [s for s in steps if s["iteration"] == it]
        if len(these) < 2:
            continue
        med = statistics.median(s["compute_ms"] for s in these)
        for s in these:
            want[(it, s["rank"])] = (round(s["compute_ms"] / med, 3), int(s["compute_ms"] >= 1.1 * med))
    got = {(r["iteration"], r["rank"]): (r["compute_vs_median"], r["straggler"]) for r in rows}
    check(len(want) > 0 and got == want, f"{label}: fleet_stragglers = per step medians in Python: {got} vs {want}")
    ratios = [r["compute_vs_median"] for r in rows]
    check(ratios == sorted(ratios, reverse=True), f"{label}: fleet_stragglers slowest first")
    per_rank = {}
    for s in steps:
        per_rank.setdefault(s["rank"], []).append(s["wall_ms"])
    means = {rk: statistics.fmean(v) for rk, v in per_rank.items()}
    summ = json.loads(run([TLSQL, "-q", "--json", db, "--report", "fleet_summary"]).stdout)[0]
    check(abs(summ["step_ms_median"] - statistics.median(means.values())) < 0.0006
          and abs(summ["step_ms_max"] - max(means.values())) < 0.0006
          and summ["slowest_rank"] == min(means, key=lambda rk: (-means[rk], rk)),
          f"{label}: fleet_summary's step time over the ranks: {summ} vs {means}")


def progress_lines(stderr, n):
    lines = [l for l in stderr.splitlines() if l.startswith("fleet: ") and "/" in l.split()[1]]
    return len(lines) == n and all("MB/s" in l for l in lines)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    t_all = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="tlsql_fleet_")
    try:
        small = os.path.join(tmp, "small")
        os.mkdir(small)
        for f in ("coll_rank0.json", "coll_rank1.json"):
            shutil.copy(os.path.join(DATA, f), small)
        small_files = sorted(os.path.join(small, f) for f in os.listdir(small))

        # 1. A LocalCluster of 2 processes on the two small ranks.
        db = os.path.join(tmp, "small.db")
        keep = os.path.join(tmp, "kept")
        p = fleet([small], db, "--workers", "2", "--keep", keep)
        check(p.returncode == 0, f"small fleet exits 0: {p.stderr}")
        # --keep: each rank's saved database, which tlsql reopens with the same rows
        kept = one_process(os.path.join(keep, "coll_rank1.db"), "fleet_kernel_time")
        check(kept and canon(kept) == canon([r for r in table(db, "fleet_kernel_time") if r["rank"] == 1]),
              "--keep: rank 1's saved database gives its rows")
        check(progress_lines(p.stderr, 2), f"one progress line per rank with MB/s: {p.stderr}")
        same_as_one_process(db, small, "small", ("fleet_repairs", "fleet_steps", "fleet_ops"))  # (no steps, no ops)
        check_kernels(db, small_files, "small")
        summ = json.loads(run([TLSQL, "-q", "--json", db, "--report", "fleet_summary"]).stdout)
        check([(r["files"], r["loaded"], r["failed"], r["missing"], r["events"]) for r in summ] == [(2, 2, 0, 0, 4)],
              f"fleet_summary of the small ranks: {summ}")
        events = {r["rank"]: r["events"] for r in table(db, "fleet_traces")}
        check({r["rank"]: r["events"] for r in table(db, "fleet_rank")} == events, "fleet_rank.events = fleet_traces'")
        health = json.loads(run([TLSQL, "-q", "--json", db, "--report", "fleet_health"]).stdout)
        q = run([TLSQL, "-q", "--json", small, "-c",
                 'SELECT t.rank, h."check", h.count FROM health h JOIN trace t ON t.id = h.trace'])
        want = [(r["rank"], "repair: " + r["check"], r["count"]) for r in json.loads(q.stdout)]
        check(len(want) > 0, "the small ranks have loader repairs to list")
        check(sorted((r["rank"], r["problem"], r["count"]) for r in health) == sorted(want),
              f"fleet_health of a whole fleet: the loader's repairs only: {health} vs {want}")

        # The extension: a fleet.db's reports are its report_NAME tables too, as --report prints them.
        if LIB:
            con = sqlite3.connect(db)
            con.enable_load_extension(True)
            con.load_extension(LIB)
            for r in ("fleet_summary", "fleet_kernels", "fleet_collectives", "fleet_health"):
                cur = con.execute(f"SELECT * FROM report_{r}")
                # (tlsql --json writes a JSON-valued cell, durations_us, as JSON: the table gives its text)
                got = [{d[0]: json.loads(v) if isinstance(v, str) and v[:1] in "{[" else v
                        for d, v in zip(cur.description, row)} for row in cur.fetchall()]
                want = json.loads(run([TLSQL, "-q", "--json", db, "--report", r]).stdout)
                check(got == want, f"extension: report_{r} on fleet.db = tlsql --report {r}")
            con.close()

        # 2. The 8 DLRM ranks.
        if os.path.isdir(DLRM):
            ddb = os.path.join(tmp, "dlrm.db")
            p = fleet([DLRM], ddb, "--workers", "2")
            check(p.returncode == 0, f"dlrm fleet exits 0: {p.stderr}")
            check(progress_lines(p.stderr, 8), "dlrm: 8 progress lines")
            same_as_one_process(ddb, DLRM, "dlrm")
            files = sorted(os.path.join(DLRM, f) for f in os.listdir(DLRM))
            check_kernels(ddb, files, "dlrm")
            check_stragglers(ddb, "dlrm")
            check_step_split(ddb, files, "dlrm")
        else:
            print("skip: ../shared/traces/dlrm_8xv100 absent", file=sys.stderr)

        # 3. Bad ranks: truncated, corrupt gzip, missing; the good rank complete.
        bad = os.path.join(tmp, "bad")
        os.mkdir(bad)
        shutil.copy(os.path.join(DATA, "coll_rank0.json"), bad)
        shutil.copy(os.path.join(DATA, "bad_truncated.json"), os.path.join(bad, "rank1.json"))
        shutil.copy(os.path.join(DATA, "bad_corrupt.json.gz"), os.path.join(bad, "rank2.json.gz"))
        missing = os.path.join(tmp, "nowhere", "rank3.json")
        bdb = os.path.join(tmp, "bad.db")
        p = fleet([bad, missing], bdb, "--workers", "2")
        check(p.returncode == 1, f"bad ranks: exit 1 ({p.returncode})")
        err_lines = [l for l in p.stderr.splitlines() if l.startswith("tlsql fleet: error: ")]
        check(len(err_lines) == 3, f"bad ranks: one error line each: {p.stderr}")
        rows = {os.path.basename(r["file"]): r for r in table(bdb, "fleet_rank")}
        check(rows["coll_rank0.json"]["status"] == "ok", "bad: the good rank is ok")
        for name in ("rank1.json", "rank2.json.gz", "rank3.json"):
            r = rows.get(name, {})
            check(r.get("status") == "error" and name in (r.get("error") or ""), f"bad: {name} error row: {r}")
        check("cannot read" in rows["rank3.json"]["error"], "missing file: cannot read")
        # the good rank's rows are those of the rank loaded alone
        good = one_process(os.path.join(bad, "coll_rank0.json"), "fleet_kernel_time")
        check(canon(table(bdb, "fleet_kernel_time")) == canon(good), "bad: the good rank's rows complete")
        h = json.loads(run([TLSQL, "-q", "--json", bdb, "--report", "fleet_health"]).stdout)
        probs = [(r["problem"], r["rank"]) for r in h]
        check(probs.count(("error", None)) == 3 and ("missing", 1) in probs,
              f"fleet_health: 3 errors and rank 1 missing: {probs}")
        summ = json.loads(run([TLSQL, "-q", "--json", bdb, "--report", "fleet_summary"]).stdout)[0]
        check((summ["files"], summ["loaded"], summ["failed"], summ["missing"]) == (4, 1, 3, 1),
              f"fleet_summary with bad ranks: {summ}")

        # 4. Rerun (the ranks named by a quoted glob): unchanged files kept; a file whose mtime
        # changed is loaded again.
        before = {r: canon(table(db, r)) for r in MAP}
        p = fleet([os.path.join(small, "coll_rank*.json")], db, "--workers", "2")  # a glob, as quoted
        check(p.returncode == 0 and p.stderr.count("unchanged, rows kept") == 2, f"rerun: both unchanged: {p.stderr}")
        check({r: canon(table(db, r)) for r in MAP} == before, "rerun: same rows")
        st = os.stat(small_files[1])
        os.utime(small_files[1], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        p = fleet([small], db, "--workers", "2")
        check(p.returncode == 0 and p.stderr.count("unchanged, rows kept") == 1 and "rank 1 (" in p.stderr,
              f"rerun after touch: rank 1 loaded again, rank 0 kept: {p.stderr}")
        check({r: canon(table(db, r)) for r in MAP} == before, "rerun after touch: same rows")

        # 4b. Load threads per rank: the local cluster's workers share the machine's CPUs (the CPUs
        # over --workers, at least 1), --rank-threads sets them; each rank's tlsql gets --threads.
        argv_log = os.path.join(tmp, "argv.log")
        logger = os.path.join(tmp, "log_tlsql.sh")
        with open(logger, "w") as f:
            f.write(f"#!/bin/sh\ncase \"$*\" in *coll_rank*) echo \"$*\" >> {argv_log};; esac\nexec {TLSQL} \"$@\"\n")
        os.chmod(logger, 0o755)
        cpus = len(os.sched_getaffinity(0))
        for extra, want in ((["--workers", "2"], max(1, cpus // 2)), (["--workers", "1", "--rank-threads", "3"], 3)):
            if os.path.exists(argv_log):
                os.remove(argv_log)
            p = fleet([small], os.path.join(tmp, f"threads{want}-{extra[1]}.db"), *extra, "--tlsql", logger)
            lines = open(argv_log).read().splitlines() if os.path.exists(argv_log) else []
            check(p.returncode == 0 and len(lines) == 2 and all(f"--threads {want}" in ln for ln in lines),
                  f"{extra}: each rank's tlsql loads with --threads {want}: {lines} {p.stderr}")
        p = fleet([small], os.path.join(tmp, "threads0.db"), "--rank-threads", "0")
        check(p.returncode != 0 and "--rank-threads must be 1 or more" in p.stderr, f"--rank-threads 0: {p.stderr}")

        # 5. An unreachable scheduler.
        t0 = time.monotonic()
        p = fleet([small], os.path.join(tmp, "x.db"), "--scheduler", f"tcp://127.0.0.1:{free_port()}",
                  "--connect-timeout", "2", timeout=60)
        took = time.monotonic() - t0
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and "cannot reach the Dask scheduler" in lines[0] and took < 15,
              f"unreachable scheduler: one line, exit 1, {took:.1f} s: {p.stderr}")
        check(not [n for n in os.listdir(tmp) if n.startswith("x.db")], "unreachable scheduler: no fleet.db, no scratch")

        # 6. A scheduler and two workers as processes; the worker running rank 1 is killed.
        port = free_port()
        addr = f"tcp://127.0.0.1:{port}"
        procs = [subprocess.Popen([PY, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                                   str(port), "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        try:
            for _ in range(2):
                procs.append(subprocess.Popen([PY, "-m", "distributed.cli.dask_worker", addr, "--host", "127.0.0.1",
                                               "--nthreads", "1", "--no-dashboard"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            mark = os.path.join(tmp, "slow-once")
            wrapper = os.path.join(tmp, "slow_tlsql.sh")
            with open(wrapper, "w") as f:
                # The first run on rank 1 records its parent (the worker process) and hangs; the
                # test kills that worker; the run Dask starts again elsewhere goes through.
                f.write(f"#!/bin/sh\ncase \"$*\" in *coll_rank1.json*)\n"
                        f"  if mkdir {mark} 2>/dev/null; then echo $PPID > {mark}/pid; sleep 120; fi;;\nesac\n"
                        f"exec {TLSQL} \"$@\"\n")
            os.chmod(wrapper, 0o755)
            kdb = os.path.join(tmp, "killed.db")
            run_ = subprocess.Popen([TLSQL, "fleet", small, "-o", kdb, "--scheduler", addr, "--connect-timeout", "20",
                                     "--tlsql", wrapper], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            pidfile = os.path.join(mark, "pid")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (os.path.exists(pidfile) and open(pidfile).read().strip()):
                time.sleep(0.1)
            check(os.path.exists(pidfile), "kill: the slow rank started")
            if os.path.exists(pidfile):
                victim = int(open(pidfile).read())
                # dask-worker runs a nanny that starts the worker process: the victim or its parent
                with open(f"/proc/{victim}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
                check({victim, parent} & {q.pid for q in procs[1:]},
                      f"kill: the rank runs in a worker process ({victim}, parent {parent})")
                os.kill(victim, signal.SIGKILL)
            out, err = run_.communicate(timeout=90)
            check(run_.returncode == 0, f"kill: fleet completes after its worker died: {err}")
            check({r: canon(table(kdb, r)) for r in MAP} == before, "kill: the same rows as the local cluster's")
        finally:
            for q in procs:
                if q.poll() is None:
                    q.terminate()
            for q in procs:
                try:
                    q.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    q.kill()

        # 7. Which database each kind of report reads; a fleet table that is a view is refused.
        p = run([TLSQL, "-q", os.path.join(small, "coll_rank0.json"), "--report", "fleet_summary"])
        check(p.returncode == 1 and "reads a fleet database" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              f"fleet report on a trace: one line, exit 1: {p.stderr}")
        p = run([TLSQL, "-q", db, "--report", "ops"])
        check(p.returncode == 1 and "fleet_summary" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              f"trace report on fleet.db: one line naming the fleet reports: {p.stderr}")
        evil = os.path.join(tmp, "evil.db")
        shutil.copy(db, evil)
        con = sqlite3.connect(evil)
        con.execute("DROP TABLE fleet_traces")
        con.execute("CREATE VIEW fleet_traces AS SELECT 1 AS rank")
        con.commit()
        con.close()
        p = run([TLSQL, "-q", evil, "-c", "SELECT 1"])
        check(p.returncode == 1 and "'fleet_traces' is a view" in p.stderr, f"view in fleet.db refused: {p.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"fleet_test: {len(failures)} failures, {time.monotonic() - t_all:.1f} s", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
