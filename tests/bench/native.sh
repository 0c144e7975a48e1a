#!/usr/bin/env bash
# The other profilers' readers against the Kineto reader (issue 48): rows per second of the whole
# load (trace.load_ms, best of 3) for the Kineto JSON, rocprofv3 JSON and Nsight Systems SQLite
# readers side by side, on the shared samples and on scaled copies (tests/bench/scale_native.py,
# tools/scale_trace.py); the CPU seconds (user + sys) of `tlsql FILE -o out.db`, steadier than wall
# time on a shared machine; its peak RSS against out.db's size.
#   tests/bench/native.sh [OUT_DIR] [BUILD_DIR]   (default /tmp/tlsql-bench build; needs ../shared,
#                                                 ~1 GB of disk, ~5 minutes the first time)
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
inputs=("kineto $shared/traces/hta/trace_diff/control.json.gz" "kineto $out/control_100m.json"
        "rocprofv3 $shared/native/rocprof/908_results.json.gz" "rocprofv3 $out/rocprof_x5.json"
        "nsys $shared/native/nsys/mfu_2gpu_before.sqlite" "nsys $shared/native/nsys/mfu_2gpu_after.sqlite"
        "nsys $out/nsys_x10.sqlite")
printf '| reader | input | rows | load s (best of 3) | rows/s | input MB/s | CPU s (-o) | rows / CPU s | peak RSS MB (-o) | .db MB | RSS / .db |\n'
printf '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for entry in "${inputs[@]}"; do
  reader=${entry%% *} file=${entry#* }
  best=
  for i in 1 2 3; do
    ms=$("$bin" -q --csv "$file" -c "SELECT load_ms FROM trace" | tail -1)
    best=$(python3 -c "print(min(float('$ms'), float('${best:-inf}')))")
  done
  db="$out/native_out.db"
  rm -f "$db"
  /usr/bin/time -f "%M %U %S" -o "$out/time.txt" "$bin" -q "$file" -o "$db" -c "SELECT 1" >/dev/null
  rows=$("$bin" -q --csv "$db" -c "SELECT count(*) FROM event" | tail -1)
  python3 - "$reader" "$file" "$rows" "$best" $(cat "$out/time.txt") "$(stat -c %s "$db")" "$(stat -L -c %s "$file")" <<'PY'
import gzip, os, sys
reader, path, rows, ms, kb, user, sys_s, db, size = (sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]),
                                                    int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7]),
                                                    int(sys.argv[8]), int(sys.argv[9]))
cpu = user + sys_s
if path.endswith(".gz"):  # the text read: inflated
    with gzip.open(path) as f:
        size = sum(len(b) for b in iter(lambda: f.read(1 << 20), b""))
print(f"| {reader} | {os.path.basename(path)} | {rows} | {ms / 1e3:.3f} | {rows / (ms / 1e3) / 1e3:.0f} k | "
      f"{size / 1e6 / (ms / 1e3):.0f} | {cpu:.2f} | {rows / cpu / 1e3:.0f} k | {kb / 1024:.0f} | {db / 1e6:.1f} | {kb * 1024 / db:.2f} |")
PY
done
rm -f "$out/native_out.db"
