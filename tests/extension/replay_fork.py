#!/usr/bin/env python3
"""Replay through the loadable extension across os.fork() (issue 38 item 11b): a child that inherits
a connection whose replay worker is running must start its own worker, never talk over the parent's
socket (answers would cross) and never kill or wait for the parent's worker.
Parent and child each ask for one op's IR many times at once; each answer must be that op's IR as
written by hand in tests/replay/expected_ir.json (a crossed answer is the other op's IR).
usage: replay_fork.py LIBTLSQL_SO DATA_DIR"""
import json, os, sqlite3, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from replay_workers import workers_of  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
ROUNDS = 200


def scenario(lib, data):
    """Runs in its own process (the driver bounds its time: crossed answers can leave a request
    waiting). Prints one JSON line of findings."""
    expected = {o["uid"]: o["ir"] for o in json.load(open(os.path.join(here, "..", "replay", "expected_ir.json")))["ops"]
                if o["trace"] == "data:tracelens_h100_bert_small_uncased.json.gz"}
    parent_uid, child_uid = 48, 19  # aten::addmm, aten::add
    con = sqlite3.connect(":memory:")
    con.enable_load_extension(True)
    con.load_extension(os.path.splitext(lib)[0])
    con.execute("SELECT tlsql_load(?)", (os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz"),)).fetchone()

    def ir(uid):
        v = con.execute("SELECT replay_ir(?)", (uid,)).fetchone()[0]
        return json.loads(v) if v else None

    found = {"parent_first": ir(parent_uid) == expected[parent_uid]}
    before = workers_of(os.getpid())
    found["parent_workers_before"] = len(before)
    r, w = os.pipe()
    start = time.time() + 0.5  # both begin at once, so their requests overlap
    child = os.fork()
    if child == 0:
        os.close(r)
        got = {"child_ok": 0, "child_wrong": 0}
        time.sleep(max(0.0, start - time.time()))
        for _ in range(ROUNDS):
            if ir(child_uid) == expected[child_uid]:
                got["child_ok"] += 1
            else:
                got["child_wrong"] += 1
        t = con.execute("SELECT replay(?, 'cpu', 1, 0)", (child_uid,)).fetchone()[0]
        got["child_replay_positive"] = t is not None and t > 0
        mine = workers_of(os.getpid())
        got["child_workers"] = len(mine)
        got["child_worker_is_parents"] = bool(set(mine) & set(before))
        os.write(w, json.dumps(got).encode())
        os.close(w)
        con.close()
        sys.exit(0)  # a normal exit: the child's cleanup must leave the parent's worker alone
    os.close(w)
    ok = wrong = 0
    time.sleep(max(0.0, start - time.time()))
    for _ in range(ROUNDS):
        if ir(parent_uid) == expected[parent_uid]:
            ok += 1
        else:
            wrong += 1
    found.update(parent_ok=ok, parent_wrong=wrong)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(child, 0)
    found.update(json.loads(text) if text else {"child_said": "nothing"})
    time.sleep(0.2)
    after = workers_of(os.getpid())
    found["parent_worker_kept"] = bool(before) and after == before
    # A child that closes the inherited socket itself (a daemon closes every descriptor) and reuses
    # its number for a file: its first replay must not close that file.
    child = os.fork()
    if child == 0:
        reused = None
        for fd in sorted(int(x) for x in os.listdir("/proc/self/fd")):
            try:
                if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                    os.close(fd)
                    reused = fd
            except OSError:
                pass
        f = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"replay_fork_{os.getpid()}.txt"), "w+")
        right = ir(child_uid) == expected[child_uid]
        try:
            f.write("still open")
            f.flush()
            kept = True
        except OSError:
            kept = False
        os.unlink(f.name)
        os._exit((0 if right else 1) | (0 if kept else 2) | (0 if f.fileno() == reused else 4))
    _, status = os.waitpid(child, 0)
    found["daemon_child_status"] = os.waitstatus_to_exitcode(status)
    t = con.execute("SELECT replay(?, 'cpu', 1, 0)", (parent_uid,)).fetchone()[0]
    found["parent_replay_after_child"] = t is not None and t > 0
    print(json.dumps(found))


if len(sys.argv) > 1 and sys.argv[1] == "--scenario":
    scenario(sys.argv[2], sys.argv[3])
    sys.exit(0)

lib, data = sys.argv[1:3]
try:
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--scenario", lib, data], capture_output=True,
                       text=True, timeout=300)
    out, err = p.stdout, p.stderr
except subprocess.TimeoutExpired as e:
    out, err = (e.stdout or b"").decode(), "timed out after 300 s (a request waited for an answer the other process read)"
lines = [l for l in out.splitlines() if l.startswith("{")]
f = json.loads(lines[-1]) if lines else {}
check(bool(f), f"the fork scenario finished: {err.strip()[-300:]}")
if f:
    check(f["parent_first"] and f["parent_workers_before"] == 1, f"parent: one worker, right IR before the fork: {f}")
    check(f.get("parent_ok") == ROUNDS, f"parent: {ROUNDS} answers, each its own op's IR ({f.get('parent_wrong')} wrong)")
    check(f.get("child_ok") == ROUNDS, f"child: {ROUNDS} answers, each its own op's IR ({f.get('child_wrong')} wrong)")
    check(f.get("child_replay_positive") is True, "child: replay() runs")
    check(f.get("child_workers") == 1 and f.get("child_worker_is_parents") is False,
          f"child: a worker of its own ({f.get('child_workers')} workers; shares the parent's: "
          f"{f.get('child_worker_is_parents')})")
    check(f.get("parent_worker_kept") is True and f.get("parent_replay_after_child") is True,
          "parent: after the child exits, the same worker is alive and replays")
    check(f.get("daemon_child_status") == 0, "a child that closed the inherited socket and reused its number for a "
          f"file: right IR, file still open (status {f.get('daemon_child_status')}: 1 wrong IR, 2 file closed, "
          "4 number not reused)")
finish()
