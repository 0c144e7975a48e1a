#!/usr/bin/env bash
# The load benchmark on 1 GB inputs made from real traces (SPEC.md "Speed and memory").
#   tests/bench/run.sh [OUT_DIR]     (default /tmp/tlsql-bench; needs ../shared and ~3 GB of disk)
# Prints, per input: MB/s and peak RSS per stage, query latencies; then the saved-database reopen.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/tlsql-bench}
shared=${TLSQL_SHARED:-../shared}
mkdir -p "$out"
[ -x build/bench_load ] || scripts/setup.sh
make_input() {  # NAME SOURCE
  [ -s "$out/$1" ] || python3 "$shared/tools/scale_trace.py" "$shared/traces/$2" "$out/$1" --mb 1024
}
make_input control_1g.json hta/trace_diff/control.json.gz
make_input resnet_1g.json tracelens/mi300/resnet_act_checkpoint.json.gz
[ -s "$out/control_1g.json.gz" ] || gzip -k -6 "$out/control_1g.json"
build/bench_load "$out/control_1g.json" "$out/control_1g.json.gz" "$out/resnet_1g.json"
rm -f "$out/control_1g.db"
/usr/bin/time -f "save with -o: %e s, peak RSS %M KB" build/tlsql -q "$out/control_1g.json" -o "$out/control_1g.db" -c "SELECT 1" >/dev/null
for i in 1 2 3; do
  /usr/bin/time -f "reopen .db + SELECT count(*) FROM kernel: %e s" build/tlsql "$out/control_1g.db" -c "SELECT count(*) FROM kernel" >/dev/null
done
for i in 1 2 3; do /usr/bin/time -f "start-up (tlsql -c 'SELECT 1'): %e s" build/tlsql -c "SELECT 1" >/dev/null; done
