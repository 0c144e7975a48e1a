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
    got = {row["uid"]: row["ir"] for row in rows}  # (--json writes a JSON object's text as the object)
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

# Against TraceLens's own IR (EventReplay's replay_ir_by_uid.json, keyed by the same uids): every
# entry identical, "init" included (add_'s and resize_'s self are "normal": TraceLens nulls only
# fill_'s tensors and copy_'s destination).
for trace, ref in [(os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz"),
                    os.path.join(shared, "expected", "tracelens", "h100_gaunernst_bert-small-uncased", "replay_ir_by_uid.json")),
                   (os.path.join(shared, "traces", "tracelens", "h100", "Falconsai_nsfw_image_detection.json.gz"),
                    os.path.join(shared, "expected", "tracelens", "h100_Falconsai_nsfw_image_detection", "replay_ir_by_uid.json"))]:
    if not (os.path.exists(trace) and os.path.exists(ref)):
        print(f"skip {ref}: not present")
        continue
    want = json.load(open(ref))
    r = run([tlsql, trace, "--json", "-c", f"SELECT uid, replay_ir(uid) AS ir FROM event WHERE uid IN ({','.join(want)})"])
    got = {str(row["uid"]): row["ir"] for row in json.loads(r.stdout or "[]")}
    differ = [u for u, e in want.items() if got.get(u) != {"op_name": e["op_name"], "replay_ir": e["replay_ir"]}]
    check(len(want) > 0 and not differ, f"{os.path.basename(ref)} of {os.path.basename(os.path.dirname(ref))}: "
          f"{len(want)} IRs as TraceLens wrote them (differ: {differ})")

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

# Issue 38 item 1: a trace or an IR bundle names the op, so replay runs only ops that compute on
# tensors. aten::from_file with shared=True would create (or grow and write) the file it names; a
# c10d:: op is a collective. Each is refused with a one-line reason, no file appears or changes, and
# the session goes on. (Before the fix from_file created a 16 KiB file here through both paths.)
hostile = os.path.join(work, "hostile")
os.makedirs(hostile, exist_ok=True)
made = os.path.join(hostile, "made_by_replay.bin")         # must not appear
kept = os.path.join(hostile, "existing.bin")               # must keep its 3 bytes
for p in (made,):
    if os.path.exists(p):
        os.remove(p)
with open(kept, "wb") as f:
    f.write(b"abc")
refused_from_file = "refused: aten::from_file takes 'filename', the name of a file it would open"


def from_file_ir(path):
    return {"op_name": "aten::from_file", "replay_ir": {"list_kwargs": [], "list_pos_args": [
        {"arg_name": "filename", "arg_type": "str", "value": path},
        {"arg_name": "shared", "arg_type": "bool?", "value": True},
        {"arg_name": "size", "arg_type": "int?", "value": 4096}]}}


def files_untouched(where):
    check(not os.path.exists(made), f"{where}: no file created ({os.listdir(hostile)})")
    check(open(kept, "rb").read() == b"abc", f"{where}: an existing file neither grown nor written")


bundle = os.path.join(work, "hostile_ir.json")
json.dump([from_file_ir(made), from_file_ir(kept), mm], open(bundle, "w"))
r = run([replay_bin, bundle, "--device", "cpu", "--iters", "1", "--warmup", "0"])
errs = [l for l in r.stdout.splitlines() if l.startswith("Error replaying")]
check(r.returncode == 1 and errs == [f"Error replaying aten::from_file: {refused_from_file}"] * 2 and
      "Summary: total 3, attempted 3, succeeded 1, errors 2" in r.stdout,
      f"tlsql-replay: from_file refused with one line each, mm still replayed: {r.stdout[-400:]}")
files_untouched("tlsql-replay")
reqs = [{"op": "run", "ir": from_file_ir(made), "device": "cpu", "warmup": 0, "iters": 1},
        {"op": "run", "ir": mm, "device": "cpu", "warmup": 0, "iters": 1}]
r = subprocess.run([replay_bin, "--worker"], input="".join(json.dumps(q) + "\n" for q in reqs), capture_output=True,
                   text=True, timeout=300)
answers = [json.loads(l) for l in r.stdout.splitlines() if '"ok"' in l]
check(len(answers) == 2 and answers[0] == {"ok": False, "error": refused_from_file} and answers[1]["ok"] is True,
      f"worker: from_file refused before anything runs, the next request answered: {r.stdout[-300:]}")
files_untouched("worker")

trace = os.path.join(work, "hostile_trace.json")
json.dump({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::from_file", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
     "args": {"Input Dims": [[]] * 7, "Input type": ["Scalar", "Scalar", "Scalar", "", "", "", ""],
              "Concrete Inputs": [made, "True", "4096", "", "", "", ""]}},
    {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
     "args": {"Input Dims": [[[2, 3]], [], [], []], "Input type": ["TensorList", "", "", "Scalar"],
              "Concrete Inputs": ["", "", "", "-1"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 30, "dur": 5,
     "args": {"Input Dims": [[2, 3], [2, 3], []], "Input type": ["float", "float", "Scalar"],
              "Concrete Inputs": ["", "", "1"]}}]}, open(trace, "w"))
r = run([tlsql, trace, "--csv", "-c", "SELECT replay(0, 'cpu', 1, 0) IS NULL AS a", "-c",
         "SELECT replay_ir(0) IS NULL AS b", "-c", "SELECT replay(1, 'cpu', 1, 0) IS NULL AS c", "-c",
         "SELECT replay(2, 'cpu', 1, 0) > 0 AS d"])
check(r.returncode == 0 and r.stdout.split() == ["a", "1", "b", "1", "c", "1", "d", "1"],
      f"tlsql: refused ops give NULL, the next replay runs: {r.stdout!r} {r.stderr[-300:]!r}")
check(f"replay(0): {refused_from_file}\n" in r.stderr and f"replay_ir(0): {refused_from_file}\n" in r.stderr,
      f"tlsql: from_file's reason on stderr, one line: {r.stderr[-400:]!r}")
check("replay(1): refused: replay runs only aten:: operators, which compute on tensors, and c10d::allreduce_ is not one"
      in r.stderr, f"tlsql: a c10d:: op refused: {r.stderr[-400:]!r}")
files_untouched("tlsql replay(uid)")
exported = os.path.join(work, "hostile_export.json")
r = run([tlsql, trace, "-c", f".export-replay {exported} WHERE 1"])
ops_out = json.load(open(exported)) if os.path.exists(exported) else None
check(r.returncode == 0 and ops_out is not None and [o["op_name"] for o in ops_out] == ["aten::add"] and
      f"1 skipped: {refused_from_file}" in r.stderr, f".export-replay leaves refused ops out, saying why: {r.stderr!r}")

# The worker dies with the tlsql that started it, even mid-replay (it used to spin on under init).
r = subprocess.Popen([tlsql, os.path.join(data, "replay_crash.json"), "-c", "SELECT replay_ir(1)", "-c",
                      "SELECT 1 FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n)"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
import time  # noqa: E402
time.sleep(3)
workers = subprocess.run(["pgrep", "-P", str(r.pid), "-f", "tlsql-replay"], capture_output=True, text=True).stdout.split()
r.kill()
r.wait()
def running(pid):  # a zombie (nobody reaps in some containers) has exited
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
for _ in range(100):  # (the kernel delivers the worker's SIGKILL soon, later on a loaded machine)
    alive = [w for w in workers if running(w)]
    if not alive:
        break
    time.sleep(0.1)
check(workers and not alive, f"a killed tlsql takes its replay worker with it (workers {workers}, alive after {alive})")

finish()
