#!/usr/bin/env bash
# Load scaling with threads: one tlsql binary, one trace, --threads 1 2 4 8 16 (or THREADS="...").
#   tests/bench/scaling.sh TLSQL_BINARY TRACE [REPS]      (REPS runs per count, default 2; best kept)
# Prints per thread count: wall s, CPU s (user + sys), MB/s and the speed-up against one thread.
# Needs only the binary, bash, python3 (standard library) and the trace. A 1 GB trace on 16 cores:
# 5 counts x 2 runs, about 1.5-2 minutes (one thread reads it in 4-8 s).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 TLSQL_BINARY TRACE [REPS]" >&2; exit 2; }
bin=$1 trace=$2 reps=${3:-2}
threads=${THREADS:-"1 2 4 8 16"}
exec python3 - "$bin" "$trace" "$reps" $threads <<'PY'
import os, subprocess, sys, time
binary, trace, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
counts = [int(t) for t in sys.argv[4:]]
mb = os.path.getsize(trace) / 1e6
print(f"{binary} on {trace} ({mb:.0f} MB), {os.cpu_count()} CPUs; best of {reps} per count")
print(f"{'threads':>7} {'wall s':>8} {'CPU s':>8} {'MB/s':>8} {'speed-up':>9}")
base = None
for n in counts:
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        p = subprocess.Popen([binary, "-q", "--threads", str(n), trace, "-c", "SELECT count(*) FROM event"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)  # this child's own CPU time
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"--threads {n}: tlsql failed: {err.decode(errors='replace').strip()}")
        run = (wall, ru.ru_utime + ru.ru_stime)
        best = run if best is None or run[0] < best[0] else best
    base = base or best[0]
    print(f"{n:>7} {best[0]:>8.2f} {best[1]:>8.2f} {mb / best[0]:>8.0f} {base / best[0]:>8.2f}x", flush=True)
PY
