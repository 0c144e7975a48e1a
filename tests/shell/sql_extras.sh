#!/bin/sh
# SQL analysts reach for (issue 18, item 10), through the real binary:
# - median / percentile / variance / stddev against hand arithmetic and against Python's
#   statistics module over a trace's op durations (its 'inclusive' quantiles interpolate as
#   SQLite's percentile extension does);
# - REGEXP (POSIX extended, matches anywhere) against the same set written with IN, and a bad
#   pattern is a one-line error with exit 1;
# - a directory as TRACE loads each .json / .json.gz in it (one per rank), nothing else.
set -u
tlsql=$1 data=$2 work=$3
fail() { echo "FAIL $*"; exit 1; }
t="$data/tracelens_h100_bert_small_uncased.json.gz"
# 1, 2, 3, 4, 10 (and a NULL, skipped): median 3; p25 at rank 0.25 * 4 = 1 -> 2; p90 at rank 3.6 ->
# 4 + 0.6 * (10 - 4) = 7.6; mean 4, squared deviations 9 + 4 + 1 + 0 + 36 = 50, sample variance
# 50 / 4 = 12.5, stddev sqrt(12.5) = 3.5355339; one value: no variance.
got=$("$tlsql" -q "$t" --csv -c ".headers off" -c "WITH v(x) AS (VALUES (1), (2), (3), (4), (10), (NULL))
  SELECT median(x), percentile(x, 25), percentile(x, 90), variance(x), round(stddev(x), 7),
         (SELECT variance(x) IS NULL FROM (SELECT 5 AS x)) FROM v")
[ "$got" = "3.0,2.0,7.6,12.5,3.5355339,1" ] || fail "statistics by hand: $got"
"$tlsql" -q "$t" --csv -c ".headers off" -c "SELECT dur FROM op" > "$work/extras_durs.csv"
got=$("$tlsql" -q "$t" --csv -c ".headers off" -c "SELECT median(dur), percentile(dur, 90), stddev(dur), variance(dur) FROM op")
/usr/bin/python3 - "$work/extras_durs.csv" "$got" <<'PY' || fail "statistics against Python's"
import statistics, sys
v = [float(x) for x in open(sys.argv[1]).read().split()]
want = [statistics.median(v), statistics.quantiles(v, n=10, method="inclusive")[8], statistics.stdev(v),
        statistics.variance(v)]
got = [float(x) for x in sys.argv[2].split(",")]
ok = len(v) > 100 and all(abs(a - b) <= 1e-9 * max(1.0, abs(a)) for a, b in zip(want, got))
print(("ok" if ok else "FAIL"), len(v), "ops:", want, got)
sys.exit(0 if ok else 1)
PY
got=$("$tlsql" -q "$t" --csv -c ".headers off" -c "SELECT (SELECT count(*) FROM op WHERE name REGEXP '^aten::(add|mul)_?\$'),
  (SELECT count(*) FROM op WHERE name IN ('aten::add', 'aten::mul', 'aten::add_', 'aten::mul_')),
  'xx_gemm_yy' REGEXP 'gemm', regexp('^gemm', 'xx_gemm')")
case "$got" in 0,0,*) fail "regexp: no ops to compare: $got" ;; esac
a=${got%%,*} rest=${got#*,}
[ "$a,$rest" = "$a,$a,1,0" ] || fail "regexp: $got"
err=$("$tlsql" -q "$t" -c "SELECT name REGEXP '(' FROM op" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "bad pattern: exit $rc: $err"
case "$err" in *"regexp: bad pattern '('"*) ;; *) fail "bad pattern: $err" ;; esac
# A directory of two ranks' traces (and a file that is not a trace, which is left out).
dir="$work/extras_ranks"
rm -rf "$dir" && mkdir -p "$dir/sub"
cp "$data/hta_trace_compare_base.json.gz" "$dir/rank0.json.gz"
cp "$data/hta_backward_thread.json" "$dir/rank1.json"
cp "$data/hta_backward_thread.json" "$dir/sub/rank2.json"
echo "not a trace" > "$dir/README.txt"
each=$(for f in "$dir/rank0.json.gz" "$dir/rank1.json"; do
  "$tlsql" -q "$f" --csv -c ".headers off" -c "SELECT count(*) FROM event"; done | awk '{ s += $1 } END { print s }')
got=$("$tlsql" -q "$dir" --csv -c ".headers off" -c "SELECT count(*), (SELECT count(*) FROM trace) FROM event")
[ "$got" = "$each,2" ] || fail "directory: $got (files one by one: $each events, 2 traces)"
mkdir -p "$work/extras_empty"
err=$("$tlsql" -q "$work/extras_empty" -c "SELECT 1" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "empty directory: exit $rc"
case "$err" in *"extras_empty: a directory with no .json or .json.gz trace files"*) ;; *) fail "empty: $err" ;; esac
echo "sql extras ok"
