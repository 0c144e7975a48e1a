#!/bin/sh
# SQL piped on stdin: statements spanning lines, a dot-command, no banner, no prompt, CSV by default.
set -eu
tlsql=$1 trace=$2
out=$(printf "SELECT count(*)\n  FROM event\n  WHERE kind = 'cpu_op';\n.mode markdown\nSELECT 1 AS one;\n" | "$tlsql" "$trace")
want=$(printf 'count(*)\n3\n| one |\n|----:|\n|   1 |')
[ "$out" = "$want" ] || { printf 'got:\n%s\nwant:\n%s\n' "$out" "$want"; exit 1; }
