#!/bin/sh
# A trace attached under another schema name (--diff, .attach of a trace or of a saved .db) answers
# exactly as the same trace loaded alone as main: its views (op_summary calls the perf and tree
# functions) and the functions given the schema name.
set -eu
tlsql=$1 trace=$2 other=$3 work=$4 collectives=$5
rm -f "$work/att.db"
"$tlsql" "$trace" -o "$work/att.db" -c "SELECT 1" >/dev/null
q() {  # $1 = schema prefix ("" or "x."), $2 = schema argument ("" or ", 'x'")
  echo "SELECT * FROM ${1}op_summary ORDER BY name;
        SELECT uid, flops(uid$2) AS f, bytes(uid$2) AS b, gpu_time(uid$2) AS g, achieved_pct(uid$2) AS p
          FROM ${1}op ORDER BY uid;
        SELECT count(*) AS n, sum(rel_depth) AS d FROM descendants(716$2);
        SELECT uid FROM ancestors(2103$2);"
}
"$tlsql" "$trace" -c "$(q "" "")" > "$work/att_alone.csv"
[ "$(wc -l < "$work/att_alone.csv")" -gt 500 ] || { echo "too few rows"; exit 1; }
"$tlsql" "$other" --diff "$trace" -c "$(q other. ", 'other'")" > "$work/att_diff.csv"
cmp "$work/att_alone.csv" "$work/att_diff.csv"
"$tlsql" "$other" -c ".attach $trace AS t2" -c "$(q t2. ", 't2'")" > "$work/att_trace.csv"
cmp "$work/att_alone.csv" "$work/att_trace.csv"
"$tlsql" "$other" -c ".attach $work/att.db AS zz" -c "$(q zz. ", 'zz'")" > "$work/att_db.csv"
cmp "$work/att_alone.csv" "$work/att_db.csv"
# The functions keep prepared statements per schema between calls (udf/connection_cache.h): a
# schema they used can still be detached, and a different database attached under the same name
# answers for itself. Here `zz` is first the other trace (saved), then the trace: the second
# answer must be the trace's alone.
rm -f "$work/att_other.db"
"$tlsql" "$other" -o "$work/att_other.db" -c "SELECT 1" >/dev/null
"$tlsql" "$other" -c ".attach $work/att_other.db AS zz" \
  -c "SELECT count(*), sum(flops(uid, 'zz')), sum(gpu_time(uid, 'zz')) FROM zz.op; SELECT * FROM zz.op_summary" \
  -c "DETACH zz" \
  -c ".attach $work/att.db AS zz" -c ".output $work/att_reattached.csv" -c "$(q zz. ", 'zz'")" >/dev/null
cmp "$work/att_alone.csv" "$work/att_reattached.csv"

# Every view, each row sorted: the views call the tree functions with their own schema's token,
# never main's tree with the attached trace's uids (memory_alloc's op, collective_kernel's phase,
# engine_step_gpu). The collectives trace has communication kernels, the trace memory events.
views() {  # $1 = schema prefix; the view names from main's list
  for v in $("$tlsql" "$trace" -q --csv -c "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name" |
             tail -n +2); do
    echo "== $v"
    "$tlsql" "$3" -q --csv ${2:+--diff "$2"} -c "SELECT * FROM $1$v" | sort
  done
}
for t in "$trace" "$collectives"; do
  views "" "" "$t" > "$work/att_views_alone.csv"
  views other. "$t" "$other" > "$work/att_views_diff.csv"
  [ "$(wc -l < "$work/att_views_alone.csv")" -gt 30 ] || { echo "too few view rows"; exit 1; }
  diff "$work/att_views_alone.csv" "$work/att_views_diff.csv" | head -20
  cmp "$work/att_views_alone.csv" "$work/att_views_diff.csv"
done
