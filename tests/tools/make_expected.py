#!/usr/bin/env python3
"""Computes the expected.csv of the generated diff tests straight from the trace JSON (and from
TraceLens's reference CSVs), by a route independent of tlsql: Python's json with Decimal numbers.

    python3 tests/tools/make_expected.py [--shared ../shared]

Each case folder it writes holds traces, query.sql and expected.csv. Run it only to add or
change a case, and read the diff: the numbers must agree with the trace, not with tlsql.
"""
import argparse, ast, csv, gzip, io, json, os
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "cases")
DATA = os.path.join(HERE, "..", "data")


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw, parse_float=Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value()) if v is not None else None


def csv_text(header, rows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if x is None else x for x in r])
    return out.getvalue()


def write_case(name, trace_ref, query, header, rows):
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "traces"), "w").write(trace_ref + "\n")
    open(os.path.join(d, "query.sql"), "w").write(query.strip() + "\n")
    open(os.path.join(d, "expected.csv"), "w").write(csv_text(header, rows))


def resolve(ref, shared):
    kind, rel = ref.split(":", 1)
    return os.path.join(shared, "traces", rel) if kind == "shared" else os.path.join(DATA, rel)


GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "runtime", "driver"}


def sort_key(v):  # SQLite orders NULL first, then text by bytes
    return (0, b"") if v is None else (1, v.encode())


def event_counts(name, ref, shared):
    ev = load(resolve(ref, shared))
    counts = {}
    for e in ev:
        k = (e.get("ph"), e.get("cat")) if isinstance(e, dict) else (None, None)
        counts[k] = counts.get(k, 0) + 1
    rows = [(ph, cat, n) for (ph, cat), n in sorted(counts.items(), key=lambda kv: (sort_key(kv[0][0]), sort_key(kv[0][1])))]
    rows.append(("ph", "cat", "count(*)"))  # the second statement's header
    rows.append(("TOTAL", "max uid + 1", len(ev)))
    write_case(name, ref, """
-- One row per element of traceEvents, uid = position: counts per (ph, cat) from Python's json.
SELECT ph, cat, count(*) FROM event GROUP BY ph, cat ORDER BY ph, cat;
SELECT 'TOTAL' AS ph, 'max uid + 1' AS cat, max(uid) + 1 AS "count(*)" FROM event HAVING count(*) = max(uid) + 1;
""", ["ph", "cat", "count(*)"], rows)


def gpu_linking(name, ref, shared):
    ev = load(resolve(ref, shared))
    corr = {e["args"]["correlation"] for e in ev if isinstance(e, dict) and (e.get("cat") or "").lower() in LAUNCH_CATS
            and "correlation" in e.get("args", {})}
    stats = {}
    kind = {"kernel": "kernel", "gpu_memcpy": "memcpy", "memcpy": "memcpy", "gpu_memset": "memset", "memset": "memset"}
    for e in ev:
        c = (e.get("cat") or "").lower() if isinstance(e, dict) else ""
        if c in GPU_CATS and e.get("ph") == "X":
            k = kind[c]
            s = stats.setdefault(k, [0, 0])
            s[0] += 1
            s[1] += e.get("args", {}).get("correlation") in corr
    rows = [(k, v[0], v[1]) for k, v in sorted(stats.items())]
    write_case(name, ref, """
-- Every GPU event whose correlation id is on a runtime/driver call of the trace is linked to it.
SELECT kind, count(*) AS events, count(parent) AS linked FROM gpu GROUP BY kind ORDER BY kind;
""", ["kind", "events", "linked"], rows)


def steps(name, ref, shared):
    """HTA's iteration rule: host events by the ProfilerStep#N span holding their ts; GPU events
    take the step of the runtime call with their correlation id."""
    ev = load(resolve(ref, shared))
    spans = []
    for e in ev:
        if isinstance(e, dict) and e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#") \
                and (e.get("cat") or "").lower() in ("user_annotation", "operator", "cpu_op"):
            spans.append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), int(e["name"].split("#")[1])))
    spans.sort()

    def step_of(ts):
        best = None
        for s, t, n in spans:
            if s <= ts:
                best = (t, n)
        return best[1] if best and ts < best[0] else None

    host_cats = {"cpu_op", "operator", "python_function", "user_annotation", "cuda_runtime", "cuda_driver",
                 "runtime", "cpu_instant_event"}
    counts, by_corr = {}, {}
    for e in ev:
        if not isinstance(e, dict) or e.get("ph") not in ("X", "i", "I") or "ts" not in e:
            continue
        c = (e.get("cat") or "").lower()
        if c in host_cats or (e.get("ph") in ("i", "I")):
            s = step_of(ns(e["ts"]))
            if c in LAUNCH_CATS and "correlation" in e.get("args", {}):
                by_corr.setdefault(e["args"]["correlation"], s)
            if s is not None:
                counts[("host", s)] = counts.get(("host", s), 0) + 1
    for e in ev:
        if isinstance(e, dict) and (e.get("cat") or "").lower() in GPU_CATS:
            s = by_corr.get(e.get("args", {}).get("correlation"))
            if s is not None:
                counts[("gpu", s)] = counts.get(("gpu", s), 0) + 1
    rows = [(side, s, n) for (side, s), n in sorted(counts.items())]
    write_case(name, ref, """
-- step = N of the ProfilerStep#N holding a host event's ts; GPU work takes its launch's step (HTA).
SELECT CASE WHEN kind IN ('kernel', 'memcpy', 'memset') THEN 'gpu' ELSE 'host' END AS side, step, count(*)
FROM event WHERE step IS NOT NULL AND kind NOT IN ('sync', 'gpu_annotation', 'other')
GROUP BY side, step ORDER BY side, step;
""", ["side", "step", "count(*)"], rows)


def exact_ns(name, ref, shared, uids):
    ev = load(resolve(ref, shared))
    rows = []
    for u in uids:
        e = ev[u]
        ts, dur = ns(e.get("ts")), ns(e.get("dur"))
        rows.append((u, ts, dur, ts + dur if dur is not None else None))
    write_case(name, ref, f"""
-- ts/dur/end are exact integer ns from the decimal µs text (Python Decimal x 1000).
SELECT uid, ts, dur, end FROM event WHERE uid IN ({", ".join(map(str, uids))}) ORDER BY uid;
""", ["uid", "ts", "dur", "end"], rows)


def forward_links(name, ref, shared):
    """PyTorch's own fwd/bwd rule: a backward op (Fwd thread id > 0) links to the last forward op
    (by start time) carrying the same Sequence number."""
    ev = load(resolve(ref, shared))
    last = {}
    order = sorted((ns(e["ts"]), i) for i, e in enumerate(ev) if isinstance(e, dict) and e.get("cat") == "cpu_op")
    for ts, i in order:
        a = ev[i].get("args", {})
        if "Sequence number" in a and not a.get("Fwd thread id"):
            last[a["Sequence number"]] = i
    rows = []
    for i, e in enumerate(ev):
        a = e.get("args", {}) if isinstance(e, dict) else {}
        if e.get("cat") == "cpu_op" and a.get("Fwd thread id") and "Sequence number" in a:
            rows.append((i, e["name"], last.get(a["Sequence number"])))
    write_case(name, ref, """
-- Backward ops point at their forward op (fwd); checked against PyTorch's rule in Python.
SELECT uid, name, fwd FROM op WHERE args ->> '$."Fwd thread id"' > 0 ORDER BY uid;
""", ["uid", "name", "fwd"], rows)


def tracelens_launchers(name, ref, shared, csv_path):
    """TraceLens's ops_unique_args: each row's ex_UID is a kernel launcher of that name, and
    operation_count summed per name is the number of launchers of that name."""
    rows = list(csv.DictReader(open(csv_path, encoding="utf-8")))
    per_name = {}
    for r in rows:
        per_name[r["name"]] = per_name.get(r["name"], 0) + int(r["operation_count"])
    ex = sorted(int(r["ex_UID"]) for r in rows)
    out = [(n, c) for n, c in sorted(per_name.items(), key=lambda kv: kv[0].encode())]
    out.append(("name", "count(DISTINCT l.launcher)"))  # the second statement's header
    out.append(("ex_UID launchers", len(ex)))
    write_case(name, ref, f"""
-- Kernel launchers (TraceLens's rule) per op name, against TraceLens's ops_unique_args.csv.
SELECT e.name, count(DISTINCT l.launcher) FROM launch_link l
  JOIN event e ON e.uid = l.launcher JOIN event g ON g.uid = l.gpu
  WHERE g.name NOT LIKE '%nccl%' AND e.kind = 'cpu_op'
  GROUP BY e.name ORDER BY e.name;
SELECT 'ex_UID launchers' AS name, count(*) AS "count(DISTINCT l.launcher)" FROM event
  WHERE uid IN ({", ".join(map(str, ex))}) AND uid IN (SELECT launcher FROM kernel UNION SELECT launcher FROM launch_link);
""", ["name", "count(DISTINCT l.launcher)"], out)


BPE = {"double": 8, "float": 4, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "int": 4, "bool": 1}
MIB = 1048576


def prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def int_list(text):
    return [int(v) for v in text.strip("[]() ").split(",") if v.strip()]


def reduced_numel(shape, dims_text, keepdim):
    """Elements of a reduction's output (torch: dim list, keepdim)."""
    if dims_text in ("", "[]", "None"):
        return 1
    ds = {d % len(shape) for d in int_list(dims_text)}
    return prod(1 if i in ds else n for i, n in enumerate(shape) if keepdim or i not in ds)


def tlsql_perf(op, dims, types, conc, gflops, mib):
    """tlsql's FLOPs (GFLOP) and bytes (MiB) for one row of TraceLens's unified_perf_summary,
    from TraceLens's own numbers and the deliberate differences (docs/perf_models.md), each
    re-derived here from the op's recorded args. Returns (gflops, mib, note)."""
    has = lambda i: i < len(dims) and len(dims[i]) > 0  # noqa: E731
    bpe = BPE.get(types[0], 0) if types else 0
    x = dims[0] if dims else []
    n = prod(x) if all(isinstance(v, int) for v in x) else 0  # (a TensorList such as cat's: not used)
    if op == "aten::convolution" and has(2):
        # TraceLens never sees the bias (its check is len(Input Dims) == 3): + one FLOP per output
        # element, + C_out elements read
        w, stride, pad, dil = dims[1], int_list(conc[3]), int_list(conc[4]), int_list(conc[5])
        out = [x[0], w[0]] + [(x[i] + 2 * pad[i - 2] - dil[i - 2] * (w[i] - 1) - 1) // stride[i - 2] + 1
                              for i in range(2, len(x))]
        return gflops + prod(out) / 1e9, mib + w[0] * bpe / MIB, "conv bias counted"
    # Norms: TraceLens counts the weight and bias of batch / layer / group / RMS norm even when the
    # op has none; tlsql counts what the op has.
    norm_wb = {"aten::batch_norm": (1, 2), "aten::native_batch_norm": (1, 2), "aten::layer_norm": (2, 3),
               "aten::native_layer_norm": (2, 3), "aten::group_norm": (2, 3), "aten::native_group_norm": (1, 2)}
    if op in norm_wb:
        c = prod(int_list(conc[1])) if "layer_norm" in op else x[1]
        missing = sum(not has(i) for i in norm_wb[op])
        return gflops, mib - missing * c * bpe / MIB, "absent weight / bias not moved" if missing else "same"
    if op == "aten::instance_norm":
        # PyTorch runs batch_norm over [1, B*C, ...] (statistics per sample and channel) after
        # repeating the weight and bias B times (a copy of B*C elements each); TraceLens uses C.
        bc, w, b = x[0] * x[1], has(1), has(2)
        flops = 6 * bc + 5 * n + (w + b) * bc
        moved = 2 * n * bpe + (2 + w + (b if w else 0) + 2) * bc * bpe + (w + b) * 2 * bc * bpe
        return flops / 1e9, moved / MIB, "statistics per sample and channel"
    if op in ("aten::native_batch_norm_backward", "aten::batch_norm_backward") and not has(2):
        c, training = dims[1][1], conc[7] == "True"
        return gflops, mib - (c + (2 * c if training else 0)) * bpe / MIB, "absent weight not moved"
    if op == "aten::native_group_norm_backward" and has(4):
        # TraceLens never counts the weight here; tlsql reads it and writes its and the bias's gradient
        c, bias = dims[1][1], (conc[9].count("True") == 3 if conc[9] else True)
        return gflops, mib + (c + c * (2 if bias else 1)) * bpe / MIB, "weight moved"
    if op in ("aten::_fused_rms_norm", "aten::rms_norm") and not has(2):
        c = prod(int_list(conc[1]))
        return gflops - n / 1e9, mib - c * bpe / MIB, "no weight: no multiply, no read"
    if op == "aten::_fused_rms_norm_backward" and not has(4):
        c = prod(int_list(conc[2]))
        return gflops, mib - 2 * c * bpe / MIB, "no weight: no read, no gradient"
    if op in ("aten::sum", "aten::mean") and gflops is not None:
        # TraceLens sizes every reduction's output as one element
        out = reduced_numel(x, conc[1], conc[2] == "True")
        return gflops, mib + (out - 1) * bpe / MIB, "reduced output shape"
    if gflops is None:  # TraceLens has no model for the op; tlsql's formula re-derived here
        if op in ("aten::gelu", "aten::tanh", "aten::cos", "aten::sin", "aten::silu", "aten::exp", "aten::neg"):
            return n / 1e9, 2 * n * bpe / MIB, "tlsql only: unary"
        if op in ("aten::eq", "aten::ne", "aten::lt", "aten::gt", "aten::le", "aten::ge"):
            y = dims[1] if has(1) else []
            out = prod(max(a, b) for a, b in zip([1] * (len(y) - len(x)) + x, [1] * (len(x) - len(y)) + y))
            moved = n * bpe + (prod(y) * BPE[types[1]] if has(1) else 0) + out * 1
            return out / 1e9, moved / MIB, "tlsql only: comparison, bool output"
        if op in ("aten::all", "aten::any"):
            out = reduced_numel(x, conc[1] if len(conc) > 1 else "", len(conc) > 2 and conc[2] == "True")
            return n / 1e9, (n + out) * bpe / MIB, "tlsql only: reduction"
        if op == "aten::index_select":
            idx, d = prod(dims[2]), int(conc[1])
            out = n // x[d] * idx
            return 0.0, (idx * BPE[types[2]] + 2 * out * bpe) / MIB, "tlsql only: gather"
        if op == "aten::fill_":
            return 0.0, n * bpe / MIB, "tlsql only: fill writes"
        return None, None, "neither models it"
    return gflops, mib, "same"


def tracelens_perf(name, ref, shared, folder, links_hip_memset=True):
    """flops(uid) / bytes(uid) of every row of TraceLens's unified_perf_summary.csv (every op it
    lists, at its ex_UID) against that sheet's GFLOPS and Data Moved (MB) (which is MiB), within
    1e-6 relative, after tlsql_perf's documented differences; and the busy time summed over each
    row's (name, shapes, types, strides, concrete inputs) group against Kernel Time (µs)_sum
    (TraceLens sums float32 µs, so 1e-4). Wrappers (aten::layer_norm over native_layer_norm)
    report the work beneath them, as TraceLens does. Left out: TraceLens's "(Synthetic Op)" rows
    (a pseudo-op per kernel an op launches beside its children, at a UID past the trace's events).
    links_hip_memset=False: TraceLens's kernel time leaves out the memsets of hipMemsetAsync calls
    (it links no such call on that trace: its figure is exactly the kernels' durations), so the
    busy time compared there is gpu_time less the memsets beneath each op."""
    rows = []
    path = os.path.join(shared, "expected/tracelens", folder, "unified_perf_summary.csv")
    for r in csv.DictReader(open(path, encoding="utf-8")):
        if r["name"].endswith("(Synthetic Op)"):
            continue
        lit = lambda k: list(ast.literal_eval(r[k])) if r[k] else []  # noqa: E731
        dims = [list(d) for d in lit("Input Dims")]
        num = lambda k: float(r[k]) if r[k] not in ("", "nan") else None  # noqa: E731
        g, m, note = tlsql_perf(r["name"], dims, lit("Input type"), lit("Concrete Inputs"), num("GFLOPS"),
                                num("Data Moved (MB)"))
        rows.append((int(r["ex_UID"]), r["name"], g, m, float(r["Kernel Time (µs)_sum"]), note))
    sql = lambda v: "NULL" if v is None else repr(v)  # noqa: E731
    values = ",\n  ".join(f"({u}, '{n}', {sql(g)}, {sql(m)}, {k!r}, '{note}')" for u, n, g, m, k, note in rows)
    busy = "gpu_time(o.uid)"
    if not links_hip_memset:
        busy += (" - coalesce((SELECT sum(g.dur) FROM descendants(o.uid) d JOIN event g ON g.uid = d.uid"
                 " AND g.kind = 'memset'), 0)")
    query = f"""
-- Perf models against every row of TraceLens's unified_perf_summary for this trace
-- (tests/tools/make_expected.py, tlsql_perf: the expected differences, each re-derived from the args).
WITH ref(uid, name, gflops, mib, kernel_us_sum, note) AS (VALUES
  {values}),
mine AS (SELECT r.*, flops(r.uid) / 1e9 AS f, bytes(r.uid) / 1048576.0 AS b FROM ref r),
groups AS (SELECT r.uid, sum({busy}) / 1e3 AS us FROM ref r JOIN op e ON e.uid = r.uid
           JOIN op o ON o.name = e.name AND o.input_dims IS e.input_dims AND o.input_types IS e.input_types
            AND o.input_strides IS e.input_strides AND o.concrete_inputs IS e.concrete_inputs GROUP BY r.uid)
SELECT m.uid, m.name, m.note,
       coalesce(abs(m.f - m.gflops) <= 1e-6 * m.gflops + 1e-15, m.f IS m.gflops) AS flops_ok,
       coalesce(abs(m.b - m.mib) <= 1e-6 * m.mib + 1e-15, m.b IS m.mib) AS bytes_ok,
       abs(g.us - m.kernel_us_sum) <= 1e-4 * m.kernel_us_sum AS kernel_time_ok
FROM mine m JOIN groups g ON g.uid = m.uid ORDER BY m.uid;
"""
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "traces"), "w").write(ref + "\n")
    open(os.path.join(d, "query.sql"), "w").write(query.strip() + "\n")
    out = [(u, n, note, 1, 1, 1) for u, n, g, m, k, note in sorted(rows)]
    open(os.path.join(d, "expected.csv"), "w").write(
        csv_text(["uid", "name", "note", "flops_ok", "bytes_ok", "kernel_time_ok"], out))


def tracelens_ops_summary(name, ref, shared, folder):
    """op_summary (the ops report) against TraceLens's ops_summary.csv: GPU time per op (float32
    µs sums there, hence 1e-4 relative), count and share. TraceLens keys attention by its
    launcher aten::_flash_attention_forward; tlsql by the op that carries the model above it."""
    rows = list(csv.DictReader(open(os.path.join(shared, "expected/tracelens", folder, "ops_summary.csv"))))
    rename = {"aten::_flash_attention_forward": "aten::_scaled_dot_product_flash_attention",
              "aten::cudnn_convolution": "aten::convolution"}
    ref_rows = [[rename.get(r["name"], r["name"]), float(r["total_direct_kernel_time_sum"]), int(r["Count"]),
                 float(r["Percentage (%)"])] for r in rows]
    # Falconsai: TraceLens lists the convolution's bias add (aten::add_ launched inside it) as its
    # own op; tlsql counts it in the modeled aten::convolution (time and share, not count).
    conv = [r for r in ref_rows if r[0] == "aten::convolution"]
    if conv:
        add_ = [r for r in ref_rows if r[0] == "aten::add_"]
        for r in add_:
            conv[0][1] += r[1]
            conv[0][3] += r[3]
        ref_rows = [r for r in ref_rows if r[0] != "aten::add_"]
    values = ",\n  ".join(f"('{n}', {t!r}, {c}, {p!r})" for n, t, c, p in ref_rows)
    query = f"""
-- op_summary (what .report ops prints) against TraceLens's ops_summary.csv (see make_expected.py).
WITH ref(name, us, count, pct) AS (VALUES
  {values})
SELECT ref.name, o.count = ref.count AS count_ok, abs(o.gpu_us - ref.us) <= 1e-4 * ref.us + 1e-3 AS time_ok,
       abs(o.gpu_pct - ref.pct) <= 0.01 AS share_ok
FROM ref LEFT JOIN op_summary o ON o.name = ref.name ORDER BY ref.us DESC;
"""
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "traces"), "w").write(ref + "\n")
    open(os.path.join(d, "query.sql"), "w").write(query.strip() + "\n")
    out = [(n, 1, 1, 1) for n, t, c, p in sorted(ref_rows, key=lambda r: -r[1])]
    open(os.path.join(d, "expected.csv"), "w").write(csv_text(["name", "count_ok", "time_ok", "share_ok"], out))


# The diff report's columns, and the parameters that make it HTA's table: every row, by name, raw
# names, no totals rows.
DIFF_HEADER = ["name", "Control_counts", "Control_total_duration", "Test_counts", "Test_total_duration",
               "diff_counts", "diff_duration", "counts_change_categories", "ops_diff", "device", "raw_name"]
HTA_DIFF_PARAMS = [".parameter set @sort 'name'", ".parameter set @top 'all'", ".parameter set @normalize 0",
                   ".parameter set @totals 0"]


def count_text(x):
    """A count as the diff report prints it: an integer (HTA's pandas writes 386.0)."""
    v = float(x)
    assert v == int(v), x
    return str(int(v))


def hta_compare(name, control_ref, test_ref, shared, tag):
    """HTA TraceDiff.compare_traces / ops_diff (../shared/expected/hta, iteration 1010 on both sides) as
    the `diff` report's rows: one block per device filter and name mode. Numbers are HTA's: counts
    as integers, durations as floats (pandas writes counts as floats, and the all-present control
    columns of a GPU-only frame as ints). The ops_diff
    column is HTA's ops_diff file where HTA wrote one (full names), else HTA's category rule."""
    ref_dir = os.path.join(shared, "expected", "hta")
    header = DIFF_HEADER
    query, rows = HTA_DIFF_PARAMS + [".parameter set @control_step 1010", ".parameter set @test_step 1010"], []
    for device in ("ALL", "CPU", "GPU"):
        for short in (0, 1):
            query += [f".parameter set @device '{device}'", f".parameter set @short {short}", ".report diff"]
            suffix = "_short" if short else ""
            ref = list(csv.reader(open(os.path.join(ref_dir, f"compare_{tag}_{device}{suffix}.csv"))))
            gpu = {r[0] for r in csv.reader(open(os.path.join(ref_dir, f"compare_{tag}_GPU{suffix}.csv")))}
            category = {}
            opsdiff = os.path.join(ref_dir, f"opsdiff_{tag}_{device}.txt")
            if not short:
                for line in open(opsdiff):
                    cat, _, names = line.rstrip("\n").split("\t")
                    for n in names.split(" | ") if names else []:
                        category[n] = cat
            if rows:
                rows.append(header)  # each .report prints its header
            for r in ref[1:]:
                cc, tc, diff = float(r[1]), float(r[3]), float(r[5])
                rule = ("added" if cc == 0 and tc > 0 else "deleted" if cc > 0 and tc == 0 else
                        "increased" if diff > 0 else "decreased" if diff < 0 else "unchanged")
                cat = category.get(r[0], rule)
                assert short or category.get(r[0]) == rule, (r[0], category.get(r[0]), rule)
                # device: GPU when HTA's GPU-only comparison has the name; raw_name: empty, as names
                # are not normalized here (@normalize 0).
                rows.append([r[0]] + [count_text(x) if i % 2 == 0 else repr(float(x)) for i, x in enumerate(r[1:7])] +
                            [r[7], cat, "GPU" if r[0] in gpu else "CPU", ""])
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "traces"), "w").write(control_ref + "\n")
    open(os.path.join(d, "args"), "w").write("--diff\n" + test_ref + "\n")
    open(os.path.join(d, "query.sql"), "w").write(
        "-- HTA TraceDiff.compare_traces + ops_diff, iteration 1010 vs 1010 (../shared/expected/hta)\n" +
        "\n".join(query) + "\n")
    open(os.path.join(d, "expected.csv"), "w").write(csv_text(header, rows))


def gemm_launches(ref, shared):
    """aten::addmm / aten::bmm ops of a trace and the kernels each launched: kernels whose runtime
    call (same correlation id) lies inside the op's interval on the op's thread. Times in ns."""
    ev = [e for e in load(resolve(ref, shared)) if isinstance(e, dict) and e.get("ph") == "X"]
    kernels = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "kernel" and "correlation" in e.get("args", {})}
    runtime = [e for e in ev if e.get("cat") == "cuda_runtime" and e.get("args", {}).get("correlation") in kernels]
    ops = []
    for op in ev:
        if op.get("cat") != "cpu_op" or op.get("name") not in ("aten::addmm", "aten::bmm"):
            continue
        t0, t1 = ns(op["ts"]), ns(op["ts"]) + ns(op["dur"])
        ks = [kernels[r["args"]["correlation"]] for r in runtime
              if r["pid"] == op["pid"] and r["tid"] == op["tid"] and t0 <= ns(r["ts"]) and ns(r["ts"]) + ns(r["dur"]) <= t1]
        ops.append((op, ks))
    return ev, ops


def busy_ns(ks):  # union of the kernels' intervals
    iv = sorted((ns(k["ts"]), ns(k["ts"]) + ns(k["dur"])) for k in ks)
    total, end = 0, None
    for a, b in iv:
        if end is None or a > end:
            total, end = total + b - a, b
        elif b > end:
            total, end = total + b - end, b
    return total


def gemm_model(op):
    """2·M·N·K (+M·N for addmm's bias) FLOPs and (MK + KN (+N) + MN)·4 bytes (fp32), × batch."""
    d = op["args"]["Input Dims"]
    if op["name"] == "aten::addmm":
        (m, k), (_, n), bat, bias = d[1], d[2], 1, True
    else:
        (bat, m, k), (_, _, n), bias = d[0], d[1], False
    flops = bat * (2 * m * n * k + (m * n if bias else 0))
    nbytes = bat * ((m * k + k * n + (n if bias else 0)) * 4 + m * n * 4)
    return flops, nbytes


def sql_float(x):  # how tlsql prints round(x, places): a double
    return repr(float(x))


def diff_shapes_gemm(name, control_ref, test_ref, shared):
    """The diff_shapes report for the GEMM ops (@name 'aten::%mm'): per (name, Input Dims, Input
    type) counts and GPU time (union of each op's kernels) per side, from the raw JSON."""
    sides = []
    for ref in (control_ref, test_ref):
        _, ops = gemm_launches(ref, shared)
        agg = {}
        for op, ks in ops:
            key = (op["name"], json.dumps(op["args"]["Input Dims"], separators=(",", ":")),
                   json.dumps(op["args"]["Input type"], separators=(",", ":"), ensure_ascii=False))
            n, t = agg.get(key, (0, 0))
            agg[key] = (n + 1, t + busy_ns(ks))
        sides.append(agg)
    a, b = sides
    names_a, names_b = {k[0] for k in a}, {k[0] for k in b}
    rows = []
    for key in set(a) | set(b):
        (na, ta), (nb, tb) = a.get(key, (0, 0)), b.get(key, (0, 0))
        change = ("same shape" if key in a and key in b else "new shape" if key[0] in names_a and key not in a
                  else "op added" if key not in a else "shape gone" if key[0] in names_b else "op removed")
        rows.append((abs(tb - ta), key, na, ta, nb, tb, change))
    rows.sort(key=lambda r: (-r[0], r[1][0].encode(), r[1][1].encode(), r[1][2].encode()))
    out = [list(key) + [na, sql_float(round(Decimal(ta) / 1000, 3)), nb, sql_float(round(Decimal(tb) / 1000, 3)),
                        nb - na, sql_float(round(Decimal(tb - ta) / 1000, 3)), change]
           for _, key, na, ta, nb, tb, change in rows]
    header = ["name", "input_dims", "input_types", "main_count", "main_gpu_us", "other_count", "other_gpu_us",
              "diff_count", "diff_gpu_us", "change"]
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "traces"), "w").write(control_ref + "\n")
    open(os.path.join(d, "args"), "w").write("--diff\n" + test_ref + "\n")
    open(os.path.join(d, "query.sql"), "w").write(
        "-- diff_shapes over the GEMMs, against make_expected.py's own walk of the JSON\n"
        ".parameter set @name 'aten::%mm'\n.parameter set @top 1000\n.report diff_shapes\n")
    open(os.path.join(d, "expected.csv"), "w").write(csv_text(header, out))


def diff_kernels_gemm(name, control_ref, test_ref, shared, peak_tflops, peak_tbps):
    """The diff_kernels report for the GEMM kernels (@name '%gemm%') from the raw JSON: a kernel has
    FLOPs / bytes when the addmm / bmm that launched it launched no other kernel; per name, TFLOP/s
    (GB/s) = the FLOPs (bytes) of the launches that have them over those launches' time (issue 40,
    item 1: one definition in every report), flops_pct / bw_pct = those rates over the peaks."""
    sides = []
    for ref in (control_ref, test_ref):
        ev, ops = gemm_launches(ref, shared)
        model = {}
        for op, ks in ops:
            if len(ks) == 1:
                model[id(ks[0])] = gemm_model(op)
        stats = {}
        for k in ev:
            if k.get("cat") != "kernel" or "gemm" not in k["name"].lower():
                continue
            st = stats.setdefault(k["name"], {"n": 0, "dur": 0, "f": 0, "b": 0, "t": 0, "m": 0})
            d = ns(k["dur"])
            st["n"] += 1
            st["dur"] += d
            if id(k) in model:
                f, b = model[id(k)]
                st["f"] += f
                st["b"] += b
                st["t"] += d
                st["m"] += 1
        sides.append(stats)
    a, b = sides

    def cols(st, places=(3, 1, 3, 2, 2)):
        if st is None:
            return [""] * 6
        tf = Decimal(st["f"]) / st["t"] / 1000 if st["m"] and st["t"] else None  # FLOP/ns = GFLOP/s
        tb = Decimal(st["b"]) / st["t"] / 1000 if st["m"] and st["t"] else None
        vals = [tf, None if tb is None else tb * 1000, Decimal(st["dur"]) / st["n"] / 1000,
                None if tf is None else 100 * tf / Decimal(peak_tflops), None if tb is None else 100 * tb / Decimal(peak_tbps)]
        return [st["n"]] + ["" if v is None else sql_float(round(v, p)) for v, p in zip(vals, places)]

    rows = []
    for kname in set(a) | set(b):
        sa, sb = a.get(kname), b.get(kname)
        speed = ""
        if sa and sb:
            speed = sql_float(round((Decimal(sa["dur"]) / sa["n"]) / (Decimal(sb["dur"]) / sb["n"]), 3))
        total = (sa["dur"] if sa else 0) + (sb["dur"] if sb else 0)
        rows.append((-total, kname.encode(), [kname] + cols(sa) + cols(sb) + [speed]))
    rows.sort(key=lambda r: r[:2])
    header = ["name"] + [f"{s}_{c}" for s in ("main", "other")
                         for c in ("count", "tflops", "gbps", "mean_us", "flops_pct", "bw_pct")] + ["speedup"]
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "traces"), "w").write(control_ref + "\n")
    open(os.path.join(d, "args"), "w").write("--diff\n" + test_ref + "\n")
    open(os.path.join(d, "query.sql"), "w").write(
        f"-- diff_kernels over the GEMM kernels; peaks: {peak_tflops} TFLOP/s fp32, {peak_tbps} TB/s HBM\n"
        ".parameter set @name '%gemm%'\n.parameter set @top 1000\n.report diff_kernels\n")
    open(os.path.join(d, "expected.csv"), "w").write(csv_text(header, [r[2] for r in rows]))


def hta_compare_ranks(name, control_ref, test_ref, shared, tag):
    """The control side loaded twice (two ranks' worth of identical traces): @agg 'sum' (HTA's way)
    doubles HTA's control counts and durations, @agg 'avg' gives HTA's numbers back (counts then
    averages: floats)."""
    ref = list(csv.reader(open(os.path.join(shared, "expected", "hta", f"compare_{tag}_ALL.csv"))))
    gpu = {r[0] for r in csv.reader(open(os.path.join(shared, "expected", "hta", f"compare_{tag}_GPU.csv")))}
    header = DIFF_HEADER
    rows = []
    for k in (2, 1):
        if rows:
            rows.append(header)
        for r in ref[1:]:
            cc, cd, tc, td = float(r[1]) * k, float(r[2]) * k, float(r[3]), float(r[4])
            sign = "+" if tc > cc else "-" if tc < cc else "="
            cat = ("added" if cc == 0 and tc > 0 else "deleted" if cc > 0 and tc == 0 else
                   "increased" if tc > cc else "decreased" if tc < cc else "unchanged")
            count = repr if k == 1 else count_text
            rows.append([r[0]] + [count(cc), repr(cd), count(tc), repr(td), count(tc - cc), repr(td - cd)] +
                        [sign, cat, "GPU" if r[0] in gpu else "CPU", ""])
    d = os.path.join(CASES, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "traces"), "w").write(control_ref + "\n" + control_ref + "\n")
    open(os.path.join(d, "args"), "w").write("--diff\n" + test_ref + "\n")
    open(os.path.join(d, "query.sql"), "w").write(
        "-- two copies of the control trace: summed (HTA) then averaged over ranks\n" + "\n".join(HTA_DIFF_PARAMS) +
        "\n.parameter set @control_step 1010\n.parameter set @test_step 1010\n.parameter set @control_rank 'all'\n"
        ".report diff\n.parameter set @agg 'avg'\n.report diff\n")
    open(os.path.join(d, "expected.csv"), "w").write(csv_text(header, rows))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shared", default=os.path.join(HERE, "..", "..", "..", "shared"))
    a = p.parse_args()
    s = a.shared
    event_counts("counts_bert", "data:tracelens_h100_bert_small_uncased.json.gz", s)
    event_counts("counts_legacy_v100", "shared:v100_resnet50_2021_legacy.pt.trace.json.gz", s)
    event_counts("counts_mi300_resnet", "shared:tracelens/mi300/resnet_act_checkpoint.json.gz", s)
    event_counts("counts_vllm_cudagraph", "shared:h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz", s)
    event_counts("counts_cpu_only_2022", "shared:cpu_only_seq2seq_2022.json", s)
    event_counts("counts_kineto_2021", "shared:kineto_gpu_metrics_input_2021.json", s)
    exact_ns("exact_ns_bert", "data:tracelens_h100_bert_small_uncased.json.gz", s, [0, 1, 716, 2103, 2135, 2547])
    exact_ns("exact_ns_float_ns", "shared:hta/ns_resolution_rank0.json.gz", s, [0, 5, 1000, 40000, 68000])
    gpu_linking("link_bert", "data:tracelens_h100_bert_small_uncased.json.gz", s)
    gpu_linking("link_mi300_resnet", "shared:tracelens/mi300/resnet_act_checkpoint.json.gz", s)
    gpu_linking("link_vllm_cudagraph", "shared:h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz", s)
    gpu_linking("link_mi300_hipgraph", "shared:tracelens/mi300/vllm_decode_graph_execution.json.gz", s)
    gpu_linking("link_legacy_v100", "shared:v100_resnet50_2021_legacy.pt.trace.json.gz", s)
    gpu_linking("link_trace_diff_test", "shared:hta/trace_diff/test.json.gz", s)
    steps("steps_trace_diff_control", "shared:hta/trace_diff/control.json.gz", s)
    steps("steps_legacy_v100", "shared:v100_resnet50_2021_legacy.pt.trace.json.gz", s)
    forward_links("fwd_mi250_minitoy", "data:hta_amd_mi250_minitoy.json.gz", s)
    forward_links("fwd_t4_amp", "shared:t4_train_amp.pt.trace.json", s)
    tracelens_perf("perf_tracelens_bert", "data:tracelens_h100_bert_small_uncased.json.gz", s,
                   "h100_gaunernst_bert-small-uncased")
    tracelens_perf("perf_tracelens_falconsai", "shared:tracelens/h100/Falconsai_nsfw_image_detection.json.gz", s,
                   "h100_Falconsai_nsfw_image_detection")
    tracelens_perf("perf_tracelens_qwen", "shared:tracelens/h100/Qwen1.5_0.5B_chat.json.gz", s, "h100_Qwen1.5_0.5B_chat")
    tracelens_perf("perf_tracelens_norms", "shared:tracelens/mi300/normalization_layer_test.json.gz", s,
                   "mi300_normalization_layer_test", links_hip_memset=False)
    tracelens_ops_summary("ops_tracelens_bert", "data:tracelens_h100_bert_small_uncased.json.gz", s,
                          "h100_gaunernst_bert-small-uncased")
    tracelens_ops_summary("ops_tracelens_falconsai", "shared:tracelens/h100/Falconsai_nsfw_image_detection.json.gz", s,
                          "h100_Falconsai_nsfw_image_detection")
    tracelens_launchers("launchers_tracelens_bert", "data:tracelens_h100_bert_small_uncased.json.gz", s,
                        os.path.join(s, "expected/tracelens/h100_gaunernst_bert-small-uncased/ops_unique_args.csv"))
    tracelens_launchers("launchers_tracelens_falconsai", "shared:tracelens/h100/Falconsai_nsfw_image_detection.json.gz", s,
                        os.path.join(s, "expected/tracelens/h100_Falconsai_nsfw_image_detection/ops_unique_args.csv"))
    hta_compare("diff_hta_trace_compare", "data:hta_trace_compare_base.json.gz", "data:hta_trace_compare_test.json.gz",
                s, "trace_compare")
    hta_compare_ranks("diff_ranks_sum_avg", "data:hta_trace_compare_base.json.gz",
                      "data:hta_trace_compare_test.json.gz", s, "trace_compare")
    moe4, moe8 = "shared:a100_switch_moe_batch4.json.gz", "shared:a100_switch_moe_batch8.json.gz"
    diff_shapes_gemm("diff_shapes_moe", moe4, moe8, s)
    # NVIDIA A100 PCIe 80GB datasheet: FP32 19.5 TFLOP/s, HBM2e 1,935 GB/s (the trace's GPU).
    diff_kernels_gemm("diff_kernels_moe", moe4, moe8, s, "19.5", "1.935")
    hta_compare("diff_hta_trace_diff", "shared:hta/trace_diff/control.json.gz", "shared:hta/trace_diff/test.json.gz", s,
                "trace_diff")


if __name__ == "__main__":
    main()
