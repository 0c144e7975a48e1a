#!/bin/sh
# Every trace in ../shared/traces loads, and health accounts for every GPU event that is not linked
# to a launch (gpu_without_launch = the GPU events missing from launch_link).
tlsql=$1 shared=$2
[ -d "$shared/traces" ] || { echo "SKIP: $shared/traces not present"; exit 0; }
n=0
for f in $(find "$shared/traces" -name '*.json*' | sort); do
  got=$("$tlsql" "$f" --csv -c "SELECT (SELECT count(*) FROM gpu g WHERE NOT EXISTS (SELECT 1 FROM launch_link l WHERE l.gpu = g.uid))
      = coalesce((SELECT sum(count) FROM health WHERE \"check\" = 'gpu_without_launch'), 0) AS ok") || { echo "$f: load failed"; exit 1; }
  [ "$got" = "$(printf 'ok\n1')" ] || { echo "$f: unlinked GPU events not all in health"; exit 1; }
  n=$((n + 1))
done
echo "$n traces ok"
