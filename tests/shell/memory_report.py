#!/usr/bin/env python3
"""The memory reports (memory, memory_ops, memory_leaks; docs/reports.md) and `.plot memory`: torch.profiler's [memory] events (profile_memory=True).
References recomputed here from the raw JSON: per device the largest Total Allocated and its first
event (in GiB, and in ms from the trace's first event), the largest Total Reserved, the first and
last totals, allocation and free counts, the allocations whose address is never freed later in the
trace, and the innermost cpu_op containing the peak event on its thread. 2021-era traces record
Bytes only: there the totals are the running sum of Bytes in time order (allocated_from 'sum of
Bytes'), never_freed is unknown (no Addr) and reserved unrecorded. Plus hand-made traces with the
answers written out.
usage: memory_report.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, subprocess, sys
from decimal import ROUND_HALF_UP, Decimal
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, shared, work = sys.argv[1:4]
work = os.path.join(work, "memory_report")
os.makedirs(work, exist_ok=True)


def report(path):
    """The memory, memory_ops and memory_leaks reports, as lists of dicts."""
    out = []
    for name in ("memory", "memory_ops", "memory_leaks"):
        r = subprocess.run([tlsql, "-q", path, "--csv", "-c", ".parameter set @top 100000", "--report", name],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, f"{os.path.basename(path)}: {name} report runs ({r.stderr.strip()[:200]})")
        out.append(list(csv.DictReader(io.StringIO(r.stdout))))
    return out


def ns(v):
    return int(Decimal(str(v)) * 1000)


def device(a):
    t, i = int(a["Device Type"]), int(a["Device Id"])
    return "cpu" if t == 0 else f"cuda:{i}" if t == 1 else f"device_type_{t}:{i}"


def r3(x):
    """SQLite's round(x, 3) as CSV prints it (a REAL keeps its '.0')."""
    return repr(float(Decimal(x).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)))


def reference(events):
    mem = [(k, e) for k, e in enumerate(events) if e.get("name") == "[memory]" and e.get("ph") in ("i", "I")]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator")]  # 2021: Operator
    t0 = min(ns(e["ts"]) for e in events if "ts" in e)  # the trace's first event (the summary's span start)
    out = {}
    for dev in sorted({device(e["args"]) for _, e in mem}):
        rows = sorted(((ns(e["ts"]), k, e["args"]) for k, e in mem if device(e["args"]) == dev), key=lambda r: r[:2])
        totals = all("Total Allocated" in a for _, _, a in rows)
        # The device's allocated bytes after each event: its Total Allocated, else the running sum of Bytes.
        allocated, run = [], 0
        for _, _, a in rows:
            run += int(a["Bytes"])
            allocated.append(int(a["Total Allocated"]) if totals else run)
        peak = max(allocated)
        j = allocated.index(peak)  # the first event at the peak
        pts, pk, _ = rows[j]
        pe = events[pk]
        # (2021 traces give an op's tid as "25772" and a [memory] event's as 25772: one thread)
        inside = [o for o in ops if str(o["tid"]) == str(pe["tid"]) and str(o["pid"]) == str(pe["pid"])
                  and ns(o["ts"]) <= pts <= ns(o["ts"]) + ns(o["dur"])]
        op = max(inside, key=lambda o: (ns(o["ts"]), -ns(o["dur"])))["name"] if inside else ""
        never, never_bytes = 0, 0
        for j, (_, _, a) in enumerate(rows):
            if int(a["Bytes"]) <= 0:
                continue
            later = [b for _, _, b in rows[j + 1:] if b.get("Addr") == a.get("Addr")]
            if not later:
                never, never_bytes = never + 1, never_bytes + int(a["Bytes"])
        addrs = all("Addr" in a for _, _, a in rows)
        reserved = [int(a["Total Reserved"]) for _, _, a in rows if "Total Reserved" in a]
        pointed = totals or peak > 0  # a running sum that never rises above 0 has no peak to point at
        out[dev] = {"peak_bytes": str(peak) if pointed else "",
                    "peak_gib": r3(Decimal(peak) / 2**30) if pointed else "",
                    "peak_ms": r3(Decimal(pts - t0) / 10**6) if pointed else "",
                    "peak_uid": str(pk) if pointed else "", "peak_op": op if pointed else "",
                    "allocated_from": "Total Allocated" if totals else "sum of Bytes",
                    "peak_reserved_bytes": str(max(reserved)) if reserved else "",
                    "first_allocated": str(allocated[0]), "last_allocated": str(allocated[-1]),
                    "allocations": str(sum(int(a["Bytes"]) > 0 for _, _, a in rows)),
                    "frees": str(sum(int(a["Bytes"]) < 0 for _, _, a in rows)),
                    "never_freed": str(never) if addrs else "", "never_freed_bytes": str(never_bytes) if addrs else ""}
    return out


def compare(path, events):
    want = reference(events)
    sets = report(path)
    got = {r["device"]: {k: r[k] for k in next(iter(want.values()))} for r in sets[0]}
    name = os.path.basename(path)
    check(got == want, f"{name}: per-device peaks and counts as the JSON says\n  got  {got}\n  want {want}")
    return sets


# Hand-made: cuda:0 allocates 100 (in aten::empty), 50 (in aten::mm: peak 150), frees the 100,
# allocates 30 at the freed address (in aten::add) and never frees it nor the 50; reserved 256 then
# 512. Per op: empty 100 gross / 0 freed; mm 50; add 30 gross and 100 freed (the free ran in add).
def x(name, ts, dur, cat="cpu_op"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}}


def mem(ts, addr, b, alloc, res):
    return {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
            "args": {"Addr": addr, "Bytes": b, "Total Allocated": alloc, "Total Reserved": res, "Device Id": 0,
                     "Device Type": 1}}


hand = [x("aten::empty", 0, 10), mem(5, 1000, 100, 100, 256), x("aten::mm", 20, 10), mem(25, 2000, 50, 150, 256),
        x("aten::add", 40, 10), mem(42, 1000, -100, 50, 256), mem(45, 1000, 30, 80, 512)]
path = os.path.join(work, "memory.json")
with open(path, "w") as f:
    json.dump({"traceEvents": hand}, f)
sets = compare(path, hand)
check(sets[0][0]["peak_op"] == "aten::mm" and sets[0][0]["peak_bytes"] == "150" and sets[0][0]["never_freed"] == "2"
      and sets[0][0]["never_freed_bytes"] == "80", f"hand-made: peak 150 in aten::mm, 2 never freed (80 B) ({sets[0]})")
ops = {r["op"]: (r["allocations"], r["gross_bytes"], r["freed_bytes"], r["net_bytes"]) for r in sets[1]}
check(ops == {"aten::empty": ("1", "100", "0", "100"), "aten::mm": ("1", "50", "0", "50"),
              "aten::add": ("1", "30", "100", "-70")}, f"hand-made: per-op allocations ({ops})")
check([(r["uid"], r["bytes"], r["op"]) for r in sets[2]] == [("3", "50", "aten::mm"), ("6", "30", "aten::add")],
      f"hand-made: never freed, largest first ({sets[2]})")

# Hand-made, 2021-style (Bytes only: no Total Allocated, Total Reserved or Addr): the same events
# as above. allocated is the running sum of Bytes: 100, 150 (the peak, in aten::mm, at 25 µs =
# 0.025 ms from the trace's first event at 0), 50, 80; 150 B = 150 / 2^30 GiB -> 0.0. Which
# allocation a free releases is unknown: never_freed NULL, and memory_leaks has no rows and says why.
def mem21(ts, b):
    return {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
            "args": {"Bytes": b, "Device Id": 0, "Device Type": 1}}


hand21 = [x("aten::empty", 0, 10), mem21(5, 100), x("aten::mm", 20, 10), mem21(25, 50), x("aten::add", 40, 10),
          mem21(42, -100), mem21(45, 30)]
path = os.path.join(work, "memory_2021.json")
with open(path, "w") as f:
    json.dump({"traceEvents": hand21}, f)
sets = compare(path, hand21)
row = sets[0][0]
check((row["allocated_from"], row["peak_bytes"], row["peak_gib"], row["peak_ms"], row["peak_uid"], row["peak_op"],
       row["first_allocated"], row["last_allocated"], row["never_freed"], row["peak_reserved_bytes"]) ==
      ("sum of Bytes", "150", "0.0", "0.025", "3", "aten::mm", "100", "80", "", ""),
      f"hand-made 2021: peak 150 B from the sum of Bytes, in aten::mm at 0.025 ms; never_freed unknown ({row})")
check(sets[2] == [], f"hand-made 2021: memory_leaks has no rows without Addr ({sets[2]})")
r = subprocess.run([tlsql, "-q", path, "--report", "memory_leaks"], capture_output=True, text=True, timeout=60)
check("no Addr" in r.stderr, f"hand-made 2021: memory_leaks says why it is empty ({r.stderr.strip()})")

# Hand-made, Bytes only, frees first (memory allocated before the trace began): the running sum is
# -64 then -32 and never rises above its start: no peak to point at, every peak column NULL.
hand_free = [x("aten::add", 0, 10), mem21(5, -64), mem21(6, 32)]
path = os.path.join(work, "memory_frees.json")
with open(path, "w") as f:
    json.dump({"traceEvents": hand_free}, f)
row = compare(path, hand_free)[0][0]
check([row[k] for k in ("peak_bytes", "peak_gib", "peak_ms", "peak_uid", "peak_op", "peak_source")] == [""] * 6
      and (row["first_allocated"], row["last_allocated"]) == ("-64", "-32"),
      f"hand-made, frees first: every peak column NULL ({row})")

for name in ("a100_switch_moe_batch4.json.gz", "t4_train_fp32.pt.trace.json",
             "v100_resnet50_2021_legacy.pt.trace.json.gz"):
    p = os.path.join(shared, "traces", name)
    if not os.path.exists(p):
        print(f"skip {name}: not present")
        continue
    opener = gzip.open if p.endswith(".gz") else open
    with opener(p, "rt") as f:
        events = json.load(f)["traceEvents"]
    compare(p, events)
    # .plot memory: the CSV holds every [memory] event with its totals; the picture one peak
    # mark per device.
    csv_path, svg_path = os.path.join(work, "memory.csv"), os.path.join(work, "memory.svg")
    r = subprocess.run([tlsql, "-q", p, "-c", f".plot memory {csv_path}", "-c", f".plot memory {svg_path}"],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"{name}: .plot memory ({r.stderr.strip()})")
    with open(csv_path) as f:
        got = sorted((r["device"], int(r["allocated_bytes"]), r["reserved_bytes"]) for r in csv.DictReader(f))
    mem = [e["args"] for e in events if e.get("name") == "[memory]"]
    ref = reference(events)
    if all(v["allocated_from"] == "Total Allocated" for v in ref.values()):
        want = sorted((device(a), int(a["Total Allocated"]), str(a["Total Reserved"])) for a in mem)
    else:  # the running sums of Bytes, in time order per device; no reserved
        want, run = [], {}
        for e in sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: ns(e["ts"])):
            d = device(e["args"])
            run[d] = run.get(d, 0) + int(e["args"]["Bytes"])
            want.append((d, run[d], ""))
        want.sort()
    check(got == want, f"{name}: .plot memory CSV: {len(got)} samples (JSON: {len(want)} [memory] events)")
    with open(svg_path) as f:
        marks = f.read().count("fill-opacity:0.72")
    check(marks == len({device(a) for a in mem}), f"{name}: one peak mark per device ({marks})")
finish()
