#!/bin/sh
# A saved database (real tables) answers exactly as the freshly loaded one (virtual event table):
# every column of every row of event and of the views built on it.
set -eu
tlsql=$1 trace=$2 work=$3
same() {  # NAME TRACE QUERY: the query's output on the loaded trace and on it saved, in $work/NAME_*.csv
  rm -f "$work/$1.db"
  "$tlsql" -q "$2" -o "$work/$1.db" -c "SELECT 1" >/dev/null
  "$tlsql" -q "$2" -c "$3" > "$work/$1_loaded.csv"
  "$tlsql" "$work/$1.db" -c "$3" > "$work/$1_saved.csv"
  cmp "$work/$1_loaded.csv" "$work/$1_saved.csv"
}
q="SELECT * FROM event ORDER BY uid; SELECT * FROM kernel ORDER BY uid; SELECT * FROM launch ORDER BY gpu;
   SELECT * FROM event WHERE parent = 716 ORDER BY uid; SELECT count(*) FROM op WHERE uid BETWEEN 10 AND 2000;
   SELECT name, count(*), sum(dur), min(uid), max(uid) FROM kernel GROUP BY name;
   SELECT name, count(*), group_concat(uid) FROM event GROUP BY name;
   SELECT name, count(*) FROM event WHERE trace = 0 GROUP BY name;
   SELECT name FROM event WHERE parent = 716 ORDER BY name;
   SELECT name FROM event ORDER BY name; SELECT DISTINCT name FROM op;
   SELECT count(*) FROM event WHERE name IS NULL; SELECT * FROM optimizable_events(0, 100);
   SELECT kind, cat, count(*), sum(dur), min(uid), max(uid) FROM event GROUP BY kind, cat;
   SELECT kind, cat FROM event ORDER BY kind, cat; SELECT cat, count(*), min(uid), max(uid) FROM event GROUP BY cat;
   SELECT cat, count(*) FROM event WHERE kind = 'kernel' GROUP BY cat; SELECT cat FROM event ORDER BY cat, uid;
   SELECT count(*), min(uid), max(uid) FROM event WHERE name LIKE '%gemm%';
   SELECT uid FROM event WHERE name GLOB '*Memcpy*' AND cat LIKE 'GPU%' ORDER BY uid;
   SELECT count(*), min(uid), max(uid), sum(dur) FROM event
     WHERE ts BETWEEN (SELECT min(ts) FROM event) + 1e6 AND (SELECT min(ts) FROM event) + 2.5e6 + 0.5;
   SELECT count(*), sum(ts) FROM event WHERE dur > 1000.5 AND end <= (SELECT max(end) FROM event) - 3e6;
   SELECT count(*) FROM event WHERE dur >= 0 AND dur < 1; SELECT count(*) FROM event WHERE ts > '1';
   SELECT count(*) FROM event WHERE ts < NULL; SELECT count(*) FROM event WHERE kind = 'kernel' AND end > 0;
   SELECT count(*) FROM event WHERE ts >= (SELECT min(ts) FROM event) AND end <= (SELECT max(end) FROM event)
     AND dur >= (SELECT min(dur) FROM event) AND ts <= (SELECT max(ts) FROM event);
   SELECT count(*), sum(e.dur) FROM (SELECT ts, end FROM event WHERE kind = 'cpu_op' AND dur > 0 LIMIT 5) w
     JOIN event e ON e.ts >= w.ts AND e.ts < w.end;"
same eq "$trace" "$q"
[ "$(wc -l < "$work/eq_loaded.csv")" -gt 2600 ] || { echo "too few rows"; exit 1; }
# The event table hands rows over by name for GROUP BY / ORDER BY name (no sort by SQLite): a
# name-less event first and byte order (B before a), as SQLite orders the saved table's rows.
cat > "$work/eq_names.json" <<'JSON'
{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": 5},
 {"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 2, "dur": 1},
 {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 3, "dur": 1},
 {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 10, "dur": 1},
 {"ph": "X", "cat": "cpu_op", "name": "B", "pid": 1, "tid": 1, "ts": 12, "dur": 1}]}
JSON
# 40 more names on another thread: a node's two children are few beside the names in the trace
# (the sort by text, not the counting sort, orders them; a name-less child first there too).
/usr/bin/python3 - "$work/eq_names.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["traceEvents"] += [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 2, "ts": 100 + 2 * i, "dur": 1}
                     for i in range(40)]
json.dump(t, open(sys.argv[1], "w"))
PY
same eq_names "$work/eq_names.json" \
  "SELECT uid, name FROM event ORDER BY name, uid; SELECT name, count(*), group_concat(uid) FROM op GROUP BY name;
   SELECT '-'; SELECT uid, name FROM event WHERE parent = 0 ORDER BY name"
[ "$(sed -n 2p "$work/eq_names_loaded.csv")" = "1," ] || { echo "a NULL name sorts first"; exit 1; }
# LIKE and GLOB on name and cat: the event table matches each distinct string once and SQLite
# checks what passes (ASCII case ignored unless case_sensitive_like; ESCAPE; a pattern per row).
same eq_like "$work/eq_names.json" \
  "SELECT group_concat(uid) FROM event WHERE name LIKE 'b'; SELECT group_concat(uid) FROM event WHERE name GLOB 'b';
   SELECT group_concat(uid) FROM event WHERE name LIKE 'op1_'; SELECT group_concat(uid) FROM event WHERE name GLOB 'op[13]*';
   SELECT group_concat(uid) FROM event WHERE name LIKE 'op!_%' ESCAPE '!'; SELECT count(*) FROM event WHERE name LIKE NULL;
   SELECT count(*) FROM event WHERE cat LIKE 'CPU%' AND name NOT LIKE 'op%';
   SELECT group_concat(e.uid) FROM event e JOIN (SELECT 'op2%' p UNION ALL SELECT 'a') q ON e.name LIKE q.p;
   PRAGMA case_sensitive_like = ON; SELECT group_concat(uid) FROM event WHERE name LIKE 'b'"
[ "$(sed -n 2p "$work/eq_like_loaded.csv")" = '"0,3,4"' ] || { echo "LIKE 'b' ignores case: 0,3,4"; exit 1; }
[ "$(tail -1 "$work/eq_like_loaded.csv")" = '"0,3"' ] || { echo "case_sensitive_like: b only (0,3)"; exit 1; }
[ "$(sed -n '/^-$/,$p' "$work/eq_names_loaded.csv" | tail -2 | tr '\n' ' ')" = "1, 2,a " ] ||
  { echo "children by name: a NULL name first, then a"; exit 1; }
# optimizable_events reads the store directly, or a saved file through SQL on two connections:
# the same ranking (queue_depth.json has falling phases; hand arithmetic in tests/cases/optimizable_small).
same eq_qd "$(dirname "$trace")/queue_depth.json" "SELECT * FROM optimizable_events(0, 100)"
grep -q '^[0-9]*,11,' "$work/eq_qd_saved.csv" || { echo "optimizable: aten::b (uid 11) not ranked"; exit 1; }
