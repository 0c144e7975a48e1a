#!/bin/sh
# Every fuzz seed and every input the fuzzer found a bug with loads, or fails with exit 1 and a
# one-line error: never a crash (exit > 1), a sanitizer report or a hang.
tlsql=$1 dir=$2
n=0
for f in "$dir"/seeds/* "$dir"/regressions/*; do
  [ -f "$f" ] || continue
  err=$(timeout 60 "$tlsql" "$f" -c "SELECT count(*), sum(depth) FROM event" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -gt 1 ]; then echo "$f: exit $rc: $err"; exit 1; fi
  if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then echo "$f: error is not one line: $err"; exit 1; fi
  n=$((n + 1))
done
echo "$n inputs ok"
