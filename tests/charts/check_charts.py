#!/usr/bin/env python3
"""The .plot charts through the real binary, checked against what they must show.

Each chart is written three ways: SVG (must parse as XML), PNG (must decode: chunk CRCs, IHDR, the
inflated pixel rows) and CSV (the numbers the picture was drawn from). The CSV and the SVG are
then compared with the same quantities computed another way:
- roofline: the labels (boxes in the CSV) lie in the plot and never overlap; the points are exactly
  the ops with FLOPs > 0 and GPU time from a model of their own, not wrappers summing the ops beneath
  (SQL over flops(), perf_source() and gpu_time()); each point sits at (intensity(uid), tflops(uid)); the SVG has one filled mark per
  point; each ceiling's knee = peak TFLOP/s / peak TB/s read from gpu_spec directly (H100 SXM
  bf16 by hand: 989.4 / 3.35 = 295.343...); the 10 labelled points are the 10 largest by GPU time.
- timeline: events per stream = SQL counts; each GPU's busy time = the union of its GPU
  intervals computed here in Python; step lines at each step's first GPU start; a step window
  spans that step's GPU work; the SVG stays small (sub-pixel work is aggregated).
- diff: the bars are the top N rows of `.report diff` by |difference| (ProfilerStep* left out of
  the duration chart), computed here from the report's CSV; one SVG mark per non-zero bar.
usage: check_charts.py TLSQL DATA_DIR SHARED_DIR WORK_DIR"""
import csv, io, os, re, struct, subprocess, sys, zipfile, zlib
import xml.etree.ElementTree as ET
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
MARK = "fill-opacity:0.72"


def run(args):
    return subprocess.run([tlsql] + args, capture_output=True, text=True, timeout=900)


def query(trace_args, sql):
    r = run(trace_args + ["-q", "--csv", "-c", sql])
    assert r.returncode == 0, r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


def plot(trace_args, spec, name):
    """Writes the chart as .svg, .png and .csv; returns (svg path, png path, csv rows)."""
    out = {}
    for ext in ("svg", "png", "csv"):
        path = os.path.join(work, f"{name}.{ext}")
        if os.path.exists(path):
            os.remove(path)
        kind, rest = spec.split(" ", 1) if " " in spec else (spec, "")
        r = run(trace_args + ["-q", "-c", f".plot {kind} {path} {rest}"])
        check(r.returncode == 0 and os.path.exists(path), f"{name}.{ext} written ({r.stderr.strip()[:200]})")
        out[ext] = path
    with open(out["csv"]) as f:
        rows = list(csv.DictReader(f))
    return out["svg"], out["png"], rows


def svg_marks(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        check(False, f"{path} parses as XML: {e}")
        return None, 0
    check(root.tag.endswith("svg"), f"{os.path.basename(path)} is an SVG document")
    elements = list(root.iter())
    return sum(MARK in (e.get("style") or "") for e in elements), len(elements)


def roofline_marks(path):
    """Point marks of a roofline SVG: discs with the point outline whose fill alpha is a point's
    0.72 or, for points drawn as one mark, 1 - 0.28^n (the legend's disc has 0.25)."""
    root = ET.parse(path).getroot()
    alphas = [float(re.search(r"fill-opacity:([0-9.]+)", e.get("style")).group(1)) for e in root.iter()
              if "stroke-opacity:0.55" in (e.get("style") or "") and "fill-opacity:" in e.get("style")]
    return sum(a >= 0.72 for a in alphas)


def png_decodes(path):
    """A strict PNG read: signature, every chunk's CRC, IHDR, and the inflated IDAT size."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos, idat, ihdr = 8, b"", None
    while pos < len(b):
        n, kind = struct.unpack(">I4s", b[pos:pos + 8])
        body = b[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", b[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(kind + body) != crc:
            return False
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + n
    if not ihdr:
        return False
    w, h, depth, color = ihdr[:4]
    channels = {6: 4, 2: 3}.get(color)
    raw = zlib.decompress(idat)
    return depth == 8 and channels and len(raw) == h * (1 + w * channels) and all(
        raw[y * (1 + w * channels)] <= 4 for y in range(h))


def present(cases):
    """The cases whose first file exists; the others are named as skipped (../shared absent)."""
    for case in cases:
        if os.path.exists(case[1]):
            yield case
        else:
            print(f"skip {case[1]}: not present")


def ceilings_rows(rows):
    return [r for r in rows if r["kind"] == "ceiling"]


def close(a, b, rel=1e-9):
    return abs(float(a) - float(b)) <= rel * max(1.0, abs(float(b)))


# ---------------------------------------------------------------------------------------------
# Roofline: NVIDIA (H100) and AMD (MI210 by CU count; MI300X from ../shared).
roofline_traces = [("bert_h100", os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")),
                   ("minitoy_mi210", os.path.join(data, "hta_amd_mi250_minitoy.json.gz")),
                   ("resnet_mi300x", os.path.join(shared, "traces", "tracelens", "mi300", "resnet_act_checkpoint.json.gz"))]
for name, trace in present(roofline_traces):
    svg, png, rows = plot([trace], "roofline", f"roofline_{name}")
    expected = query([trace], "SELECT uid, intensity(uid) AS x, tflops(uid) AS y, gpu_time(uid) AS ns, name, "
                              "coalesce(input_dims, '') || coalesce(input_types, '') AS shapes FROM op "
                              "WHERE flops(uid) > 0 AND bytes(uid) > 0 AND gpu_time(uid) > 0 AND perf_source(uid) <> 'beneath'")
    points = [r for r in rows if r["kind"] == "point"]
    check(len(points) == len(expected) > 0, f"{name}: {len(points)} points = {len(expected)} ops with FLOPs and GPU time")
    by_uid = {r["uid"]: r for r in expected}
    check(all(p["uid"] in by_uid and close(p["x"], by_uid[p["uid"]]["x"]) and close(p["y"], by_uid[p["uid"]]["y"])
              for p in points), f"{name}: every point at (intensity(uid), tflops(uid))")
    # Labels (issue 18 item 13): the 10 (op, shapes) groups with the most GPU time, each at its
    # largest point, so ten instances of one op take one label.
    groups = {}
    for r in expected:
        groups.setdefault((r["name"], r["shapes"]), []).append(r)
    top = sorted(groups.values(), key=lambda g: -sum(int(r["ns"]) for r in g))[:10]
    labelled = [p for p in points if p["labelled"] == "1"]
    got = sorted((by_uid[p["uid"]]["name"], by_uid[p["uid"]]["shapes"], int(by_uid[p["uid"]]["ns"])) for p in labelled)
    want = sorted((g[0]["name"], g[0]["shapes"], max(int(r["ns"]) for r in g)) for g in top)
    check(len(labelled) == min(10, len(groups)) and got == want,
          f"{name}: the labels name the 10 (op, shapes) groups with the most GPU time, at their largest point")
    # Labels (boxes in the picture's pixels, from the CSV): every labelled point and ceiling has
    # one, inside the plot area (x 90..850, y 72..640), and no two overlap.
    boxes = [(r["kind"] + " " + (r["uid"] or r["name"]), [float(r[k]) for k in ("label_x0", "label_y0", "label_x1", "label_y1")])
             for r in rows if r["label_x0"]]
    check(len([b for b in boxes if b[0].startswith("point")]) == len(labelled) and
          all(r["label_x0"] for r in ceilings_rows(rows)), f"{name}: every labelled point and ceiling has its label")
    overlaps = [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                if a[1] != b[1] and a[1][0] < b[1][2] and b[1][0] < a[1][2] and a[1][1] < b[1][3] and b[1][1] < a[1][3]]
    check(not overlaps and all(90 <= x0 and x1 <= 850 and 72 <= y0 and y1 <= 640 for _, (x0, y0, x1, y1) in boxes),
          f"{name}: {len(boxes)} labels inside the plot, none overlapping {overlaps[:3]}")
    # Points that coincide (same place and size to 1/4 px, same color) are drawn as one mark with
    # the alpha of their layers: the CSV names each point's mark. Every mark is drawn, points of
    # exactly the same numbers share one, and a mark's points have one category.
    marks = roofline_marks(svg)
    by_mark = {}
    for p in points:
        by_mark.setdefault(p["mark"], []).append(p)
    check(marks == len(by_mark) and all(p["mark"] for p in points),
          f"{name}: SVG has {marks} point marks for {len(by_mark)} distinct marks of {len(points)} points")
    same = {}
    for p in points:
        same.setdefault((p["category"], p["x"], p["y"], p["gpu_us"]), set()).add(p["mark"])
    check(all(len(m) == 1 for m in same.values()) and
          all(len({p["category"] for p in ps}) == 1 for ps in by_mark.values()),
          f"{name}: identical points share a mark, and a mark shows one category")
    check(png_decodes(png), f"{name}: PNG decodes")
    # Ceilings: knee = peak TFLOP/s / peak TB/s from gpu_spec for the trace's first GPU.
    spec = {(r["dtype"], "matrix"): r for r in query([trace], "SELECT s.* FROM device_gpu g JOIN gpu_spec s ON s.gpu = g.gpu "
                                                             "WHERE g.id = (SELECT min(id) FROM device_gpu)")}
    ceilings = ceilings_rows(rows)
    check(len(ceilings) > 0, f"{name}: at least one compute ceiling")
    for c in ceilings:
        s = spec[(c["dtype"], "matrix")]
        fp32 = spec[("fp32", "matrix")]
        peak = float(s["matrix_tflops"]) if c["units"] == "matrix" else float(s["vector_tflops"] or fp32["vector_tflops"])
        check(close(c["y"], peak) and close(c["x"], peak / float(s["hbm_tbps"])),
              f"{name}: {c['name']} ceiling {c['y']} TFLOP/s, knee {c['x']} = {peak} / {s['hbm_tbps']}")
    memory = [r for r in rows if r["kind"] == "memory"]
    check(len(memory) == 1 and close(memory[0]["y"], next(iter(spec.values()))["hbm_tbps"]), f"{name}: memory roof")
    if name == "bert_h100":
        bf16 = [c for c in ceilings if c["name"] == "bf16 matrix"]
        check(len(bf16) == 1 and abs(float(bf16[0]["x"]) - 295.3432835820896) < 1e-9,
              "bert_h100: bf16 matrix knee 989.4 / 3.35 = 295.343 FLOP/byte")

# WHERE and kernels variants.
bert = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
_, _, rows = plot([bert], "roofline WHERE op_category(name) = 'GEMM'", "roofline_gemm")
gemm = query([bert], "SELECT count(*) AS n FROM op WHERE op_category(name) = 'GEMM' AND flops(uid) > 0 AND bytes(uid) > 0 AND gpu_time(uid) > 0 "
                    "AND perf_source(uid) <> 'beneath'")
check(len([r for r in rows if r["kind"] == "point"]) == int(gemm[0]["n"]) and
      all(r["category"] == "GEMM" for r in rows if r["kind"] == "point"), "roofline WHERE: GEMM ops only")
_, _, rows = plot([bert], "roofline kernels", "roofline_kernels")
kern = query([bert], "SELECT count(*) AS n FROM kernel WHERE flops(uid) > 0 AND gpu_time(uid) > 0")
check(len([r for r in rows if r["kind"] == "point"]) == int(kern[0]["n"]) > 0, "roofline kernels: one point per kernel with FLOPs")


# ---------------------------------------------------------------------------------------------
# Timeline: NVIDIA, AMD, and a multi-stream trace with steps.
def union(iv):
    total, cur = 0, None
    for a, b in sorted(iv):
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
    return total + (cur[1] - cur[0] if cur else 0)


timeline_traces = [("bert_h100", bert), ("minitoy_mi210", os.path.join(data, "hta_amd_mi250_minitoy.json.gz")),
                   ("control", os.path.join(shared, "traces", "hta", "trace_diff", "control.json.gz"))]
for name, trace in present(timeline_traces):
    svg, png, rows = plot([trace], "timeline", f"timeline_{name}")
    gpu = query([trace], "SELECT trace, coalesce(device, -1) AS device, coalesce(stream, -1) AS stream, ts, end, step "
                         "FROM gpu WHERE ts IS NOT NULL")
    lanes = {}
    for g in gpu:
        lanes.setdefault((g["trace"], g["device"], g["stream"]), []).append(g)
    got = {(r["trace"], r["device"], r["stream"]): int(r["events"]) for r in rows if r["row"] == "lane"}
    check(got == {k: len(v) for k, v in lanes.items()}, f"{name}: events per stream = SQL ({len(got)} streams)")
    devices = {}
    for g in gpu:
        devices.setdefault((g["trace"], g["device"]), []).append((int(g["ts"]), int(g["end"])))
    busy = {(r["trace"], r["device"]): int(r["busy_ns"]) for r in rows if r["row"] == "gpu"}
    check(busy == {k: union(v) for k, v in devices.items()}, f"{name}: busy ns per GPU = union of its intervals")
    starts = {}
    for g in gpu:
        if g["step"]:
            starts[g["step"]] = min(starts.get(g["step"], 1 << 62), int(g["ts"]))
    got_steps = {r["step"]: int(r["start_ns"]) for r in rows if r["row"] == "step"}
    check(got_steps == starts, f"{name}: step lines at each step's first GPU start ({len(starts)} steps)")
    _, n = svg_marks(svg)
    check(n < 40 * 1200, f"{name}: SVG has {n} elements (sub-pixel work aggregated)")
    check(png_decodes(png), f"{name}: PNG decodes")
    if starts:
        step = sorted(starts, key=int)[1 if len(starts) > 1 else 0]
        _, _, rows = plot([trace], f"timeline {step}", f"timeline_{name}_step")
        window = [r for r in rows if r["row"] == "window"][0]
        in_step = [g for g in gpu if g["step"] == step]
        check(int(window["start_ns"]) == min(int(g["ts"]) for g in in_step) and
              int(window["end_ns"]) == max(int(g["end"]) for g in in_step), f"{name}: step {step} window = its GPU span")

# A millisecond range on the example: events that overlap [first + 1 ms, first + 2 ms].
_, _, rows = plot([bert], "timeline 1..2", "timeline_range")
first = int(query([bert], "SELECT min(ts) AS t FROM gpu")[0]["t"])
n = int(query([bert], f"SELECT count(*) AS n FROM gpu WHERE end >= {first + 1000000} AND ts <= {first + 2000000}")[0]["n"])
window = [r for r in rows if r["row"] == "window"][0]
check(int(window["start_ns"]) == first + 1000000 and int(window["end_ns"]) == first + 2000000 and int(window["events"]) == n,
      f"timeline 1..2 ms: window and its {n} events")


# ---------------------------------------------------------------------------------------------
# Diff: bars = the diff report's top rows.
# The compare pair's first steps are identical: all steps (.parameter) give additions and decreases.
all_steps = ["-c", ".parameter set @control_step all", "-c", ".parameter set @test_step all"]
diff_pairs = [("compare", os.path.join(data, "hta_trace_compare_base.json.gz"), os.path.join(data, "hta_trace_compare_test.json.gz"),
               all_steps),
              ("trace_diff", os.path.join(shared, "traces", "hta", "trace_diff", "control.json.gz"),
               os.path.join(shared, "traces", "hta", "trace_diff", "test.json.gz"), [])]
for name, control, test, params in present(diff_pairs):
    args = [control, "--diff", test] + params
    report = query(args, ".report diff")
    for metric, top in (("duration", 15), ("counts", 8)):
        svg, png, rows = plot(args, f"diff {metric} {top}", f"diff_{name}_{metric}")
        c, t, d = (("Control_total_duration", "Test_total_duration", "diff_duration") if metric == "duration"
                   else ("Control_counts", "Test_counts", "diff_counts"))
        want = [r for r in report if float(r[d]) != 0 and not (metric == "duration" and r["name"].startswith("ProfilerStep"))
                and r["name"] != "(total)"]  # (the report's totals rows: not names)
        want.sort(key=lambda r: (-abs(float(r[d])), r["name"]))
        want = want[:top]
        check(len(rows) > 0 and [r["name"] for r in rows] == [r["name"] for r in want] and
              all(close(a["control"], b[c]) and close(a["test"], b[t]) and close(a["difference"], b[d])
                  for a, b in zip(rows, want)), f"{name} {metric}: {len(rows)} bars = the diff report's top rows")
        check(not any(r["name"].startswith("ProfilerStep") for r in rows) or metric == "counts",
              f"{name} {metric}: no ProfilerStep bars")
        marks, _ = svg_marks(svg)
        nonzero = sum(float(r[k]) != 0 for r in rows for k in ("control", "test", "difference"))
        check(marks == nonzero, f"{name} {metric}: SVG has {marks} bars for {nonzero} non-zero values")
        check(png_decodes(png), f"{name} {metric}: PNG decodes")

# ---------------------------------------------------------------------------------------------
# Errors: one line, exit 1, no file.
for args, msg in [([bert, "-c", ".plot diff /tmp/x.svg"], "no trace to compare with"),
                  ([bert, "-c", f".plot roofline {work}/x.gif"], "must end in .svg, .png or .csv"),
                  ([bert, "-c", f".plot timeline {work}/x.svg 99"], "no GPU work in step 99"),
                  ([bert, "-c", f".plot timeline {work}/x.svg soon"], "neither a step number"),
                  ([bert, "-c", f".plot sankey {work}/x.svg"], ".plot roofline FILE"),
                  ([bert, "-c", f".plot roofline {work}/x.svg WHERE nonsense("], "error")]:
    r = run(["-q"] + args)
    check(r.returncode == 1 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1 and
          not os.path.exists(f"{work}/x.svg"), f"error: {' '.join(args[1:])}: {r.stderr.strip()}")

# ---------------------------------------------------------------------------------------------
# cairo and libzip (with OpenSSL's libcrypto) are loaded when a command draws or writes a .zip,
# not by every command (repl/modules.h): the dynamic loader's own record of what it loaded into
# tlsql's process (LD_DEBUG=files) for a query, a chart and a replay bundle.
def loaded(args):
    r = subprocess.run([tlsql, "-q"] + args, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, LD_DEBUG="files"))
    check(r.returncode == 0, f"LD_DEBUG run of {' '.join(args[-1:])}: {r.stderr[-300:]}")
    # (tlsql's own lines: the first pid; the replay worker it starts has its own libraries.)
    lines = re.findall(r"^\s*(\d+):\s*file=(?:\S*/)?(lib[a-z_0-9]+)\.so", r.stderr, re.M)
    return {lib for pid, lib in lines if pid == lines[0][0]} if lines else set()


libs = {"libtlsql_pictures", "libcairo", "libtlsql_zip", "libzip", "libcrypto"}
got = loaded([bert, "-c", "SELECT count(*) FROM kernel"])
check(not got & libs, f"a query loads none of {sorted(libs)}: {sorted(got & libs)}")
got = loaded([bert, "-c", f".plot timeline {work}/lazy.svg"])
check({"libtlsql_pictures", "libcairo"} <= got and not got & {"libzip", "libcrypto"},
      f".plot loads the pictures and cairo, not libzip: {sorted(got & libs)}")
got = loaded([bert, "-c", f".export-replay {work}/lazy.zip"])
check({"libtlsql_zip", "libzip"} <= got and "libcairo" not in got and zipfile.is_zipfile(f"{work}/lazy.zip"),
      f".export-replay FILE.zip loads libzip, not cairo, and writes a zip: {sorted(got & libs)}")

finish()
