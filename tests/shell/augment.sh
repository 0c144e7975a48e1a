#!/bin/sh
# --augment writes the trace back with kernel_flop / kernel_num_gb: the same events (uids, tree),
# and loading the result gives the same numbers, now read from the args. uid 48 is the bert
# trace's first addmm: 2·141·512·512 + 141·512 = 73,996,800 FLOPs (hand arithmetic).
set -eu
tlsql=$1 trace=$2 work=$3
out="$work/augmented.json"
rm -f "$out"
"$tlsql" "$trace" --augment "$out" -c "SELECT 1" >/dev/null
q="SELECT uid, kind, name, ts, dur, parent, depth FROM event ORDER BY uid;
   SELECT uid, flops(uid), bytes(uid) FROM event WHERE kind IN ('kernel', 'cpu_op') ORDER BY uid;"
[ "$("$tlsql" "$trace" -c "$q")" = "$("$tlsql" "$out" -c "$q")" ] || { echo "augmented trace differs"; exit 1; }
got=$("$tlsql" "$out" -c "SELECT args ->> '\$.kernel_flop' FROM event WHERE uid = 48" | tail -1)
[ "$got" = "73996800" ] || { echo "kernel_flop of uid 48: $got"; exit 1; }
# The args carry no dtype: the peaks stay those of the kernel's op (bf16 matrix for a bf16 GEMM),
# so achieved % and the kernels report are the original's.
q="SELECT uid, peak_dtype(uid), peak_units(uid), round(achieved_pct(uid), 6) FROM kernel ORDER BY uid;"
[ "$("$tlsql" "$trace" -c "$q")" = "$("$tlsql" "$out" -c "$q")" ] || { echo "augmented peaks differ"; exit 1; }
[ "$("$tlsql" "$trace" --report kernels)" = "$("$tlsql" "$out" --report kernels)" ] || { echo "kernels report differs"; exit 1; }
n=$("$tlsql" "$out" -c "SELECT count(*) FROM kernel WHERE args ->> '\$.kernel_flop' IS NOT NULL" | tail -1)
[ "$n" -gt 50 ] || { echo "only $n kernels augmented"; exit 1; }
