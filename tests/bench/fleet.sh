#!/usr/bin/env bash
# The fleet benchmark (issue 47): RANKS rank files made from the 8 DLRM ranks of ../shared, each
# scaled to MB megabytes with ../shared/tools/scale_trace.py and given its own rank and world size,
# STRAGGLERS of them with every kernel 1.5x longer; then
#   - `tlsql fleet` on a 2-worker LocalCluster (wall, peak RSS of the tlsql each worker ran, fleet.db
#     bytes per rank, and whether fleet_stragglers names the injected ranks), and
#   - one tlsql process loading the folder and running the same five per-rank reports.
#   tests/bench/fleet.sh [OUT_DIR] [BUILD_DIR]    (default /tmp/tlsql-fleet-bench build)
#   RANKS=64 MB=50 STRAGGLERS="5 37" tests/bench/fleet.sh   (the defaults)
# Needs ../shared and RANKS x MB of disk. Prints one markdown table.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/tmp/tlsql-fleet-bench}
bin=$(realpath "${2:-build}/tlsql")
shared=${TLSQL_SHARED:-../shared}
ranks=${RANKS:-64} mb=${MB:-50} stragglers=${STRAGGLERS:-5 37}
[ -x "$bin" ] || scripts/setup.sh
[ -d "$shared/traces/dlrm_8xv100" ] || { echo "SKIP: $shared/traces/dlrm_8xv100 absent" >&2; exit 0; }
mkdir -p "$out/src" "$out/ranks"
for k in 0 1 2 3 4 5 6 7; do
  [ -s "$out/src/rank$k.json" ] ||
    /usr/bin/python3 "$shared/tools/scale_trace.py" "$shared/traces/dlrm_8xv100/rank$k.pt.trace.json" \
      "$out/src/rank$k.json" --mb "$mb"
done
# Rank i is DLRM rank i mod 8 with distributedInfo saying rank i of $ranks and its steps numbered
# 0, 1, ...; a straggler's kernels last 1.5x as long (its GPU busy per step grows; its host timeline
# is the same).
/usr/bin/python3 - "$out" "$ranks" "$stragglers" <<'EOF'
import json, os, sys
out, n, slow = sys.argv[1], int(sys.argv[2]), {int(s) for s in sys.argv[3].split()}
stamp = os.path.join(out, "ranks", ".made")
want = f"{n} {sorted(slow)} numbered steps"
if os.path.exists(stamp) and open(stamp).read() == want:
    sys.exit(0)
for f in os.listdir(os.path.join(out, "ranks")):
    os.remove(os.path.join(out, "ranks", f))
for i in range(n):
    with open(os.path.join(out, "src", f"rank{i % 8}.json")) as f:
        t = json.load(f)
    t["distributedInfo"] = dict(t.get("distributedInfo") or {}, rank=i, world_size=n)
    # scale_trace repeats the one ProfilerStep#N of each copy; a real run numbers its steps, and
    # steps meet across ranks by number (fleet_stragglers), so each copy gets its own.
    steps = sorted((e for e in t["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep#")),
                   key=lambda e: e.get("ts", 0))
    for k, e in enumerate(steps):
        e["name"] = f"ProfilerStep#{k}"
    if i in slow:
        for e in t["traceEvents"]:
            if e.get("cat") == "kernel" and isinstance(e.get("dur"), (int, float)):
                e["dur"] = round(e["dur"] * 1.5, 3)
    with open(os.path.join(out, "ranks", f"rank{i:04d}.json"), "w") as f:
        json.dump(t, f, separators=(",", ":"))
open(stamp, "w").write(want)
EOF
total_mb=$(du -sm --apparent-size "$out/ranks" | cut -f1)
rm -f "$out/fleet.db"
/usr/bin/time -f "%e %M" -o "$out/time_fleet.txt" "$bin" fleet "$out/ranks" -o "$out/fleet.db" --workers 2 -q
read -r fleet_s fleet_kb <"$out/time_fleet.txt"
/usr/bin/time -f "%e %M" -o "$out/time_one.txt" "$bin" "$out/ranks" -q --csv --report fleet_traces \
  --report fleet_steps --report fleet_comm --report fleet_kernel_time --report fleet_repairs >/dev/null
read -r one_s one_kb <"$out/time_one.txt"
worker_mb=$(sqlite3 "$out/fleet.db" "SELECT max(peak_rss_mb) FROM fleet_rank")
task_s=$(sqlite3 "$out/fleet.db" "SELECT round(avg(seconds), 2) FROM fleet_rank")
db_bytes=$(stat -c %s "$out/fleet.db")
flagged=$("$bin" "$out/fleet.db" -q --csv -c "SELECT group_concat(rank, ' ') AS r FROM (SELECT DISTINCT rank FROM
  report_fleet_stragglers('{\"top\": 1000000}') WHERE straggler ORDER BY rank)" | tail -n 1)
echo "| ranks x MB | JSON | path | wall | peak RSS | MB/s | fleet.db |"
echo "|---|---|---|---|---|---|---|"
echo "| $ranks x $mb | $total_mb MB | tlsql fleet, LocalCluster 2 workers | ${fleet_s} s | $worker_mb MB per worker's tlsql (client $((fleet_kb / 1024)) MB) | $(echo "$total_mb / $fleet_s" | bc) | $((db_bytes / ranks)) bytes per rank |"
echo "| $ranks x $mb | $total_mb MB | tlsql FOLDER, one process | ${one_s} s | $((one_kb / 1024)) MB | $(echo "$total_mb / $one_s" | bc) | — |"
echo
echo "mean rank task ${task_s} s; injected stragglers: $stragglers; fleet_stragglers flags: ${flagged:-none}"
