#!/bin/sh
# The command line's promises (issue 18, items 1 and 7), through the real binary:
# - `tlsql A --diff B` prints the diff report (as `--report diff` does), stdin not a terminal;
# - an argument error is one line on stderr and exit 1 (CLI11's own codes were 105-114);
#   --help and --version exit 0;
# - -c and -f run in the order given; --report may be repeated, each runs;
# - a diff report without a second trace says so instead of "no such table: other.event";
# - saving says what it wrote (item 8);
# - an empty report says why and keeps its CSV / JSON shape; a diff without ProfilerSteps has rows (item 3);
# - every report's CSV is one table (item 4).
set -u
tlsql=$1 data=$2 work=$3
fail() { echo "FAIL $*"; exit 1; }
base="$data/hta_trace_compare_base.json.gz" test="$data/hta_trace_compare_test.json.gz"
a=$("$tlsql" -q "$base" --diff "$test" < /dev/null) || fail "--diff exit $?"
b=$("$tlsql" -q "$base" --diff "$test" --report diff < /dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "--diff alone does not print the diff report"
for args in "--nosuch" "-c" "--report"; do
  err=$("$tlsql" -q "$base" $args 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] || fail "'$args': exit $rc"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "'$args': not one line: $err"
  case "$err" in "tlsql: error: "*) ;; *) fail "'$args': $err" ;; esac
done
"$tlsql" --help >/dev/null || fail "--help exit $?"
"$tlsql" --version >/dev/null || fail "--version exit $?"
printf "SELECT 'f1';\n" > "$work/cli_f1.sql"
printf "SELECT 'f2';\n" > "$work/cli_f2.sql"
got=$("$tlsql" -q "$base" --csv -f "$work/cli_f1.sql" -c "SELECT 'c1'" -f "$work/cli_f2.sql" -c "SELECT 'c2'" | grep -v "^'")
[ "$got" = "$(printf 'f1\nc1\nf2\nc2')" ] || fail "-c / -f order: $got"
got=$("$tlsql" -q "$base" --csv --report timeline --report temporal | grep -c "^computation_time\|^rank,\|idle_time(us)")
[ "$got" -ge 2 ] || fail "two --report: $got"
err=$("$tlsql" -q "$base" -c ".report diff_kernels" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail ".report diff_kernels without other: exit $rc"
case "$err" in *"diff_kernels needs a second trace: --diff OTHER, or .attach FILE AS other"*) ;; *) fail "$err" ;; esac
# Item 8: what was written is said on stderr ("saved FILE (N MB)"), and nothing with -q.
rm -f "$work/cli_saved.db"
err=$("$tlsql" "$base" -o "$work/cli_saved.db" -c "SELECT 1" 2>&1 >/dev/null)
case "$err" in *"saved $work/cli_saved.db ("*" MB)"*) ;; *) fail "-o says nothing: $err" ;; esac
err=$("$tlsql" -q "$base" -c ".save $work/cli_saved2.db" 2>&1 >/dev/null)
[ -z "$err" ] && [ -f "$work/cli_saved2.db" ] || fail "-q .save: '$err'"
rm -f "$work/cli_saved2.db"
# Item 3: a report with nothing to say prints why on stderr (one line) and exits 0; in CSV / JSON
# its result keeps its shape (the header line; []) for pandas and json.load.
fx="$data/fx_markers.json"  # aten::mm recorded without shapes, no conv, no ProfilerStep
out=$("$tlsql" -q "$fx" --csv --report gemm 2>"$work/cli_err.txt"); rc=$?
[ $rc -eq 0 ] || fail "empty gemm: exit $rc"
[ "$out" = "name,input_dims,input_types,count,gflop_per_call,gpu_us,mean_us,tflops,tbps,achieved_pct,bound,ex_uid,kernel,note" ] ||
  fail "empty gemm CSV: '$out'"
[ "$(cat "$work/cli_err.txt")" = "gemm: no rows: no Input Dims: record with record_shapes=True" ] ||
  fail "empty gemm says: $(cat "$work/cli_err.txt")"
out=$("$tlsql" -q "$fx" --json --report conv 2>"$work/cli_err.txt")
[ "$out" = "[]" ] || fail "empty conv JSON: '$out'"
[ "$(cat "$work/cli_err.txt")" = "conv: no rows: no CONV ops in this trace" ] || fail "conv says: $(cat "$work/cli_err.txt")"
out=$("$tlsql" -q "$fx" --csv --report gemm -c "SELECT 1 WHERE 0" 2>/dev/null | wc -l)
[ "$out" -eq 1 ] || fail "a plain empty SELECT printed something ($out lines): sqlite3 prints nothing"
# The diff of two traces without ProfilerSteps compares all their events (it printed nothing):
# one row per name of either side's ops, annotations, python frames, runtime calls and GPU work.
other="$data/launch_small.json"
kinds="('cpu_op', 'annotation', 'python', 'runtime', 'driver', 'kernel', 'memcpy', 'memset')"
want=$("$tlsql" -q "$fx" --diff "$other" --csv -c ".headers off" -c "SELECT count(*) FROM (SELECT name FROM main.event
  WHERE kind IN $kinds UNION SELECT name FROM other.event WHERE kind IN $kinds)")
got=$("$tlsql" -q "$fx" --diff "$other" --csv -c ".headers off" -c ".parameter set @totals 0" --report diff | wc -l)
[ "$want" -gt 3 ] && [ "$got" = "$want" ] || fail "diff without ProfilerSteps: $got rows, want $want"
# Item 4: every canned report's CSV is one table (one header, every row as wide), on one trace and
# on two ranks (the timeline's per-rank table), diffs against a second trace.
for args in "$data/tracelens_h100_bert_small_uncased.json.gz" "$data/coll_rank0.json $data/coll_rank1.json"; do
  for r in $("$tlsql" -q $args --report list | awk '{ print $1 }'); do
    "$tlsql" -q $args --diff "$data/hta_trace_compare_test.json.gz" --csv --report "$r" > "$work/cli_one.csv" 2>/dev/null
    /usr/bin/python3 -c "
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
sys.exit(0 if not rows or all(len(r) == len(rows[0]) for r in rows) and rows.count(rows[0]) == 1 else 1)" \
      "$work/cli_one.csv" || fail "--report $r on $args: not one CSV table: $(head -c 300 "$work/cli_one.csv")"
  done
done
# Item 11: the default diff is GPU work first, then the largest |diff_duration|, @top 30 rows; names
# are matched without addresses and python line numbers (raw_name keeps one); @normalize 0,
# @sort 'name', @top 'all' give HTA's table (tests/cases/diff_hta_*).
base="$data/hta_trace_compare_base.json.gz" test="$data/hta_trace_compare_test.json.gz"
"$tlsql" -q "$base" --diff "$test" --csv --report diff > "$work/cli_diff.csv"
/usr/bin/python3 - "$work/cli_diff.csv" <<'PY' || fail "default diff order"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
totals = [r["device"] for r in rows if r["name"] == "(total)"]
rows = [r for r in rows if r["name"] != "(total)"]
key = [(r["device"] != "GPU", -abs(float(r["diff_duration"]))) for r in rows]
ok = 0 < len(rows) <= 30 and key == sorted(key) and rows[0]["device"] == "GPU" and totals == ["GPU", "CPU"]
print("default diff:", len(rows), "rows, GPU first, largest |diff_duration| first, then the totals:", ok)
sys.exit(0 if ok else 1)
PY
ev() {  # NAME TS: a python frame event of 5 µs
  printf '{"ph": "X", "cat": "python_function", "name": "%s", "pid": 1, "tid": 1, "ts": %s, "dur": 5}' "$1" "$2"
}
printf '{"traceEvents": [%s, %s]}' "$(ev 'model.py(10): forward' 1)" "$(ev '<built-in method f of M object at 0x7f00aa12>' 10)" \
  > "$work/cli_py_a.json"
printf '{"traceEvents": [%s, %s]}' "$(ev 'model.py(12): forward' 1)" "$(ev '<built-in method f of M object at 0x7f00bb34>' 10)" \
  > "$work/cli_py_b.json"
got=$("$tlsql" -q "$work/cli_py_a.json" --diff "$work/cli_py_b.json" --csv -c ".headers off" --report diff)
[ "$got" = "$(printf '%s\n%s\n%s' '<built-in method f of M object at 0x?>,1,5.0,1,5.0,0,0.0,=,unchanged,CPU,<built-in method f of M object at 0x7f00aa12>' \
  'model.py(?): forward,1,5.0,1,5.0,0,0.0,=,unchanged,CPU,model.py(10): forward' \
  '(total),2,10.0,2,10.0,0,0.0,=,unchanged,CPU,')" ] || fail "normalized diff: $got"
got=$("$tlsql" -q "$work/cli_py_a.json" --diff "$work/cli_py_b.json" --csv -c ".headers off" -c ".parameter set @normalize 0" \
  -c ".parameter set @totals 0" --report diff | cut -d, -f1,9 | sort | tr '\n' ' ')
[ "$got" = "<built-in method f of M object at 0x7f00aa12>,deleted <built-in method f of M object at 0x7f00bb34>,added model.py(10): forward,deleted model.py(12): forward,added " ] ||
  fail "@normalize 0: $got"
echo "command line ok"
