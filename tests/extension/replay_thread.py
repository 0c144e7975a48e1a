#!/usr/bin/env python3
"""Replay through the loadable extension from a short-lived thread (issue 46): Python's sqlite3 in a
concurrent.futures pool starts the replay worker from a pool thread that then exits; later calls
from the main thread must reach the same worker, alive. (Linux's PR_SET_PDEATHSIG, which the worker
used to die with its parent, fires when the spawning *thread* exits: the worker was killed and the
next call answered "the replay worker was killed by signal 9".) Each answer is checked against the
op's IR written by hand in tests/replay/expected_ir.json.
usage: replay_thread.py LIBTLSQL_SO DATA_DIR"""
import concurrent.futures, json, os, sqlite3, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from replay_workers import workers_of  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
lib, data = sys.argv[1:3]
expected = {o["uid"]: o["ir"] for o in json.load(open(os.path.join(here, "..", "replay", "expected_ir.json")))["ops"]
            if o["trace"] == "data:tracelens_h100_bert_small_uncased.json.gz"}
addmm, add = 48, 19  # aten::addmm, aten::add


# One connection used by one thread at a time (check_same_thread off, as a pool's user sets it).
con = sqlite3.connect(":memory:", check_same_thread=False)
con.enable_load_extension(True)
con.load_extension(os.path.splitext(lib)[0])
con.execute("SELECT tlsql_load(?)", (os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz"),)).fetchone()


def ir(uid):
    v = con.execute("SELECT replay_ir(?)", (uid,)).fetchone()[0]
    return json.loads(v) if v else v


# The first call, which starts the worker, from a pool thread; the pool is shut down, so that
# thread has exited when the next calls come.
with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
    first = pool.submit(ir, addmm).result(timeout=300)
check(first == expected[addmm], f"from a pool thread: aten::addmm's IR ({str(first)[:200]})")
started = workers_of(os.getpid())
check(len(started) == 1, f"one worker started ({started})")
time.sleep(1.0)  # past the worker's watch (4 times a second): a worker tied to the thread is gone
check(workers_of(os.getpid()) == started, f"the worker outlives the thread that started it ({workers_of(os.getpid())} vs {started})")
second = ir(add)
check(second == expected[add], f"from the main thread afterwards: aten::add's IR, the same worker ({str(second)[:200]})")
t = con.execute("SELECT replay(?, 'cpu', 1, 0)", (add,)).fetchone()[0]
check(t is not None and t > 0 and workers_of(os.getpid()) == started, f"replay() runs on it: {t} ns, workers {workers_of(os.getpid())}")
# And from another short-lived thread again, then the main thread: still one worker.
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    got = list(pool.map(ir, [addmm, add]))
check(got == [expected[addmm], expected[add]] and workers_of(os.getpid()) == started, "a second pool: same worker, right IRs")
con.close()
finish()
