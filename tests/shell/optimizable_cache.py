#!/usr/bin/env python3
"""optimizable_events' rankings kept per connection (udf/analysis/optimizable.cpp): the report and
its note ask for each trace's ranking in turn, and the second call reads the first's. Checked on
tests/data/queue_depth.json, whose ranking tests/cases/optimizable_small works out by hand: the
kept ranking is the one of the trace and top asked for, and none is read after the rows change
(rows written on the connection, a table renamed and made again, an attached database changed by
another process). That a ranking is read again is not observable here (the same rows either way).
usage: optimizable_cache.py TLSQL DATA_DIR WORK_DIR"""
import csv, io, os, shutil, sqlite3, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, work = sys.argv[1:4]
work = os.path.join(work, "optimizable_cache")
os.makedirs(work, exist_ok=True)
one = os.path.join(data, "queue_depth.json")
two = os.path.join(work, "queue_depth_copy.json")  # a second trace: its uids follow the first's 15
shutil.copyfile(one, two)

Q = "SELECT uid FROM optimizable_events({}, {}) ORDER BY position"
# By hand (tests/cases/optimizable_small): b (uid 11), a (0), c (12), then the two launches at
# -1.058, L5 (5) before L6 (13): their start order. The copy's are 15 more.
first = [11, 0, 12, 5, 13]
second = [u + 15 for u in first]
# One session: trace 0 at top 10 and 2, trace 1 at top 10, trace 0 at top 10 again; then the
# launch links deleted (no launch has a kernel: the queue never reaches depth 4, so no falling
# phase and no ranked event) and trace 0 asked again.
script = [Q.format(0, 10), Q.format(0, 2), Q.format(1, 10), Q.format(0, 10),
          "DELETE FROM launch_link", Q.format(0, 10)]
r = subprocess.run([tlsql, "-q", "--csv", one, two] + sum((["-c", s] for s in script), []),
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 0, f"the session exits 0 ({r.stderr.strip()[:200]})")
blocks = [b for b in r.stdout.split("uid\n") if b != ""]
got = [[int(x) for x in b.split()] for b in blocks]
check(got[:4] == [first, first[:2], second, first],
      f"trace 0 at top 10 and 2, trace 1, trace 0 again: {first}, {first[:2]}, {second}, {first} ({got[:4]})")
check(len(got) == 4, f"after DELETE FROM launch_link, trace 0 ranks nothing (the kept ranking not read: {got[4:]})")
# A table renamed and another made in its place on the same connection: no row changes, the
# schema does (its version).
script = [Q.format(0, 10), "ALTER TABLE launch_link RENAME TO old_links",
          "CREATE TABLE launch_link(gpu INTEGER PRIMARY KEY, runtime INTEGER NOT NULL, launcher INTEGER NOT NULL)",
          Q.format(0, 10)]
r = subprocess.run([tlsql, "-q", "--csv", one, two] + sum((["-c", s] for s in script), []),
                   capture_output=True, text=True, timeout=60)
got = [[int(x) for x in b.split()] for b in r.stdout.split("uid\n") if b != ""]
check(r.returncode == 0 and got == [first],
      f"launch_link renamed and made again empty: the second call ranks nothing ({got}; {r.stderr.strip()[:200]})")
# A saved database attached, changed by another process between two statements (its launch links
# deleted): the pragma reads its data version afresh, where the file control gave the count as of
# the schema's last read.
saved = os.path.join(work, "attached.db")
if os.path.exists(saved):
    os.remove(saved)
subprocess.run([tlsql, "-q", one, "-o", saved], check=True, capture_output=True, timeout=60)
delete = f"import sqlite3; c = sqlite3.connect({saved!r}); c.execute('DELETE FROM launch_link'); c.commit()"
A = "SELECT uid FROM optimizable_events(0, 10, 'aux') ORDER BY position"
script = ["ATTACH " + "'" + saved.replace("'", "''") + "' AS aux", A, A, f".shell {sys.executable} -c \"{delete}\"", A]
r = subprocess.run([tlsql, "-q", "--csv", one] + sum((["-c", s] for s in script), []),
                   capture_output=True, text=True, timeout=60)
got = [[int(x) for x in b.split()] for b in r.stdout.split("uid\n") if b != ""]
check(r.returncode == 0 and got == [first, first],
      f"an attached database changed by another process: ranked twice, then nothing ({got}; {r.stderr.strip()[:200]})")
# The trace saved again and edited by hand, two host events' uids moved 10^19 apart: aten::b
# (11, a leaf) to 5e18 and the launch of k6 (13, a leaf; its link moved with it) to -5e18. The
# ranking is the same events (each parent still found: the uid range's width past int64).
edited = os.path.join(work, "spread.db")
if os.path.exists(edited):
    os.remove(edited)
subprocess.run([tlsql, "-q", one, "-o", edited], check=True, capture_output=True, timeout=60)
c = sqlite3.connect(edited)
c.execute("UPDATE event SET uid = 5000000000000000000 WHERE uid = 11")
c.execute("UPDATE event SET uid = -5000000000000000000 WHERE uid = 13")
c.execute("UPDATE launch_link SET runtime = -5000000000000000000 WHERE runtime = 13")
c.commit()
c.close()
r = subprocess.run([tlsql, "-q", "--csv", edited, "-c", Q.format(0, 10)], capture_output=True, text=True, timeout=60)
got = [int(x) for x in r.stdout.split()[1:]]
want = [5000000000000000000, 0, 12, 5, -5000000000000000000]
check(r.returncode == 0 and got == want, f"uids 10^19 apart: {want} ({got}; {r.stderr.strip()[:200]})")
# The report and its note in one session: the report's rows are the function's.
r = subprocess.run([tlsql, "-q", "--csv", one, two, "--report", "optimizable"], capture_output=True, text=True,
                   timeout=60)
rows = list(csv.DictReader(io.StringIO(r.stdout)))
check(r.returncode == 0 and [int(x["uid"]) for x in rows] == first + second,
      f"--report optimizable on both traces: {first + second} ({[x['uid'] for x in rows]})")
finish()
