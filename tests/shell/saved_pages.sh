#!/bin/sh
# A save writes the event table and its indexes page by page (src/btree_writer.h). Check, with
# SQLite's own integrity_check (every index entry against its row) and a typed comparison
# (EXCEPT tells 1 from '1') that the saved rows are the loaded ones: for two traces saved
# together, a hand-made trace whose args overflow 64 KiB pages, and shared traces when present.
set -eu
tlsql=$1 data=$2 shared=$3 work=$4/saved_pages
mkdir -p "$work"
check() {  # DB TRACE...: the db saved from those traces
  db=$1
  shift
  [ "$(sqlite3 "$db" "PRAGMA integrity_check")" = ok ] || { echo "integrity_check failed: $db"; exit 1; }
  got=$("$tlsql" -q --csv "$@" -c "ATTACH '$db' AS s;
    SELECT (SELECT count(*) FROM (SELECT * FROM event EXCEPT SELECT * FROM s.event)),
           (SELECT count(*) FROM (SELECT * FROM s.event EXCEPT SELECT * FROM event)),
           (SELECT count(*) FROM s.event) = (SELECT count(*) FROM event),
           (SELECT count(*) FROM s.event INDEXED BY event_kind WHERE kind = 'kernel') = (SELECT count(*) FROM kernel),
           (SELECT count(*) FROM s.event INDEXED BY event_parent WHERE parent IS NOT NULL)
             = (SELECT count(*) FROM event WHERE parent IS NOT NULL)" | tail -1)
  [ "$got" = "0,0,1,1,1" ] || { echo "saved rows differ from loaded ones ($got): $*"; exit 1; }
}

# Two traces in one database: uids of the second follow the first's.
rm -f "$work/two.db"
"$tlsql" -q "$data/tracelens_h100_bert_small_uncased.json.gz" "$data/hta_amd_mi250_minitoy.json.gz" -o "$work/two.db" -c "SELECT 1" >/dev/null
check "$work/two.db" "$data/tracelens_h100_bert_small_uncased.json.gz" "$data/hta_amd_mi250_minitoy.json.gz"

# Args of 100 KB and 300 KB take overflow pages; a 0-event trace writes an empty table.
python3 - "$work/big_args.json" <<'PY'
import json, sys
events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5,
           "args": {"blob": "x" * (100_000 if i % 2 else 300_000 if i == 4 else i)}} for i in range(8)]
json.dump({"traceEvents": events}, open(sys.argv[1], "w"))
PY
rm -f "$work/big_args.db"
"$tlsql" -q "$work/big_args.json" -o "$work/big_args.db" -c "SELECT 1" >/dev/null
check "$work/big_args.db" "$work/big_args.json"
[ "$(sqlite3 "$work/big_args.db" "SELECT max(length(args)) FROM event")" -gt 300000 ] || { echo "args cut"; exit 1; }
echo '{"traceEvents": []}' > "$work/empty.json"
rm -f "$work/empty.db"
"$tlsql" -q "$work/empty.json" -o "$work/empty.db" -c "SELECT 1" >/dev/null
check "$work/empty.db" "$work/empty.json"

for t in hta/trace_diff/control.json.gz tracelens/mi300/resnet_act_checkpoint.json.gz; do
  [ -f "$shared/traces/$t" ] || { echo "(no $shared/traces/$t)"; continue; }
  rm -f "$work/shared.db"
  "$tlsql" -q "$shared/traces/$t" -o "$work/shared.db" -c "SELECT 1" >/dev/null
  check "$work/shared.db" "$shared/traces/$t"
done
echo ok
