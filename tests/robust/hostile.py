#!/usr/bin/env python3
"""Hostile inputs through the real binary. Each either loads with the anomaly counted in `health`,
or fails with its one-line error and exit 1, leaving no -o file; never a crash, a hang or a
partial output. usage: hostile.py TLSQL DATA_DIR WORK_DIR"""
import gzip, json, os, re, resource, subprocess, sys, zlib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, work = sys.argv[1:4]
work = os.path.join(work, "hostile")
os.makedirs(work, exist_ok=True)


def write(name, content):
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode())
    return path


def run(path, *sql, out_db=None):
    args = [tlsql, path, "--csv"] + [a for q in sql for a in ("-c", q)]
    if out_db:
        args += ["-o", out_db]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(r.returncode in (0, 1), f"{os.path.basename(path)}: exit {r.returncode} is 0 or 1")
    return r


def fails_with(name, content, message):
    path = write(name, content) if content is not None else name
    db = os.path.join(work, "out.db")
    if os.path.exists(db):
        os.remove(db)
    r = run(path, "SELECT 1", out_db=db)
    expect = f"tlsql: error: {path}: {message}\n"
    check(r.returncode == 1 and r.stderr == expect, f"{os.path.basename(path)}: {r.stderr.strip()!r} == {expect.strip()!r}")
    check(not os.path.exists(db) and not any(f.startswith("out.db") for f in os.listdir(work)),
          f"{os.path.basename(path)}: no -o file left behind")


def health(name, content, expect_checks, query=None, expect_rows=None):
    path = write(name, content)
    r = run(path, 'SELECT "check", count FROM health ORDER BY "check"')
    got = dict(l.split(",") for l in r.stdout.split("\n")[1:] if l)
    ok = r.returncode == 0 and all(got.get(k) == str(v) for k, v in expect_checks.items())
    check(ok, f"{name}: loads, health {expect_checks} (got {got}) {r.stderr.strip()}")
    if expect_rows is not None:
        r = run(path, query)
        check(expect_rows in r.stdout, f"{name}: {expect_rows!r} in {r.stdout!r}")


def ev(**k):
    return json.dumps(dict({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 2}, **k))


# Not a trace at all.
fails_with("empty.json", "", "at byte 0 (end of file): empty file: expected a JSON object or array")
fails_with("obj.json", "{}", 'at byte 0: not a trace: no "traceEvents" array in the top-level object')
fails_with("te5.json", '{"traceEvents": 5}', "at byte 16: not a trace: \"traceEvents\" is not an array, found '5'")
# A directory loads its .json / .json.gz files (one per rank): one without any says so; one holding
# a broken trace fails on it, naming the file (tests/shell/sql_extras.sh loads a good one).
os.makedirs(os.path.join(work, "no_traces"), exist_ok=True)
fails_with(os.path.join(work, "no_traces"), None, "a directory with no .json or .json.gz trace files")
os.makedirs(os.path.join(work, "ranks"), exist_ok=True)
write(os.path.join("ranks", "rank0.json"), '{"traceEvents": 5}')
r = run(os.path.join(work, "ranks"), "SELECT 1")
check(r.returncode == 1 and r.stderr.startswith(f"tlsql: error: {os.path.join(work, 'ranks', 'rank0.json')}: at byte 16"),
      f"a directory with a broken trace: {r.stderr.strip()!r}")
# A file that is no trace at all beside a trace (a PyTorch execution trace, Chakra / PARAM's
# *_et.json.gz): skipped with one warning line and a health row; nothing but such files: an error.
os.makedirs(os.path.join(work, "with_et"), exist_ok=True)
write(os.path.join("with_et", "rank0.json"),
      '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}')
write(os.path.join("with_et", "rank0_et.json"), '{"schema": "1.0.2-chakra.0.0.4", "pid": 7, "nodes": [{"id": 1}]}')
et = os.path.join(work, "with_et", "rank0_et.json")
r = run(os.path.join(work, "with_et"), "SELECT count(*) FROM trace; SELECT \"check\", detail FROM health")
check(r.returncode == 0 and r.stdout.splitlines()[1] == "1" and 'file_not_a_trace,"' + et in r.stdout
      and r.stderr.startswith(f"tlsql: warning: {et}: not a trace: a PyTorch execution trace")
      and r.stderr.endswith(": skipped\n") and r.stderr.count("\n") == 1,
      f"a directory with an execution trace beside the trace: named, skipped: {r.stdout!r} {r.stderr!r}")
os.remove(os.path.join(work, "with_et", "rank0.json"))
r = run(os.path.join(work, "with_et"), "SELECT 1")
check(r.returncode == 1 and r.stderr.splitlines()[-1].startswith(
    f"tlsql: error: {os.path.join(work, 'with_et')}: no file in the directory is a trace ("),
      f"a directory with no trace in it: {r.stderr!r}")
health("arr.json", "[]", {"no_events": 1})

# A real trace cut at every tenth of its length, and with bytes flipped in its middle.
trace = gzip.open(os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")).read()
for tenth in range(1, 10):
    cut = len(trace) * tenth // 10
    path = write(f"cut{tenth}.json", trace[:cut])
    r = run(path, "SELECT count(*) FROM event")
    check(r.returncode == 1 and r.stderr.startswith(f"tlsql: error: {path}: at byte ") and r.stderr.count("\n") == 1,
          f"cut at {tenth}/10 ({cut} bytes): one-line error with the offset: {r.stderr.strip()[:160]}")
for k, pos in enumerate(range(len(trace) // 2, len(trace) // 2 + 400, 40)):
    flipped = bytearray(trace)
    flipped[pos] ^= 0xFF
    path = write(f"flip{k}.json", bytes(flipped))
    r = run(path, "SELECT count(*) FROM event")
    check(r.returncode == 0 or (r.stderr.count("\n") == 1 and f"{path}: at byte" in r.stderr),
          f"byte {pos} flipped: loads or one-line error ({r.stderr.strip()[:120]})")

# Compressed: bad CRC, and a bomb of 2 GiB of whitespace inside traceEvents (refused, bounded memory).
fails_with(os.path.join(data, "bad_crc.json.gz"), None, "corrupt gzip data near compressed byte 785: checksum mismatch")
c = zlib.compressobj(9, zlib.DEFLATED, 31)
bomb = c.compress(b'{"traceEvents":[') + b"".join(c.compress(b" " * (1 << 20)) for _ in range(2048))
bomb += c.compress(b"]}") + c.flush()
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
fails_with("bomb.json.gz", bomb,
           "at byte 536870928: one JSON value runs over 256 MiB of decompressed text from byte 16 (corrupt or hostile .gz?)")
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
check(peak_mb < 1024, f"gzip bomb: peak RSS {peak_mb:.0f} MB < 1 GB (2 GiB inflated)")

# Loads, anomalies counted.
health("strings.json", b'{"traceEvents":[{"ph":"X","name":"a\x01\x1f\xff\xfe b","pid":1,"tid":1,"ts":1,"dur":1}]}',
       {"control_characters": 2, "invalid_utf8": 2})
health("ts_str.json", '{"traceEvents":[%s]}' % ev(ts="12.5", dur="3"), {}, "SELECT ts, dur FROM event", "12500,3000")
health("ts_neg.json", '{"traceEvents":[%s]}' % ev(ts=-5, dur=-3), {"negative_dur": 1}, "SELECT ts, dur FROM event",
       "-5000,-3000")
health("ts_nan.json", '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":NaN,"dur":"inf"}]}', {"bad_time": 1, "non_finite_number": 1},
       "SELECT count(*) FROM event WHERE ts IS NULL AND dur IS NULL", "\n1\n")
health("ts_huge.json", '{"traceEvents":[%s]}' % ev(ts=1e300, dur=1e300), {"bad_time": 2})
health("dupkey.json", '{"traceEvents":[{"ph":"X","name":"a","name":"b","pid":1,"tid":1,"ts":1,"ts":2,"dur":1}]}',
       {"duplicate_key": 2}, "SELECT name, ts FROM event", "b,2000")
health("deep.json", '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":%s}}]}'
       % ("[" * 10000 + "]" * 10000), {"args_too_deep": 1}, "SELECT json_valid(args), length(args) FROM event", "1,20010")  # the args text quoted: 2 quotes + 2 escaped quotes
health("bigids.json", '{"traceEvents":[{"ph":"X","name":"a","pid":18446744073709551616,"tid":1,"ts":1,"dur":1,'
       '"id":9223372036854775808,"args":{"correlation":18446744073709551615}}]}', {"id_over_int64": 1, "int64_min": 1, "number_not_integer": 1})  # id 2^63 (wraps onto -2^63, the NULL marker) and correlation 2^64-1; pid 2^64
health("missing.json", '{"traceEvents":[{"name":"a","ts":1},{"ph":"X","ts":1,"dur":1},{"ph":"X","name":"b","dur":1},{}]}',
       {"missing_ph": 2, "missing_name": 2, "missing_ts": 2}, "SELECT count(*) FROM event", "\n4\n")
health("b_no_e.json", '{"traceEvents":[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":2,"ts":5}]}',
       {"begin_without_end": 1, "end_without_begin": 1})

# Values are kept or counted, never both lost and silent (issue 15 item 2).
health("escapes.json", r'{"traceEvents":[{"ph":"X","name":"a\ud800b","cat":"c\qd","pid":1,"tid":1,"ts":1,"dur":1},'
       r'{"ph":"X","name":"x\u0000y","pid":1,"tid":1,"ts":2,"dur":1,"args":{"s":"\udc00","t":"\ud83d\ude00"}}]}',
       {"lone_surrogate": 2, "invalid_escape": 1, "nul_character": 1},
       "SELECT name, cat, args ->> '$.s' AS s, args ->> '$.t' AS t FROM event ORDER BY uid",
       "a\ufffdb,c\\qd,,\nx\ufffdy,,\ufffd,\U0001F600\n")
health("not_strings.json", '{"traceEvents":[{"ph":"X","name":12,"cat":{"a":[1]},"pid":1,"tid":1,"ts":1,"dur":1},'
       '{"ph":"XB","name":null,"pid":1,"tid":1,"ts":2,"dur":1},{"ph":7,"name":"n","pid":1,"tid":1,"ts":3,"dur":1}]}',
       {"not_a_string": 4, "bad_ph": 2},
       "SELECT name, cat, ph FROM event ORDER BY uid", '12,"{""a"":[1]}",X\n,,X\nn,,7\n')
health("args_array.json", '{"traceEvents":[%s]}' % ev(args=[1, [2, 3], {"a": 4}]), {"args_not_object": 1},
       "SELECT args FROM event", '"[1,[2,3],{""a"":4}]"')  # kept whole, minified as every args text
health("int64_min.json", '{"traceEvents":[%s]}' % ev(id=-2**63, args={"correlation": -2**63 + 1}), {"int64_min": 1},
       "SELECT flow_id IS NULL, correlation FROM event", "\n1,-9223372036854775807\n")
health("end_wrap.json", '{"traceEvents":[%s]}' % ev(ts=9223372036854775, dur=1000), {"end_overflow": 1},
       "SELECT ts, dur, end IS NULL FROM event", "9223372036854775000,1000000,1")

# Not JSON is an error with its offset, wherever it hides: the on-demand parser skips what tlsql
# does not read, so these used to load silently (item 3).
for name, text, at, msg in [  # `at`: the text from the offending byte on
        ("lit_args.json", '[{"ph":"X","args":{"a":tru}}]', "tru}", "malformed JSON: invalid literal: expected true, false or null, found 't'"),
        ("lit_key.json", '[{"ph":"X","zz":nul}]', "nul}", "malformed JSON: invalid literal: expected true, false or null, found 'n'"),
        ("hex.json", '[{"ph":"X","zz":0x10}]', "x10", "malformed JSON: expected ',' or '}', found 'x'"),
        ("zero.json", '[{"ph":"X","args":{"a":012}}]', "012", "malformed number: leading zero"),
        ("dot.json", '[{"ph":"X","ts":1.}]', "1.}", "malformed number: expected a digit after '.'"),
        ("nul_between.json", '[{"ph":"X",\x00"ts":1}]', "\x00", "malformed JSON: expected a string key, found byte 0x00"),
        ("nul_args.json", '[{"ph":"X","args":{"a":1\x00}}]', "\x00", "malformed JSON: expected ',' or '}', found byte 0x00"),
        ("garbage.json", '[{"ph":"X","q":[1,2,]}]', "]}]", "malformed JSON: expected a value, found ']'"),
        ("bad_meta.json", '{"x":[1,2,,3],"traceEvents":[]}', ",3]", "malformed JSON: expected a value, found ','"),
        ("nan_args.json", '[{"ph":"X","args":{"a":NaNa}}]', "a}}", "malformed JSON: expected ',' or '}', found 'a'")]:
    fails_with(name, text, f"at byte {text.index(at)}: {msg}")
big_prefix = "[" + ",".join([ev(ts=i) for i in range(200000)]) + ","
p = write("late_garbage.json", big_prefix + '{"ph":"X","u":[falsy]}]')
r = run(p, "SELECT 1")
check(r.returncode == 1 and r.stderr == f"tlsql: error: {p}: at byte {len(big_prefix) + 15}: malformed JSON: invalid literal: "
      "expected true, false or null, found 'f'\n", f"garbage past the first chunk: its file offset ({r.stderr.strip()[-90:]})")

# Metadata that is JSON but not what we expect is kept and noted; the events still load (item 4).
health("odd_meta.json", '{"deviceProperties":["abc",{"id":0,"name":"NVIDIA H100"}],"distributedInfo":7,'
       '"traceEvents":[%s]}' % ev(), {"odd_metadata": 2},
       "SELECT count(*) AS n, (SELECT count(*) FROM device) AS devices, (SELECT metadata ->> '$.deviceProperties[0]' FROM trace) AS kept FROM event",
       "\n1,1,abc\n")
health("nan_meta.json", '{"deviceProperties":[{"id":0,"x":NaN}],"traceEvents":[%s]}' % ev(), {"non_finite_number": 1})

# Wrong results without a word (issue 45 item 6). A B/E pair's span past int64 ns is what an X
# event's ts + dur past int64 is: counted as end_overflow, no end, out of the tree; an E earlier than
# its B is counted too (its dur is 0).
be = '{"ph":"B","name":"%s","pid":1,"tid":1,"ts":%d},{"ph":"E","pid":1,"tid":1,"ts":%d}'
health("be_wrap.json", '{"traceEvents":[%s,%s]}' % (be % ("far", -9000000000000000, 9000000000000000), ev(ts=5)),
       {"end_overflow": 1}, "SELECT name, dur IS NULL, \"end\" IS NULL, parent IS NULL FROM event WHERE ph = 'B'",
       "far,1,1,1")
health("be_back.json", '{"traceEvents":[%s]}' % (be % ("back", 50, 20)), {"end_before_begin": 1},
       "SELECT name, dur FROM event WHERE ph = 'B'", "back,0")
# Only whitespace may follow the document: a NUL byte is no end of file (`doc NUL doc` loaded as
# doc), plain or gzip'd; a NUL inside the top-level object is no truncation.
doc = '{"traceEvents":[%s]}' % ev()
fails_with("nul_then_doc.json", doc + "\0" + doc,
           f"at byte {len(doc)}: unexpected content after the end of the JSON document (a NUL byte)")
fails_with("nul_tail.json.gz", gzip.compress((doc + "\n" + "\0" * 4096).encode()),
           f"at byte {len(doc) + 1}: unexpected content after the end of the JSON document (a NUL byte)")
fails_with("nul_in_object.json", doc[:-1] + "\0}",
           f"at byte {len(doc) - 1}: malformed JSON: a NUL byte where JSON text was expected")
# Encodings: UTF-16 without a byte order mark (NULs between the characters) and with one is named
# as such, not called truncated or empty; a UTF-8 mark is skipped and counted.
u16 = "UTF-16 text? tlsql reads UTF-8 JSON (iconv -f UTF-16 -t UTF-8 converts it)"
fails_with("utf16le.json", doc.encode("utf-16-le"), f"at byte 1: a NUL byte: {u16}")
fails_with("utf16be.json", doc.encode("utf-16-be"), f"at byte 0: a NUL byte: {u16}")
for name, bom in [("utf16le_bom.json", b"\xff\xfe"), ("utf16be_bom.json", b"\xfe\xff")]:
    fails_with(name, bom + doc.encode("utf-16-le" if bom == b"\xff\xfe" else "utf-16-be"),
               f"at byte 0: UTF-16 byte order mark (0x{bom[0]:02X} 0x{bom[1]:02X}): tlsql reads UTF-8 JSON "
               "(iconv -f UTF-16 -t UTF-8 converts it)")
health("utf8_bom.json", b"\xef\xbb\xbf" + doc.encode(), {"utf8_bom": 1})
fails_with("binary.json", b"\x89PNG\r\n", "at byte 0: not JSON: expected '{' or '[', found byte 0x89")
# A top-level key twice: JSON readers disagree on which to keep (Python's json the last, SQLite's
# JSON functions the first), and the events of a first traceEvents array are read before a second
# shows: refused, for every key alike (docs/schema.md, "Which JSON").
dup = "JSON readers differ on which one to keep; keep one"
two = '{"traceEvents":[%s],"traceEvents":[%s,%s]}' % (ev(), ev(), ev())
fails_with("two_event_arrays.json", two,
           f'at byte {two.rindex("traceEvents") - 1}: the top-level key "traceEvents" a second time (first at byte 1): {dup}')
fails_with("two_escaped.json", '{"traceEvents":[],"trace\\u0045vents":[%s]}' % ev(),
           f'at byte 18: the top-level key "traceEvents" a second time (first at byte 1): {dup}')
two = '{"deviceProperties":[],"traceEvents":[%s],"deviceProperties":[{"id":0}]}' % ev()
fails_with("two_devices.json", two, f'at byte {two.rindex("deviceProperties") - 1}: the top-level key '
           f'"deviceProperties" a second time (first at byte 1): {dup}')
# Metadata is bounded (src/input.h, kMetadataMaxBytes): a trace's top-level members besides
# traceEvents are a few KB; 17 MB of them is refused by name, not kept whole.
big = '{"traceEvents":[%s],"x":"%s"}' % (ev(), "a" * (17 << 20))
fails_with("big_meta.json", big, f"at byte {big.index('aaa') - 1}: the top-level members besides traceEvents "
           "pass 16 MiB (Kineto writes a few KB of them)")

# Pipes and FIFOs read as streams; a file cut while it loads ends early, never SIGBUS (items 6, 10).
import threading, time  # noqa: E402
small_trace = open(os.path.join(data, "hta_backward_thread.json"), "rb").read()
rfd, wfd = os.pipe()
threading.Thread(target=lambda: (os.write(wfd, small_trace), os.close(wfd)), daemon=True).start()
r = subprocess.run([tlsql, f"/dev/fd/{rfd}", "--csv", "-c", "SELECT count(*) FROM event"], capture_output=True,
                   text=True, timeout=60, pass_fds=(rfd,))
os.close(rfd)
check(r.returncode == 0 and r.stdout == "count(*)\n7\n", f"a pipe (<(zcat ...)) loads: {r.stdout!r} {r.stderr.strip()}")
fifo = os.path.join(work, "trace.fifo")
if os.path.exists(fifo):
    os.remove(fifo)
os.mkfifo(fifo)
def feed():
    time.sleep(0.5)
    with open(fifo, "wb") as f:
        f.write(gzip.compress(small_trace))
threading.Thread(target=feed, daemon=True).start()
r = subprocess.run([tlsql, fifo, "--csv", "-c", "SELECT count(*) FROM event"], capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and r.stdout == "count(*)\n7\n", f"a FIFO with a late gzip writer loads: {r.stdout!r} {r.stderr.strip()}")
big = write("shrinking.json", trace * 1)  # rewritten below while it loads
with open(big, "wb") as f:
    f.write(b'{"traceEvents":[' + b",".join([ev(ts=i).encode() for i in range(600000)]) + b"]}")
for delay in (0.05, 0.2):
    p = subprocess.Popen([tlsql, big, "--csv", "-c", "SELECT count(*) FROM event"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    os.truncate(big, 1000)
    out, err = p.communicate(timeout=120)
    check(p.returncode in (0, 1) and err.count("\n") <= 1, f"file cut to 1000 bytes {delay} s into its load: exit {p.returncode}, "
          f"{err.strip()[:150]!r}")
    with open(big, "wb") as f:
        f.write(b'{"traceEvents":[' + b",".join([ev(ts=i).encode() for i in range(600000)]) + b"]}")

# Deep trees print without recursion: 20,000 identical events nest into one chain (item 8).
chain = write("chain.json", '{"traceEvents":[' + ",".join([ev(ts=1, dur=10)] * 20000) + "]}")
r = subprocess.run([tlsql, chain, "-c", ".tree 0", "-c", ".stack 19999", "--csv", "-c", "SELECT max(depth) FROM event"],
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 0 and r.stdout.count("UID: ") == 40000 and r.stdout.endswith("max(depth)\n19999\n"),
      f".tree / .stack of a 20,000-deep chain: exit {r.returncode} {r.stderr.strip()[:100]}")

# Extreme timestamps in pictures: a window longer than int64 ns is clamped, nothing writes out of
# bounds (item 7; ASan run).
extreme = write("extreme.json", '{"traceEvents":[%s]}' % ",".join([
    ev(cat="cuda_runtime", name="cudaLaunchKernel", ts=-9223372036854775, dur=5, args={"correlation": 1}),
    ev(cat="kernel", name="k", pid=0, tid=7, ts=-9223372036854775, dur=3, args={"correlation": 1, "stream": 7, "device": 0}),
    ev(cat="kernel", name="k2", pid=0, tid=8, ts=9223372036854770, dur=4, args={"correlation": 2, "stream": 8, "device": 0}),
    ev(name="aten::mm", ts=9223372036854700, dur=5), ev(name="aten::mm", ts=-9223372036854775, dur=5),
    ev(cat="cuda_runtime", name="cudaLaunchKernel", ts=9223372036854701, dur=1, args={"correlation": 2})]))
for cmd in [".plot timeline {}/x.svg", ".plot timeline {}/x.png -1e30..1e30", ".html {}/x.html", ".plot roofline {}/r.svg",
            ".report optimizable", ".report idle", ".report overlap"]:
    r = subprocess.run([tlsql, extreme, "-c", cmd.format(work)], capture_output=True, text=True, timeout=120)
    check(r.returncode in (0, 1) and "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, f"{cmd.split()[:2]} on extreme timestamps: exit {r.returncode}")

# A gzip'd run of "{}" events is refused by name before it takes GBs (item 12).
bomb = gzip.compress(b'{"traceEvents":[' + b"{}," * 3000000 + b"{}]}", 9)
p = write("empty_events.json.gz", bomb)
r = run(p, "SELECT count(*) FROM event")
# (At the start of the chunk whose events took the count past 2^20, before the rest is parsed.)
m = re.match(rf"tlsql: error: {re.escape(p)}: at byte (\d+): (\d+) events from (\d+) compressed bytes", r.stderr)
check(r.returncode == 1 and m and "a gzip bomb" in r.stderr and 16 <= int(m[1]) < 3 * 3000000 and
      (1 << 20) < int(m[2]) < 3000001, f"{len(bomb)} bytes of gzip'd {{}} events: refused by name ({r.stderr.strip()[:120]})")

# Saved databases (items 13, 16, 17): copied, read-only, shared, foreign, edited into a loop.
src = os.path.join(data, "hta_backward_thread.json")
saved, copy = os.path.join(work, "saved.db"), os.path.join(work, "copy.db")
for f in (saved, copy):
    if os.path.exists(f):
        os.chmod(f, 0o644)
        os.remove(f)
subprocess.run([tlsql, src, "-o", saved, "-c", "SELECT 1"], capture_output=True, check=True)
q = "SELECT count(*), sum(depth), (SELECT count(*) FROM op_summary) FROM event"
want = subprocess.run([tlsql, src, "--csv", "-c", q], capture_output=True, text=True).stdout
r = subprocess.run([tlsql, saved, "-o", copy, "--csv", "-c", q], capture_output=True, text=True)
r2 = subprocess.run([tlsql, copy, "-c", ".save " + copy + "2", "--csv", "-c", q], capture_output=True, text=True)
check(r.returncode == 0 and r.stdout == want and r2.returncode == 0 and r2.stdout == want and os.path.exists(copy + "2"),
      f"saved.db -o copy.db and .save: {r.stderr.strip()} {r2.stderr.strip()}")
before = open(saved, "rb").read()
os.chmod(saved, 0o444)
r = subprocess.run([tlsql, saved, "--csv", "-c", q], capture_output=True, text=True)
check(r.stdout == want and r.returncode == 0, f"a read-only saved database opens: {r.stderr.strip()}")
os.chmod(saved, 0o644)
procs = [subprocess.Popen([tlsql, saved, "--csv", "-c", q], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
         for _ in range(6)]
outs = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
check(all(o == (want, "", 0) for o in outs), f"six concurrent readers: {[o[1].strip() for o in outs if o[2]]}")
check(open(saved, "rb").read() == before, "opening a saved database never writes to it")
foreign = os.path.join(work, "foreign.db")
if os.path.exists(foreign):
    os.remove(foreign)
import sqlite3  # noqa: E402
con = sqlite3.connect(foreign)
con.execute("CREATE TABLE t(x)")
con.commit()
con.close()
fbytes = open(foreign, "rb").read()
r = subprocess.run([tlsql, foreign, "-c", "SELECT 1"], capture_output=True, text=True)
check(r.returncode == 1 and r.stderr.startswith(f"tlsql: error: {foreign}: not a database tlsql saved")
      and open(foreign, "rb").read() == fbytes, f"a foreign SQLite file is refused, untouched: {r.stderr.strip()}")
r = subprocess.run([tlsql, src, "-c", f".attach {foreign} AS f", "-c", "SELECT 1"], capture_output=True, text=True)
check("not a database tlsql saved" in r.stderr and open(foreign, "rb").read() == fbytes, f".attach of a foreign file: {r.stderr.strip()}")
garbage = write("garbage.db", b"SQLite format 3\x00" + bytes(range(256)) * 20)
r = subprocess.run([tlsql, garbage, "-c", "SELECT 1"], capture_output=True, text=True)
check(r.returncode == 1 and r.stderr == f"tlsql: error: {garbage}: cannot open: file is not a database\n", f"corrupt db: {r.stderr.strip()}")
loop = os.path.join(work, "loop.db")
with open(loop, "wb") as f:
    f.write(before)
con = sqlite3.connect(loop)
con.execute("UPDATE event SET parent = 5 WHERE uid = 0")  # 0 -> 5 -> 6 -> 4 -> 3 -> 2 -> 1 -> 0
con.commit()
con.close()
for sql, name in [("SELECT count(*) FROM descendants(0)", "descendants(0)"), ("SELECT count(*) FROM ancestors(3)", "ancestors(3)"),
                  ("SELECT gpu_time(0)", "gpu_time(0)"), ("SELECT count(*) FROM launched(1)", "launched(1)"),
                  ("SELECT source(4)", "source(4)"), (".tree 0", ".tree"), (".stack 3", ".stack")]:
    r = subprocess.run([tlsql, loop, "-c", sql], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "loop through uid" in r.stderr and name in r.stderr, f"parent loop: {sql}: {r.stderr.strip()[:120]}")
r = subprocess.run([tlsql, src, "--csv"] + [a for b in [("-c", f"SELECT count(*) FROM event WHERE {w}") for w in [
    "uid <= 9223372036854775807", "uid < 9223372036854775807", "uid >= -9223372036854775808", "uid > 5", "uid <= 2.5",
    "uid BETWEEN -9223372036854775808 AND 9223372036854775807"]] for a in b], capture_output=True, text=True)
check(r.stdout.split() == ["count(*)", "7"] * 3 + ["count(*)", "1", "count(*)", "3", "count(*)", "7"],
      f"uid bounds at the int64 limits: {r.stdout.split()}")
# A saved database whose uids span the whole int64 range: the perf pass reads it in uid ranges.
limits = os.path.join(work, "limits.db")
with open(limits, "wb") as f:
    f.write(before)
con = sqlite3.connect(limits)
con.execute("UPDATE event SET uid = -9223372036854775808 WHERE uid = (SELECT min(uid) FROM event)")
con.execute("UPDATE event SET uid = 9223372036854775807 WHERE uid = (SELECT max(uid) FROM event)")
con.commit()
con.close()
r = subprocess.run([tlsql, limits, "--csv", "-c", "SELECT count(*), count(gpu_time(uid)) FROM event"],
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 0 and r.stdout.split() == ["count(*),count(gpu_time(uid))", "7,7"],
      f"saved uids from -2^63 to 2^63-1: every row in the perf pass ({r.stdout.split()} {r.stderr.strip()[:100]})")

# Times at the ends of int64 in a hand-edited saved database (ts and end are separate columns there,
# so end - ts, a difference of two starts or a sum of spans can leave int64): the reports that do
# time arithmetic answer without undefined behaviour (the sanitizer build aborts on it). Each edit
# set is one that made UBSan fire in the critical path, the optimizable ranking or the unions.
bert_db = os.path.join(work, "bert_times.db")
if os.path.exists(bert_db):
    os.remove(bert_db)
subprocess.run([tlsql, os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz"), "-o", bert_db, "-c", "SELECT 1"],
               capture_output=True, check=True)
bert_before = open(bert_db, "rb").read()
ends = "SELECT uid FROM event WHERE kind = '{}' ORDER BY uid LIMIT 1 OFFSET {}"
for edits in [[("end", -2**63, "annotation", 0)], [("ts", -2**63, "kernel", 3)],
              [("ts", -2**63, "cpu_op", 5), ("end", 2**63 - 1, "cpu_op", 9)],
              [("dur", 2**63 - 1, "cpu_op", 2), ("end", 2**63 - 1, "kernel", 0), ("ts", -2**63, "kernel", 1)]]:
    with open(bert_db, "wb") as f:
        f.write(bert_before)
    con = sqlite3.connect(bert_db)
    for col, v, kind, nth in edits:
        con.execute(f"UPDATE event SET {col} = ? WHERE uid = ({ends.format(kind, nth)})", (v,))
    con.execute("DELETE FROM tlsql_perf")
    con.commit()
    con.close()
    r = subprocess.run([tlsql, bert_db, "--csv", "-c", "SELECT sum(gpu_time(uid)), sum(self_time(uid)) FROM event",
                        "-c", "SELECT count(*), sum(dur) FROM descendants(0)", "-c", "SELECT union_ns(ts, end) FROM gpu"]
                       + [a for rep in ("critical_path", "optimizable", "timeline", "summary", "ops", "idle", "overlap")
                          for a in ("--report", rep)], capture_output=True, text=True, timeout=120)
    check(r.returncode in (0, 1) and "runtime error" not in r.stderr and "Sanitizer" not in r.stderr,
          f"saved times edited to int64's ends {edits}: exit {r.returncode} {r.stderr.strip()[-200:]}")

# Output files (items 14, 15): never over an input or a device, no temp file left on a signal,
# write errors are errors.
r = subprocess.run([tlsql, src, "-o", src], capture_output=True, text=True)
check(r.returncode == 1 and "it is an input of this session" in r.stderr and open(src).read().startswith("{"),
      f"-o onto its own input: refused ({r.stderr.strip()[:100]})")
r = subprocess.run([tlsql, saved, "-c", f".save {saved}"], capture_output=True, text=True)
check("it is an input of this session" in r.stderr and open(saved, "rb").read() == before, ".save onto the open database: refused")
r = subprocess.run([tlsql, src, "-o", "/dev/null"], capture_output=True, text=True)
check(r.returncode == 1 and r.stderr == "tlsql: error: /dev/null: cannot write: not a regular file\n", f"-o /dev/null: {r.stderr.strip()}")
r = subprocess.run([tlsql, src, "-c", "SELECT * FROM event"], stdout=open("/dev/full", "w"), stderr=subprocess.PIPE, text=True)
check(r.returncode == 1 and "stdout: cannot write: No space left on device" in r.stderr, f"stdout on a full disk: {r.stderr.strip()}")
r = subprocess.run([tlsql, src, "-c", ".output /dev/full", "-c", "SELECT * FROM event"], capture_output=True, text=True)
check(r.returncode == 1 and "/dev/full: cannot write: No space left on device" in r.stderr, f".output to a full disk: {r.stderr.strip()}")
import signal  # noqa: E402
big_trace = os.path.join(work, "sig.json")
with open(big_trace, "w") as f:
    f.write('{"traceEvents":[' + ",".join(ev(ts=i, name=f"n{i}", args={"k": "v" * 200}) for i in range(150000)) + "]}")
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
    out = os.path.join(work, f"sig{int(sig)}.db")
    for f in os.listdir(work):  # (an earlier run's, in this reused folder)
        if f.startswith(f"sig{int(sig)}.db"):
            os.remove(os.path.join(work, f))
    p = subprocess.Popen([tlsql, big_trace, "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not any(f.startswith(f"sig{int(sig)}.db.tmp-") for f in os.listdir(work)) and p.poll() is None:
        time.sleep(0.005)
    p.send_signal(sig)
    p.wait(timeout=60)
    left = [f for f in os.listdir(work) if f.startswith(f"sig{int(sig)}.db")]
    check(not left or (p.returncode == 0 and left == [f"sig{int(sig)}.db"]),
          f"{sig.name} during -o: nothing half-written left ({left}, exit {p.returncode})")


# A disk that fills while the event pages are written (a file size limit: the writes fail with
# EFBIG, SIGXFSZ ignored): one line naming the file and why, exit 1, nothing left, and the index
# sorts running beside the writes stop rather than hold the process (issue 51's sorts run ahead).
# (The soft limit is set in this process around the run, not in a preexec_fn: threads ran above.)
full = os.path.join(work, "full")
os.makedirs(full, exist_ok=True)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
xfsz = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, hard))
try:
    r = subprocess.run([tlsql, big_trace, "-o", os.path.join(full, "out.db")], capture_output=True, text=True,
                       timeout=120, restore_signals=False)
finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    signal.signal(signal.SIGXFSZ, xfsz)
check(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "cannot write" in r.stderr and "File too large" in r.stderr
      and os.listdir(full) == [], f"-o onto a full disk: one line, nothing left ({r.stderr.strip()}; {os.listdir(full)})")

# The session survives errors: a bad statement, .read of a missing file, .output to an unwritable
# path, .attach of a bad file, then an ordinary query still answers.
path = write("ok.json", '{"traceEvents":[%s]}' % ev())
r = subprocess.run([tlsql, path, "--csv", "-c", "SELEC 1", "-c", ".read /nonexistent/x.sql", "-c", ".output /nonexistent/x.csv",
                    "-c", f".attach {os.path.join(work, 'empty.json')} AS x", "-c", "SELECT 42 AS answer"],
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 1 and r.stdout == "answer\n42\n", f"session survives errors: {r.stdout!r}")
check(r.stderr.splitlines() == [
    'error: -c: near line 1: near "SELEC": syntax error',
    "error: -c: near line 1: cannot open '/nonexistent/x.sql'",
    "error: -c: near line 1: cannot write /nonexistent/x.csv: No such file or directory",
    f"error: -c: near line 1: {os.path.join(work, 'empty.json')}: at byte 0 (end of file): empty file: expected a JSON object or array"],
    f"clear errors: {r.stderr!r}")

# Hostile op arguments for every model family (negative, zero, fractional, huge and text dimensions
# and Concrete Inputs; docs/perf_models.md "Malformed shapes"): a model answers with non-negative
# finite numbers or none, never a crash (a stride of 0 divided by zero: SIGFPE), a negative count
# or inf / NaN. Deterministic: the same pool and seed every run.
import math, random  # noqa: E401
rng = random.Random(7)
dims_ok = [0, 1, 1, 2, 3, 8, 8, 64, 64, 2**40, 2**62, 2**63 - 1]
dims_bad = [-1, -64, 2.5, 1e30, "x", None]


def dim():
    return rng.choice(dims_bad) if rng.random() < 0.03 else rng.choice(dims_ok)


conc_pool = ["", "0", "1", "-3", "[0, 0]", "[-1, 2]", "[1e30, 1]", "[2, 2]", "True", "False", "None", "[0.5]",
             "9223372036854775807", "nan", "[]"]
types_pool = ["float", "c10::BFloat16", "c10::Half", "long int", "c10::Float8_e4m3fn", "Scalar", "", "bool", "int"]
names = ["aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm", "aten::linear", "aten::matmul",
         "aten::convolution", "aten::convolution_backward", "aten::_scaled_dot_product_flash_attention",
         "aten::_scaled_dot_product_efficient_attention", "aten::scaled_dot_product_attention",
         "aten::_scaled_dot_product_flash_attention_backward", "aten::layer_norm", "aten::native_layer_norm",
         "aten::batch_norm", "aten::group_norm", "aten::native_group_norm", "aten::rms_norm",
         "aten::native_layer_norm_backward", "aten::native_batch_norm_backward", "aten::native_group_norm_backward",
         "aten::_fused_rms_norm_backward", "aten::copy_", "aten::add", "aten::mul", "aten::eq", "aten::fill_",
         "aten::embedding", "aten::index_select", "aten::sum", "aten::norm", "aten::var", "aten::cumsum",
         "aten::softmax", "aten::where", "aten::nll_loss", "aten::nll_loss_backward", "aten::index_add_",
         "aten::scatter_", "aten::scatter_add_", "aten::index_put_", "aten::_grouped_mm", "aten::_scaled_grouped_mm",
         "aten::_foreach_addcmul_", "_C::rotary_embedding", "_C::rms_norm", "aiter::rms_norm",
         "_C::fused_add_rms_norm", "aiter::rmsnorm2d_fwd_with_add", "_C_cache_ops::reshape_and_cache_flash",
         "vllm::inplace_fused_experts", "vllm::unified_attention_with_output", "aten::upsample_nearest2d",
         "aten::upsample_bilinear2d", "sgl_kernel::silu_and_mul", "aiter::add_rmsnorm",
         "_C::rms_norm_dynamic_per_token_quant", "sgl_kernel::apply_rope_pos_ids_cos_sin_cache",
         "_C::static_scaled_fp8_quant", "sgl_kernel::sgl_per_tensor_quant_fp8", "_C::cutlass_scaled_mm",
         "aiter::gemm_a8w8_ck", "_rocm_C::wvSplitK", "_C::gptq_marlin_gemm", "_C::awq_gemm", "_C::gptq_gemm",
         "_C::paged_attention_v1", "aiter::paged_attention_ragged", "aiter::mha_batch_prefill",
         "_flashmla_C::fwd_kvcache_mla", "sgl_kernel::cutlass_mla_decode", "vllm::unified_mla_attention_with_output"]
events = [{"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": 0, "dur": 10**7,
           "name": "execute_13_context_1(sq10sk30sqsq100sqsk300)_generation_3(sq3sk50sqsq3sqsk50)"}]
t = 1
for name in names:
    for _ in range(60):
        n = rng.randint(0, 9)
        dims = [[dim() for _ in range(rng.randint(0, 4))] if rng.random() < 0.9
                else [[dim() for _ in range(2)] for _ in range(2)] for _ in range(n)]
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t, "dur": 5,
                       "args": {"Input Dims": dims, "Input type": [rng.choice(types_pool) for _ in range(n)],
                                "Concrete Inputs": [rng.choice(conc_pool) for _ in range(n)]}})
        t += 10
path = write("hostile_models.json", json.dumps({"traceEvents": events}))
r = run(path, "SELECT name, flops(uid) AS f, bytes(uid) AS b, achieved_pct(uid) AS p FROM op")
rows = [l.split(",") for l in r.stdout.splitlines()[1:]]
bad = [x for x in rows if any(v and (not math.isfinite(float(v)) or float(v) < 0) for v in x[1:])]
modeled = sum(1 for x in rows if x[1])
check(r.returncode == 0 and len(rows) == len(events) - 1 and not bad and modeled > 100,
      f"hostile_models.json: {len(rows)} ops, {modeled} with FLOPs, none negative / inf / NaN "
      f"(rc {r.returncode}, {bad[:3]}) {r.stderr.strip()[:200]}")
finish()
