#!/usr/bin/env python3
"""Numbers a reader can trust at a glance (issue 40, items 11-13), through the real binary:
- tables that fit the terminal: the reports run in a pseudo-terminal 80 and 100 columns wide; no
  line is wider, and every number of the report (read from its --json output, formatted here by
  the aligned modes' documented rule) appears whole on one line, never split; kernel names are cut
  to 3 lines; .help and .reports wrap under a hanging indent;
- --json writes JSON-valued columns (shapes, the summary's events, a diff's kernel names) as
  JSON, checked against the raw trace; CSV keeps the text;
- did-you-mean for report names, dot-commands, .plot kinds and modes.
usage: readable_output.py TLSQL DATA_DIR SHARED_DIR"""
import csv, fcntl, gzip, io, json, math, os, pty, re, select, struct, subprocess, sys, termios, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared = sys.argv[1:4]
bert = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
base, test = (os.path.join(data, f"hta_trace_compare_{s}.json.gz") for s in ("base", "test"))


def on_terminal(cols, *args):
    """What a terminal `cols` wide shows of `tlsql -q ARGS` (its pty's size set before exec)."""
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
        os.environ["TERM"] = "xterm"
        os.execv(tlsql, [tlsql, "-q", *args])
    out, end = b"", time.time() + 120
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], end - time.time())
        if not r:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode("utf-8", errors="replace").replace("\r\n", "\n")


def run(*args):
    return subprocess.run([tlsql, "-q", *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def readable(v):
    """A REAL as the aligned modes show it (docs/shell.md): 3 decimals from 1 up, thousands
    separated; below 1, 3 significant digits; trailing zeros dropped down to one decimal."""
    if v == 0:
        return "0.0"
    a = abs(v)
    decimals = 3 if a >= 1 else min(15, 2 - math.floor(math.log10(a)))
    s = f"{v:.{decimals}f}"
    while s.endswith("0") and s[-2] != ".":
        s = s[:-1]
    sign, s = ("-", s[1:]) if s.startswith("-") else ("", s)
    whole, frac = s.split(".")
    return sign + f"{int(whole):,}" + "." + frac


def numbers(rows):
    """Every number cell of a report's --json rows as the aligned modes print it."""
    out = set()
    for r in rows:
        for v in r.values():
            if isinstance(v, bool) or v is None:
                continue
            if isinstance(v, int):
                out.add(str(v))
            elif isinstance(v, float) and math.isfinite(v):
                out.add(readable(v))
    return out


def fits(label, cols, args):
    """The report in a terminal `cols` wide: no line wider, every number whole on one line."""
    r = run("--json", *args)
    rows = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else []
    shown = on_terminal(cols, *args)
    lines = shown.split("\n")
    wide = [l for l in lines if len(l) > cols]
    check(rows and not wide, f"{label} at {cols} columns: {len(lines)} lines, none wider "
                             f"({len(wide)} are: {wide[:1]})")
    split = sorted(n for n in numbers(rows) if not any(n in l for l in lines))
    check(not split, f"{label} at {cols} columns: its {len(numbers(rows))} numbers each whole on a line "
                     f"(not: {split[:5]})")
    return rows, lines


reports = [("bert", [bert], ["ops", "summary", "gemm", "mfu", "kernels", "launch", "timeline"]),
           ("trace_compare diff", [base, "--diff", test], ["diff", "diff_tree_ops", "diff_tree_summary"])]
qwen = os.path.join(shared, "traces", "tracelens", "h100", "Qwen1.5_0.5B_chat.json.gz")
if os.path.exists(qwen):
    reports.append(("Qwen1.5", [qwen], ["ops", "summary", "gemm", "mfu", "kernels"]))
    reports.append(("Qwen1.5 diff", [qwen, "--diff", qwen], ["diff_tree_ops", "diff_tree_summary"]))
else:
    print(f"skip: {qwen} absent")
for label, traces, names in reports:
    for name in names:
        for cols in (80, 100):
            rows, lines = fits(f"{label} {name}", cols, traces + ["--report", name])
            if name == "kernels" and lines and lines[0].startswith("┌"):
                # A box: each row at most 3 lines (kernel names cut with an ellipsis), plus the
                # header (up to 3 lines: wrapped column names) and 3 rules.
                body = [l for l in lines if l.startswith("│")]
                check(len(body) <= 3 * len(rows) + 3, f"{label} kernels at {cols}: {len(body)} lines for "
                                                       f"{len(rows)} kernels (3 a kernel at most)")

# A text column cut to fit ends in an ellipsis; .mode line shows the whole name.
long_name = max((r["name"] for r in json.loads(run("--json", bert, "--report", "kernels").stdout)), key=len)
shown = on_terminal(100, bert, "--report", "kernels")
check(len(long_name) > 200 and "…" in shown and long_name not in shown.replace("\n", ""),
      f"kernels at 100: a {len(long_name)}-character name is cut, with an ellipsis")
shown = on_terminal(100, bert, "-c", ".mode line", "--report", "kernels")
check(long_name in shown, "kernels in line mode: the whole name")

# .help and .reports: every line within the terminal; an entry's text continues under its column
# (the dot-commands' at column 24).
for cols in (80, 100):
    for cmd in (".help", ".reports"):
        lines = on_terminal(cols, bert, "-c", cmd).split("\n")
        wide = [l for l in lines if len(l) > cols]
        check(len(lines) > 20 and not wide, f"{cmd} at {cols}: {len(lines)} lines, none wider ({wide[:1]})")
    lines = on_terminal(cols, bert, "-c", ".help").split("\n")
    section = lines[1:lines.index("")]
    bad = [l for l in section if not (l.startswith(".") or l.startswith(" " * 24) and l[24] != " ")]
    check(section and not bad, f".help at {cols}: the dot-commands' text wraps under column 24 ({bad[:2]})")
    lines = [l for l in on_terminal(cols, bert, "-c", ".reports").split("\n") if l]
    indent = len(re.match(r"\S+\s+", lines[0]).group(0))
    bad = [l for l in lines if not (re.match(r"\S", l) or l.startswith(" " * indent) and l[indent] != " ")]
    check(not bad, f".reports at {cols}: the text wraps under column {indent} ({bad[:2]})")
piped = run(bert, "-c", ".reports").stdout.split("\n")
check(all(re.match(r"\S", l) for l in piped if l), ".reports piped: one line a report (scripts cut its first word)")


# ---- --json: JSON-valued columns are JSON --------------------------------------------------------
def raw(path):
    with (gzip.open(path) if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


events = raw(bert)
addmm = {json.dumps(e["args"]["Input Dims"]) for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::addmm"}
gemm = [r for r in json.loads(run("--json", bert, "--report", "gemm").stdout) if r["name"] == "aten::addmm"]
check(gemm and all(isinstance(r["input_dims"], list) and isinstance(r["input_types"], list) for r in gemm) and
      {json.dumps(r["input_dims"]) for r in gemm} == addmm,
      f"--json gemm: input_dims are the raw JSON's Input Dims of aten::addmm, as arrays ({len(addmm)} shapes)")
gemm_csv = list(csv.DictReader(io.StringIO(run("--csv", bert, "--report", "gemm").stdout)))
check({r["input_dims"] for r in gemm_csv if r["name"] == "aten::addmm"} ==
      {json.dumps(json.loads(d), separators=(",", ":")) for d in addmm},
      "--csv gemm: input_dims stay the minified JSON text")
summary = json.loads(run("--json", bert, "--report", "summary").stdout)
ev = summary[0]["events"] if summary else None
check(isinstance(ev, dict) and ev.get("kernel") == sum(e.get("cat") == "kernel" for e in events) and
      ev.get("cpu_op") == sum(e.get("cat") == "cpu_op" for e in events),
      f"--json summary: events is an object, its kernel and cpu_op counts the raw JSON's ({ev})")
ops = json.loads(run("--json", base, "--diff", test, "--report", "diff_tree_ops").stdout)
check(ops and all(isinstance(r["kernel_names_trace1"], list) for r in ops),
      "--json diff_tree_ops: kernel_names_trace1 are arrays")
r = json.loads(run("--json", bert, "-c", "SELECT '[memory]' AS a, '[1, 2' AS b, '{\"k\": [1]}' AS c, 'x' AS d").stdout)
check(r == [{"a": "[memory]", "b": "[1, 2", "c": {"k": [1]}, "d": "x"}],
      f"--json: only a text that is a JSON array or object is written as JSON ({r})")

# ---- did you mean -------------------------------------------------------------------------------
for args, want in [(["--report", "opps"], "no report 'opps': did you mean ops?"),
                   (["--report", "sumary"], "did you mean summary?"),
                   (["--report", "diff_tree_sumary"], "did you mean diff_tree_summary?"),
                   (["-c", ".tabels"], "unknown command '.tabels': did you mean .tables?"),
                   (["-c", ".reprot ops"], "did you mean .report?"),
                   (["-c", ".plot rooflne r.svg"], "no plot kind 'rooflne': did you mean roofline?"),
                   (["-c", ".mode boxx"], "unknown mode 'boxx': did you mean box?")]:
    r = run(bert, *args)
    check(r.returncode == 1 and want in r.stderr and r.stderr.count("\n") == 1,
          f"{' '.join(args)}: one line, exit 1, '{want}' ({r.stderr.strip()})")
r = run(bert, "--report", "zzzz")
check(r.returncode == 1 and "did you mean" not in r.stderr and "--report list" in r.stderr,
      f"--report zzzz: nothing close, no suggestion ({r.stderr.strip()})")

finish()
