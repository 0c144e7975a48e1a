#!/bin/sh
# The sqlite3 shell's habits (issue 18, items 5, 6 and 9), through the real binary:
# - list, tabs, html, line, insert and quote print what the sqlite3 shell prints (with .headers and
#   .nullvalue); insert's REALs are the shortest text that reads back exactly;
# - .exit N, .mode with no argument, .tables PATTERN, .schema of the event virtual table, .help TOPIC,
#   .show, .echo, .changes, .eqp, .print, .version, .databases, .import, .dump, .width, --wrap;
# - aligned modes: REALs to 3 decimals (3 significant digits below 1) with thousands separators,
#   markdown escapes |, long cells wrap; CSV keeps full precision.
set -u
tlsql=$1 data=$2 work=$3
fail() { echo "FAIL $*"; exit 1; }
t="$data/fx_markers.json"
Q="SELECT 1 AS a, 'x,y' AS b, NULL AS c, 2.5 AS d, 'it''s <b>' AS e, x'41ff10' AS f
   UNION ALL SELECT 2, 'p|q', 'z', -0.5, '', x''"
if command -v sqlite3 >/dev/null; then
  for m in list tabs html line insert quote; do
    want=$(sqlite3 :memory: ".headers on" ".nullvalue NA" ".mode $m" "$Q")
    got=$("$tlsql" -q "$t" -c ".headers on" -c ".nullvalue NA" -c ".mode $m" -c "$Q")
    [ -n "$want" ] && [ "$got" = "$want" ] || fail ".mode $m: sqlite3 prints
$want
tlsql prints
$got"
  done
  # insert mode's output is SQL that restores the values exactly (0.1 + 0.2 has 17 digits).
  got=$("$tlsql" -q "$t" -c ".mode insert r" -c "SELECT 0.1 + 0.2 AS v, -0.001 AS w" |
        sqlite3 :memory: "CREATE TABLE r(v, w)" ".read /dev/stdin" "SELECT v = 0.1 + 0.2 AND w = -0.001 FROM r")
  [ "$got" = "1" ] || fail "insert mode does not round-trip: $got"
  # .dump is SQL that the sqlite3 shell turns back into the same tables (event, a virtual table over
  # the loader's memory, as a plain table), with the same rows.
  rm -f "$work/habits_dump.db"
  "$tlsql" -q "$t" -c ".dump" | sqlite3 "$work/habits_dump.db" || fail ".dump does not load into sqlite3"
  q="SELECT (SELECT count(*) FROM event), (SELECT count(*) FROM trace),
    (SELECT group_concat(name, ';') FROM (SELECT name FROM event ORDER BY uid)), (SELECT sum(dur) FROM event)"
  want=$("$tlsql" -q "$t" --list -c ".headers off" -c "$q")
  got=$(sqlite3 -list "$work/habits_dump.db" "$q")
  [ -n "$want" ] && [ "$got" = "$want" ] || fail ".dump: sqlite3 reads back $got, want $want"
  # And a saved database's: its event table's generated columns take no values, its stored perf
  # table (a BLOB) comes back byte for byte.
  rm -f "$work/habits_saved.db" "$work/habits_saved_dump.db"
  "$tlsql" -q "$t" -o "$work/habits_saved.db" -c "SELECT 1" >/dev/null
  "$tlsql" "$work/habits_saved.db" -c ".dump" | sqlite3 "$work/habits_saved_dump.db" ||
    fail ".dump of a saved database does not load into sqlite3"
  q2="$q, (SELECT hex(data) FROM tlsql_perf), (SELECT count(input_dims) FROM event)"
  want=$(sqlite3 -list "$work/habits_saved.db" "$q2")
  got=$(sqlite3 -list "$work/habits_saved_dump.db" "$q2")
  [ -n "$want" ] && [ "$got" = "$want" ] || fail ".dump of a saved database: sqlite3 reads back $got, want $want"
else
  echo "skip the comparison with the sqlite3 shell: not installed"
fi
"$tlsql" -q "$t" -c "SELECT 1" -c ".exit 3" -c "SELECT 2" >/dev/null; rc=$?
[ $rc -eq 3 ] || fail ".exit 3: exit $rc"
got=$("$tlsql" -q "$t" -c ".mode tabs" -c ".mode")
[ "$got" = "current output mode: tabs" ] || fail ".mode: $got"
got=$("$tlsql" -q "$t" -c ".tables k%")
[ "$(echo $got)" = "kernel kernel_rule" ] || fail ".tables k%: $got"
got=$("$tlsql" -q "$t" -c ".schema event")
case "$got" in *"CREATE VIRTUAL TABLE event USING tlsql_event("*");"*"  input_dims TEXT,"*"  concrete_inputs TEXT"*) ;;
  *) fail ".schema event shows no columns: $got" ;; esac
got=$("$tlsql" -q "$t" -c ".help wid")
case "$got" in ".width N1 N2"*) ;; *) fail ".help wid: $got" ;; esac
got=$("$tlsql" -q "$t" -c ".nullvalue NA" -c ".separator ;" -c ".show")
case "$got" in *'nullvalue: "NA"'*'separator: ";"'*) ;; *) fail ".show: $got" ;; esac
got=$("$tlsql" -q "$t" --csv -c ".echo on" -c "SELECT 7 AS x;" -c ".print done, bye")
[ "$got" = "$(printf 'SELECT 7 AS x;\nx\n7\ndone, bye')" ] || fail ".echo / .print: $got"
got=$("$tlsql" -q "$t" --csv -c ".changes on" -c "CREATE TEMP TABLE c(x); INSERT INTO c VALUES (1), (2), (3);" -c "SELECT 1 AS one")
case "$got" in *"changes: 3   total_changes: "*"one"*) ;; *) fail ".changes: $got" ;; esac
got=$("$tlsql" -q "$t" --csv -c ".eqp on" -c "SELECT count(*) FROM kernel")
case "$got" in "QUERY PLAN"*"--"*) ;; *) fail ".eqp: $got" ;; esac
"$tlsql" -q "$t" -c ".version" | grep -q "^tlsql [0-9.]* (SQLite 3" || fail ".version"
"$tlsql" -q "$t" -c ".databases" | grep -q "^main: " || fail ".databases"
# .import: a CSV written by tlsql comes back with the same rows (quotes, commas, newlines inside).
"$tlsql" -q "$t" --csv -c "SELECT uid, name, 'a \"q\", b' AS odd, 'two
lines' AS nl FROM event ORDER BY uid" > "$work/habits.csv"
got=$("$tlsql" -q "$t" --csv -c ".import $work/habits.csv back" -c "SELECT count(*) FROM back b JOIN event e
  ON e.uid = b.uid AND e.name = b.name WHERE b.odd = 'a \"q\", b' AND b.nl = 'two
lines'" -c "SELECT count(*) FROM event" 2>/dev/null | grep -v count)
[ "$(echo $got)" = "11 11" ] || fail ".import: $got (11 events expected back)"
# Aligned modes: readable REALs, markdown escaping, wrapping; CSV untouched.
got=$("$tlsql" -q "$t" --markdown -c "SELECT 13214.178693 AS us, 3.8e-05 AS tiny, 'a|b' AS s, 12 AS n")
[ "$got" = "$(printf '| us         | tiny     | s    | n  |\n|-----------:|---------:|------|---:|\n| 13,214.179 | 0.000038 | a\\|b | 12 |')" ] ||
  fail "markdown: $got"
got=$("$tlsql" -q "$t" --csv -c "SELECT 13214.178693 AS us, 3.8e-05 AS tiny")
[ "$got" = "$(printf 'us,tiny\n13214.178693,3.8e-05')" ] || fail "csv precision: $got"
long="abcdefghijklmnopqrstuvwxyz0123456789"
got=$("$tlsql" -q "$t" --box --wrap 10 -c "SELECT '$long' AS name, 1 AS n")
lines=$(printf '%s\n' "$got" | grep -c "│")
[ "$lines" -eq 5 ] || fail "--wrap 10: $lines lines with cells, want header + 4 wrapped\n$got"
back=$(printf '%s\n' "$got" | sed -n '4,7p' | awk -F'│' '{ printf "%s", $2 }' | tr -d ' ')
[ "$back" = "$long" ] || fail "--wrap 10 lost text: $back"
got=$("$tlsql" -q "$t" --table -c ".width 5 -6" -c "SELECT 'abcdefgh' AS a, 7 AS b")
[ "$got" = "$(printf '+-------+--------+\n| a     | b      |\n+-------+--------+\n| abcde |      7 |\n| fgh   |        |\n+-------+--------+')" ] ||
  fail ".width 5 -6: $got"
# .cd (sqlite3's): later relative file names are under the new directory; a directory that is not
# there is a one-line error and exit code 1. Usage errors come from the command's row in the
# dot-command table, as .help shows its arguments; too many arguments are an error, not ignored.
mkdir -p "$work/habits_cd"
printf 'SELECT 40 + 2 AS answer;\n' > "$work/habits_cd/rel.sql"
got=$(cd / && "$tlsql" -q "$t" --list -c ".cd $work/habits_cd" -c ".read rel.sql")
[ "$got" = "$(printf 'answer\n42')" ] || fail ".cd then .read rel.sql: $got"
got=$("$tlsql" -q "$t" -c ".cd $work/habits_cd/no_such_dir" 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$got" = "error: -c: near line 1: cannot change to $work/habits_cd/no_such_dir: No such file or directory" ] ||
  fail ".cd to a missing directory: rc $rc, $got"
for c in ".attach x|usage: .attach FILE AS NAME" ".exit 1 2|usage: .exit [CODE]" ".tree x|usage: .tree UID [DEPTH] [all]"; do
  got=$("$tlsql" -q "$t" -c "${c%%|*}" 2>&1); rc=$?
  [ $rc -eq 1 ] && [ "$got" = "error: -c: near line 1: ${c#*|}" ] || fail "${c%%|*}: rc $rc, $got"
done
"$tlsql" -q "$t" -c ".help cd" | grep -q "^\.cd DIRECTORY  *change the working directory" || fail ".help cd"
echo "sqlite3 habits ok"
