#!/usr/bin/env bash
# The other profilers' readers against the Kineto reader (issue 48): rows per second of the whole
# load (trace.load_ms, best of 3, REPS=N: of N, in rounds over every input) for the Kineto JSON,
# rocprofv3 JSON and Nsight Systems SQLite readers side by side, on the shared samples and on
# scaled copies (tests/bench/scale_native.py, tools/scale_trace.py); the CPU seconds (user + sys) of `tlsql FILE -o out.db`, steadier than wall
# time on a shared machine; peak RSS of the load alone and of the load and save against out.db's
# size.
# Two yardsticks for the Kineto reader: the control trace (its own mix of rows: mostly CPU ops with
# short args) and "same rows": each scaled native copy's rows written back as Kineto JSON (by
# tlsql, one event per row with the row's name, times, ids and args), so that both readers make
# the same rows and only the reading differs.
#   tests/bench/native.sh [OUT_DIR] [BUILD_DIR]   (default /tmp/tlsql-bench build; needs ../shared,
#                                                 ~1.5 GB of disk, ~6 minutes the first time)
#   LARGE=1 adds a 340 MB rocprofv3 copy (x15) and a 97 MB Nsight one (x40) with their same rows
#   (~1.5 GB more, ~2 minutes more the first time).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/tlsql-bench}
bin=${2:-build}/tlsql
shared=${TLSQL_SHARED:-../shared}
mkdir -p "$out"
[ -x "$bin" ] || scripts/setup.sh
scale=tests/bench/scale_native.py
[ -s "$out/control_100m.json" ] ||
  /usr/bin/python3 "$shared/tools/scale_trace.py" "$shared/traces/hta/trace_diff/control.json.gz" "$out/control_100m.json" --mb 100
[ -s "$out/rocprof_x5.json" ] || /usr/bin/python3 $scale rocprof "$shared/native/rocprof/908_results.json.gz" "$out/rocprof_x5.json" 5
[ -s "$out/nsys_x10.sqlite" ] || /usr/bin/python3 $scale nsys "$shared/native/nsys/mfu_2gpu_before.sqlite" "$out/nsys_x10.sqlite" 10
# Larger copies (LARGE=1): fixed costs (the process, per-thread buffers) weigh less there.
if [ "${LARGE:-0}" = 1 ]; then
  [ -s "$out/rocprof_x15.json" ] ||
    /usr/bin/python3 $scale rocprof "$shared/native/rocprof/908_results.json.gz" "$out/rocprof_x15.json" 15
  [ -s "$out/nsys_x40.sqlite" ] ||
    /usr/bin/python3 $scale nsys "$shared/native/nsys/mfu_2gpu_before.sqlite" "$out/nsys_x40.sqlite" 40
fi
# The same rows as Kineto JSON: ts and dur in µs with the ns kept as 3 decimals, as Kineto writes them.
as_kineto() {
  [ -s "$2" ] && return
  "$bin" -q --list "$1" -c ".headers off" -c "SELECT json_object('ph', ph, 'cat', cat, 'name', name, 'pid', pid,
      'tid', tid, 'ts', json(printf('%d.%03d', ts / 1000, ts % 1000)), 'dur', json(iif(dur IS NULL, 'null',
      printf('%d.%03d', dur / 1000, dur % 1000))), 'args', json(args)) FROM event WHERE ts >= 0 AND dur IS NOT -1
      ORDER BY uid" | sed 's/,"dur":null//; s/,"args":null//; $!s/$/,/' | { echo '{"traceEvents":['; cat; echo ']}'; } >"$2"
}
as_kineto "$out/rocprof_x5.json" "$out/kineto_rows_of_rocprof_x5.json"
as_kineto "$out/nsys_x10.sqlite" "$out/kineto_rows_of_nsys_x10.json"
inputs=("kineto $shared/traces/hta/trace_diff/control.json.gz" "kineto $out/control_100m.json"
        "rocprofv3 $shared/native/rocprof/908_results.json.gz" "rocprofv3 $out/rocprof_x5.json"
        "nsys $shared/native/nsys/mfu_2gpu_before.sqlite" "nsys $shared/native/nsys/mfu_2gpu_after.sqlite"
        "nsys $out/nsys_x10.sqlite" "kineto $out/kineto_rows_of_rocprof_x5.json"
        "kineto $out/kineto_rows_of_nsys_x10.json")
if [ "${LARGE:-0}" = 1 ]; then
  as_kineto "$out/rocprof_x15.json" "$out/kineto_rows_of_rocprof_x15.json"
  as_kineto "$out/nsys_x40.sqlite" "$out/kineto_rows_of_nsys_x40.json"
  inputs+=("rocprofv3 $out/rocprof_x15.json" "kineto $out/kineto_rows_of_rocprof_x15.json"
           "nsys $out/nsys_x40.sqlite" "kineto $out/kineto_rows_of_nsys_x40.json")
fi
# The loads in rounds, every input once a round, so that a reader and its same rows meet the
# machine in the same state (its load varies by up to 1.5x over minutes).
declare -A best
for i in $(seq "${REPS:-3}"); do
  for entry in "${inputs[@]}"; do
    file=${entry#* }
    ms=$("$bin" -q --csv "$file" -c "SELECT load_ms FROM trace" | tail -1)
    best[$file]=$(python3 -c "print(min(float('$ms'), float('${best[$file]:-inf}')))")
  done
done
printf '| reader | input | rows | load s (best of %s) | rows/s | input MB/s | CPU s (-o) | rows / CPU s | peak RSS MB: load, -o | .db MB | RSS / .db: load, -o |\n' "${REPS:-3}"
printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for entry in "${inputs[@]}"; do
  reader=${entry%% *} file=${entry#* }
  db="$out/native_out.db"
  rm -f "$db"
  /usr/bin/time -f "%M" -o "$out/load.txt" "$bin" -q "$file" -c "SELECT 1" >/dev/null
  /usr/bin/time -f "%M %U %S" -o "$out/time.txt" "$bin" -q "$file" -o "$db" -c "SELECT 1" >/dev/null
  rows=$("$bin" -q --csv "$db" -c "SELECT count(*) FROM event" | tail -1)
  python3 - "$reader" "$file" "$rows" "${best[$file]}" $(cat "$out/time.txt") "$(stat -c %s "$db")" "$(stat -L -c %s "$file")" \
    "$(cat "$out/load.txt")" <<'PY'
import gzip, os, sys
reader, path, rows, ms, kb, user, sys_s, db, size, load_kb = (
    sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]),
    float(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9]), int(sys.argv[10]))
cpu = user + sys_s
if path.endswith(".gz"):  # the text read: inflated
    with gzip.open(path) as f:
        size = sum(len(b) for b in iter(lambda: f.read(1 << 20), b""))
print(f"| {reader} | {os.path.basename(path)} | {rows} | {ms / 1e3:.3f} | {rows / (ms / 1e3) / 1e3:.0f} k | "
      f"{size / 1e6 / (ms / 1e3):.0f} | {cpu:.2f} | {rows / cpu / 1e3:.0f} k | {load_kb / 1024:.0f}, {kb / 1024:.0f} | "
      f"{db / 1e6:.1f} | {load_kb * 1024 / db:.2f}, {kb * 1024 / db:.2f} |")
PY
done
rm -f "$out/native_out.db"
