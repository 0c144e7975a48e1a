#!/usr/bin/env python3
"""Replay end to end through the real binaries (CPU LibTorch):
- replay_ir(uid) equals the IR written by hand in expected_ir.json, op by op;
- .replay runs each op and reports a positive time and the output shape the op must produce;
- a crashing op (tests/data/replay_crash.json: test-only ops that segfault / abort in the worker)
  gives NULL + the reason, and the session answers the next query; invalid IR (mm of [2,3] x [4,5]),
  an op LibTorch lacks and an op without shapes give NULL + their reason;
- .export-replay FILE.json / FILE.zip -> tlsql-replay FILE round trip; tlsql-replay reads TraceLens's IR.
usage: replay_test.py TLSQL TLSQL_REPLAY DATA_DIR SHARED_DIR WORK_DIR"""
import json, os, re, subprocess, sys, zipfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, replay_bin, data, shared, work = sys.argv[1:6]
here = os.path.dirname(os.path.abspath(__file__))


def path_of(ref):
    kind, rel = ref.split(":", 1)
    return os.path.join(data, rel) if kind == "data" else os.path.join(shared, "traces", rel)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)


expected = json.load(open(os.path.join(here, "expected_ir.json")))["ops"]
by_trace = {}
for op in expected:
    by_trace.setdefault(op["trace"], []).append(op)
for ref, ops in by_trace.items():
    trace = path_of(ref)
    if not os.path.exists(trace):
        print(f"skip {ref}: not present")
        continue
    uids = ",".join(str(o["uid"]) for o in ops)
    cmds = ["-c", f"SELECT uid, replay_ir(uid) AS ir FROM op WHERE uid IN ({uids}) ORDER BY uid"]
    for o in ops:
        cmds += ["-c", f".replay {o['uid']} cpu 1 0"]
    r = run([tlsql, trace, "--json"] + cmds)
    check(r.returncode == 0, f"{ref}: tlsql exit 0 ({r.stderr.strip()[:300]})")
    rows, first_end = json.JSONDecoder().raw_decode(r.stdout)
    got = {row["uid"]: json.loads(row["ir"]) if row["ir"] else None for row in rows}
    reports = r.stdout[first_end:].split(" replayed on ")[1:]
    for o in ops:
        check(got.get(o["uid"]) == o["ir"], f"{ref} uid {o['uid']} {o['ir']['op_name']}: IR as written by hand")
    for o, rep in zip(ops, reports):
        shape = re.search(r"Output shapes: (\[[^\]]*\])", rep)
        mean = re.search(r"Replayed: mean ([0-9.]+) µs", rep)
        check(shape is not None and json.loads(shape.group(1)) == o["shape"],
              f"uid {o['uid']} {o['ir']['op_name']}: output shape {o['shape']} ({shape and shape.group(1)})")
        check(mean is not None and float(mean.group(1)) > 0, f"uid {o['uid']}: replayed time > 0")
    check(len(reports) == len(ops), f"{ref}: one .replay report per op")
    # Issue 18 item 15: a CPU replay says so before it starts, and the report says how long it all took.
    check(r.stderr.count("on CPU: expect it to be much slower than on a GPU (0 warm-up + 1 iterations") == len(ops),
          f"{ref}: each CPU .replay warns first ({r.stderr.strip()[:200]})")
    check(all(re.search(r"min [0-9.]+ µs \([0-9.]+ s in all\)", rep) for rep in reports), f"{ref}: wall time reported")
    d = run([tlsql, trace, "-c", f".replay {ops[0]['uid']} 1 0"])
    on_cpu = " replayed on cpu " in d.stdout
    check(d.returncode == 0 and ("on CPU (this LibTorch has no CUDA)" in d.stderr) == on_cpu,
          f"{ref}: the default device is named before a CPU replay, and only then ({d.stderr.strip()[:200]})")

# The worker reports progress before its answer (tlsql shows it on a terminal during long replays):
# one line after the first call, then at most one a second; the answer follows.
op = expected[0]
req = json.dumps({"op": "run", "ir": op["ir"], "device": "cpu", "warmup": 2, "iters": 3})
r = subprocess.run([replay_bin, "--worker"], input=req + "\n", capture_output=True, text=True, timeout=300)
lines = [json.loads(l) for l in r.stdout.splitlines()]
check(len(lines) >= 2 and lines[0] == {"progress": 1, "of": 5} and lines[-1].get("ok") is True and
      all("progress" in l for l in lines[:-1]), f"worker progress lines, then the answer: {r.stdout[:300]}")

# Crashes, invalid IR, unknown ops: NULL + reason, and the session goes on.
crash = os.path.join(data, "replay_crash.json")
r = run([tlsql, crash, "--csv", "-c", "SELECT replay_ir(0) IS NULL AS a", "-c", "SELECT replay(1, 'cpu', 1, 0) > 0 AS b",
         "-c", "SELECT replay(2, 'cpu', 1, 0) IS NULL AS c", "-c", "SELECT replay(3, 'cpu', 1, 0) IS NULL AS d",
         "-c", "SELECT replay_ir(4) IS NULL AS e", "-c", "SELECT replay_ir(5) IS NULL AS f", "-c", "SELECT 42 AS g"])
check(r.returncode == 0, "crash trace: exit 0")
check(r.stdout.split() == ["a", "1", "b", "1", "c", "1", "d", "1", "e", "1", "f", "1", "g", "42"], "crash trace: results " + repr(r.stdout))
err = r.stderr
check("replay_ir(0): the replay worker was killed by signal 11" in err, "segfault reported as signal 11")
check("replay(2): the replay worker was killed by signal 6" in err, "abort reported as signal 6")
check(re.search(r"replay\(3\): .*(size mismatch|cannot be multiplied|shapes)", err) is not None, "invalid IR: LibTorch's error")
check("replay_ir(4): LibTorch" in err and "has no operator aten::no_such_op" in err, "unknown op reported")
check("replay_ir(5): the trace has no Input Dims" in err, "op without shapes reported")

# Round trip: .export-replay -> tlsql-replay, as JSON and as a zip bundle.
bert = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
rt_json, rt_zip = os.path.join(work, "rt.json"), os.path.join(work, "rt.zip")
for p in (rt_json, rt_zip):
    if os.path.exists(p):
        os.remove(p)
r = run([tlsql, bert, "-c", f".export-replay {rt_json} WHERE name IN ('aten::addmm', 'aten::add', 'aten::layer_norm')",
         "-c", f".export-replay {rt_zip} WHERE name IN ('aten::addmm', 'aten::add', 'aten::layer_norm')"])
check(r.returncode == 0, "export: exit 0 " + r.stderr)
ops = json.load(open(rt_json))
counts = run([tlsql, bert, "--csv", "-c", "SELECT count(*) FROM op WHERE name IN ('aten::addmm', 'aten::add', 'aten::layer_norm')"])
check(sum(o["count"] for o in ops) == int(counts.stdout.split()[1]), "export: counts add up to the ops selected")
check(len({json.dumps(o["replay_ir"], sort_keys=True) for o in ops}) == len(ops), "export: identical IRs merged")
with zipfile.ZipFile(rt_zip) as z:
    check(sorted(z.namelist()) == ["README.md", "replay_ir.json"], "zip: replay_ir.json + README.md")
    check(json.loads(z.read("replay_ir.json")) == ops, "zip: same IR as the .json export")
    check("tlsql-replay replay_ir.json" in z.read("README.md").decode(), "zip README says how to replay")
r = run([replay_bin, rt_json, "--device", "cpu", "--iters", "1", "--warmup", "0"])
n = len(ops)
check(r.returncode == 0 and f"Summary: total {n}, attempted {n}, succeeded {n}, errors 0" in r.stdout,
      "tlsql-replay replays every exported op: " + r.stdout[-200:])
check(r.stdout.count("Average time taken: ") == n and "Replaying: aten::addmm" in r.stdout, "tlsql-replay prints each op")
r = run([replay_bin, rt_json, "--device", "cpu", "--iters", "1", "--warmup", "0", "--filter", "^aten::add$", "--limit", "1"])
check("attempted 1, succeeded 1" in r.stdout, "--filter / --limit")
tl = os.path.join(shared, "expected", "tracelens", "h100_gaunernst_bert-small-uncased", "replay_ir_by_uid.json")
if os.path.exists(tl):
    r = run([replay_bin, tl, "--device", "cpu", "--iters", "1", "--warmup", "0", "--filter", "add|layer_norm|linear"])
    check(r.returncode == 0 and "errors 0" in r.stdout, "tlsql-replay reads TraceLens's IR: " + r.stdout[-120:])
r = run([replay_bin, os.path.join(data, "bad_not_json.txt")])
check(r.returncode == 1 and "not valid JSON" in r.stderr, "tlsql-replay: bad file -> one-line error, exit 1")

# Hostile IR files: one line naming the entry and what is wrong, exit 1; never an abort, a read of
# a missing member or a stack overflow.
mm = {"op_name": "aten::mm", "replay_ir": {"list_pos_args": [
    {"arg_name": "self", "arg_type": "Tensor", "value": {"shape": [2, 3], "dtype": "float"}},
    {"arg_name": "mat2", "arg_type": "Tensor", "value": {"shape": [3, 4], "dtype": "float", "strides": [4, 1]}}]}}
bad_ir = [
    ([{"op_name": 7, "replay_ir": {}}], "entry 1: \"op_name\" is not a string"),
    ([mm, {"op_name": "aten::mm", "replay_ir": "x"}], "entry 2: \"replay_ir\" is not an object"),
    ([{"op_name": "aten::mm", "replay_ir": {"list_pos_args": {"a": 1}}}], "entry 1: \"list_pos_args\" is not a list"),
    ([{"op_name": "aten::mm", "replay_ir": {"list_pos_args": [{"arg_name": "self"}]}}], "holds an argument without a \"value\""),
    ([{"op_name": "aten::mm", "replay_ir": {"list_pos_args": [{"value": {"shape": ["2"], "dtype": "float"}}]}}],
     "a tensor \"shape\" that is not a list of integers"),
    ([{"op_name": "aten::mm", "replay_ir": {"list_pos_args": [{"value": {"shape": [2], "dtype": "float", "strides": [1, 1]}}]}}],
     "tensor \"strides\" that are not one integer per dimension"),
    ([5], "entry 1: an entry that is not an object"),
    ("[" * 100000 + "]" * 100000, "nested deeper than 64 levels"),
]
for k, (content, msg) in enumerate(bad_ir):
    f = os.path.join(work, f"bad_ir{k}.json")
    with open(f, "w") as out:
        out.write(content if isinstance(content, str) else json.dumps(content))
    r = run([replay_bin, f, "--device", "cpu", "--iters", "1", "--warmup", "0"])
    check(r.returncode == 1 and msg in r.stderr and r.stderr.count("\n") == 1 and r.returncode >= 0,
          f"tlsql-replay bad IR {k}: {r.stderr.strip()[:150]!r} has {msg!r}")
f = os.path.join(work, "no_strides.json")
json.dump([mm], open(f, "w"))
r = run([replay_bin, f, "--device", "cpu", "--iters", "1", "--warmup", "0"])
check(r.returncode == 0 and "succeeded 1" in r.stdout, "IR without strides replays (contiguous): " + r.stdout[-100:])

# The worker dies with the tlsql that started it, even mid-replay (it used to spin on under init).
r = subprocess.Popen([tlsql, os.path.join(data, "replay_crash.json"), "-c", "SELECT replay_ir(1)", "-c",
                      "SELECT 1 FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n)"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
import time  # noqa: E402
time.sleep(3)
workers = subprocess.run(["pgrep", "-P", str(r.pid), "-f", "tlsql-replay"], capture_output=True, text=True).stdout.split()
r.kill()
r.wait()
time.sleep(1)
def running(pid):  # a zombie (nobody reaps in some containers) has exited
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
alive = [w for w in workers if running(w)]
check(workers and not alive, f"a killed tlsql takes its replay worker with it (workers {workers}, alive after {alive})")

finish()
