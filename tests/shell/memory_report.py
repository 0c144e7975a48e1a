#!/usr/bin/env python3
"""The memory reports (memory, memory_ops, memory_leaks; docs/reports.md) and `.plot memory`: torch.profiler's [memory] events (profile_memory=True).
References recomputed here from the raw JSON: per device the largest Total Allocated and its first
event, the largest Total Reserved, the first and last totals, allocation and free counts, the
allocations whose address is never freed later in the trace, and the innermost cpu_op containing
the peak event on its thread; plus a hand-made trace with the answers written out.
usage: memory_report.py TLSQL SHARED_DIR WORK_DIR"""
import csv, gzip, io, json, os, subprocess, sys
from decimal import Decimal
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


def reference(events):
    mem = [(k, e) for k, e in enumerate(events) if e.get("name") == "[memory]" and e.get("ph") in ("i", "I")]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    out = {}
    for dev in sorted({device(e["args"]) for _, e in mem}):
        rows = sorted(((ns(e["ts"]), k, e["args"]) for k, e in mem if device(e["args"]) == dev), key=lambda r: r[:2])
        peak = max(int(a["Total Allocated"]) for _, _, a in rows)
        pts, pk, _ = next(r for r in rows if int(r[2]["Total Allocated"]) == peak)
        pe = events[pk]
        inside = [o for o in ops if o["tid"] == pe["tid"] and o["pid"] == pe["pid"]
                  and ns(o["ts"]) <= pts <= ns(o["ts"]) + ns(o["dur"])]
        op = max(inside, key=lambda o: (ns(o["ts"]), -ns(o["dur"])))["name"] if inside else ""
        never, never_bytes = 0, 0
        for j, (_, _, a) in enumerate(rows):
            if int(a["Bytes"]) <= 0:
                continue
            later = [b for _, _, b in rows[j + 1:] if b.get("Addr") == a.get("Addr")]
            if not later:
                never, never_bytes = never + 1, never_bytes + int(a["Bytes"])
        out[dev] = {"peak_bytes": str(peak), "peak_ts": str(pts), "peak_uid": str(pk), "peak_op": op,
                    "peak_reserved_bytes": str(max(int(a["Total Reserved"]) for _, _, a in rows)),
                    "first_allocated": str(rows[0][2]["Total Allocated"]),
                    "last_allocated": str(rows[-1][2]["Total Allocated"]),
                    "allocations": str(sum(int(a["Bytes"]) > 0 for _, _, a in rows)),
                    "frees": str(sum(int(a["Bytes"]) < 0 for _, _, a in rows)),
                    "never_freed": str(never), "never_freed_bytes": str(never_bytes)}
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

for name in ("a100_switch_moe_batch4.json.gz", "t4_train_fp32.pt.trace.json"):
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
        got = sorted((r["device"], int(r["allocated_bytes"]), int(r["reserved_bytes"])) for r in csv.DictReader(f))
    mem = [e["args"] for e in events if e.get("name") == "[memory]"]
    want = sorted((device(a), int(a["Total Allocated"]), int(a["Total Reserved"])) for a in mem)
    check(got == want, f"{name}: .plot memory CSV: {len(got)} samples (JSON: {len(want)} [memory] events)")
    with open(svg_path) as f:
        marks = f.read().count("fill-opacity:0.72")
    check(marks == len({device(a) for a in mem}), f"{name}: one peak mark per device ({marks})")
finish()
