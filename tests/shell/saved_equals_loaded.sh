#!/bin/sh
# A saved database (real tables) answers exactly as the freshly loaded one (virtual event table):
# every column of every row of event and of the views built on it.
set -eu
tlsql=$1 trace=$2 work=$3
rm -f "$work/eq.db"
"$tlsql" "$trace" -o "$work/eq.db" -c "SELECT 1" >/dev/null
q="SELECT * FROM event ORDER BY uid; SELECT * FROM kernel ORDER BY uid; SELECT * FROM launch ORDER BY gpu;
   SELECT * FROM event WHERE parent = 716 ORDER BY uid; SELECT count(*) FROM op WHERE uid BETWEEN 10 AND 2000;"
"$tlsql" "$trace" -c "$q" > "$work/eq_loaded.csv"
"$tlsql" "$work/eq.db" -c "$q" > "$work/eq_saved.csv"
[ "$(wc -l < "$work/eq_loaded.csv")" -gt 2600 ] || { echo "too few rows"; exit 1; }
cmp "$work/eq_loaded.csv" "$work/eq_saved.csv"
