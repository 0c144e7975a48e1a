#!/usr/bin/env python3
"""A/B load benchmark: two tlsql builds on the same input, interleaved (A B A B ...).

    tests/bench/ab.py A_BINARY B_BINARY TRACE [--rounds 5] [--a-args "--threads 1"] [--b-args ...]
                      [--cpus 0,1] [--sql "SELECT count(*) FROM event"] [--save]

Each run is `[taskset -c CPUS] BINARY -q [ARGS] TRACE -c SQL` (with --save: `... TRACE -o FILE.db`,
a new file each run; its rows' count and sums stand for the output, and peak RSS is also given
over the .db's size), timed from outside (wall clock,
the child's user + system CPU seconds and its peak RSS from wait4). The machine this runs on is
shared and its speed drifts by the minute, so A and B alternate within each round and the ratios
are taken round by round (B / A of the same round) as well as of the medians: compare only
figures of one run, never against an old number. The two builds' outputs must be equal (the
query's result), else the run stops. Standard library only.

Either binary may be the same file with other arguments (--a-args / --b-args), e.g. one core
against two: ab.py build/tlsql build/tlsql T --a-args "--threads 1" --a-cpus 0 --b-args "--threads 2"
--b-cpus 0,1.
"""
import argparse
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import time


SAVED = "ab_saved.db"  # (--save: in the current folder, removed after each run)


def run_once(binary, extra, trace, sql, cpus, save=False):
    """Wall s, CPU s (user + sys), peak RSS MB and stdout of one load (with `save`: its save's rows
    summed, and the .db's MB appended)."""
    what = ["-o", SAVED] if save else ["-c", sql]
    cmd = ([] if not cpus else ["taskset", "-c", cpus]) + [binary, "-q"] + extra + [trace] + what
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait4 gives this child's own rusage (getrusage(RUSAGE_CHILDREN) would mix runs' peaks).
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"ab.py: {' '.join(map(shlex.quote, cmd))} exited with {p.returncode}: {err.decode(errors='replace')}")
    if save:
        db = sqlite3.connect(f"file:{SAVED}?mode=ro", uri=True)
        # (The times modulo a prime: sum(ts) overflows 64 bits on a GB trace's microsecond epochs.)
        out = repr(db.execute("SELECT count(*), sum(ts % 1000000007), sum(dur % 1000000007), total(length(args)) "
                              "FROM event").fetchone())
        db.close()
        size = os.path.getsize(SAVED) / 2**20
        os.remove(SAVED)
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, out, size
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, out, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("trace")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--a-args", default="")
    ap.add_argument("--b-args", default="")
    ap.add_argument("--cpus", default="", help="taskset -c CPUS for every run (e.g. 0 for one core)")
    ap.add_argument("--a-cpus", default=None, help="taskset -c for A's runs only (default --cpus)")
    ap.add_argument("--b-cpus", default=None, help="taskset -c for B's runs only (default --cpus)")
    ap.add_argument("--sql", default="SELECT count(*) FROM event")
    ap.add_argument("--save", action="store_true", help="time `TRACE -o FILE.db` instead of a query")
    args = ap.parse_args()

    gb = os.path.getsize(args.trace) / 1e9  # (on disk: a .gz counts its compressed bytes)
    cpus = {"A": args.cpus if args.a_cpus is None else args.a_cpus,
            "B": args.cpus if args.b_cpus is None else args.b_cpus}
    builds = {"A": (args.a, shlex.split(args.a_args)), "B": (args.b, shlex.split(args.b_args))}
    for k, (b, extra) in builds.items():
        print(f"{k}: {b} {' '.join(extra)}{'  (taskset -c ' + cpus[k] + ')' if cpus[k] else ''}")
    print(f"input: {args.trace} ({gb * 1e3:.0f} MB); "
          f"{args.rounds} rounds A B A B ...")
    runs = {"A": [], "B": []}
    outputs = {}
    for r in range(args.rounds):
        for k in ("A", "B") if r % 2 == 0 else ("B", "A"):  # A B B A A B ...: neither always goes first
            wall, cpu, rss, out, db_mb = run_once(*builds[k], args.trace, args.sql, cpus[k], args.save)
            if outputs.setdefault(k, out) != out:
                sys.exit(f"ab.py: {k}'s output changed between runs")
            runs[k].append((wall, cpu, rss, db_mb))
            print(f"  round {r + 1} {k}: wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak RSS {rss:7.0f} MB" +
                  (f"  .db {db_mb:7.1f} MB" if db_mb else ""), flush=True)
    if outputs["A"] != outputs["B"]:
        sys.exit(f"ab.py: A and B answer differently:\nA: {outputs['A'][:200]!r}\nB: {outputs['B'][:200]!r}")

    def metrics(w, c, m, db_mb):
        out = {"wall s": w, "CPU s per GB": c / gb, "MB/s": gb * 1e3 / w, "peak RSS MB": m}
        if db_mb:
            out["RSS / .db"] = m / db_mb
        return out

    per = {k: [metrics(*x) for x in runs[k]] for k in runs}
    print(f"\n{'metric':<14} {'A median':>10} {'B median':>10} {'B/A':>7}   B/A per round (min-max)")
    for name in per["A"][0]:
        a = statistics.median(x[name] for x in per["A"])
        b = statistics.median(x[name] for x in per["B"])
        rounds = [pb[name] / pa[name] for pa, pb in zip(per["A"], per["B"])]
        print(f"{name:<14} {a:>10.2f} {b:>10.2f} {b / a:>7.3f}   {min(rounds):.3f}-{max(rounds):.3f}")


if __name__ == "__main__":
    main()
