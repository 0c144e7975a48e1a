#!/usr/bin/env python3
"""`tlsql TRACE --html FILE` (and with --diff) through the real binary:
- the page is self-contained: no script, no stylesheet link, no http(s) or protocol-relative
  reference; every picture is an inline data: URI, an SVG that parses (or a PNG for huge ones);
- it holds the sections and tables it promises, and the ops / timeline tables carry exactly the
  rows `--report ops` / `--report timeline` print;
- with --diff: the two diff charts and the diff table, largest |diff_duration| first;
- headless Chromium (scripts/screenshot_html.sh) opens it with no console message and writes a
  screenshot that decodes (skipped, saying so, when chromium is not installed);
- a CPU-only trace: the GPU sections (roofline, GPU timeline, GPU time breakdown, kernels) each
  say they could not be produced and why, the command exits 1 saying how many (docs/pictures.md),
  and the ops section is the cpu_ops report (what --report ops prints for such a trace);
- a bad output path: one error line, exit 1, no file.
usage: check_html.py TLSQL DATA_DIR SHARED_DIR SCRIPTS_DIR WORK_DIR"""
import base64, csv, html.parser, io, os, shutil, subprocess, sys
import xml.etree.ElementTree as ET
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared, scripts, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.refs, self.images, self.ids, self.tables = [], [], [], [], []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        for k in ("src", "href", "action", "data"):
            if k in a:
                self.refs.append(a[k])
        if tag == "img":
            self.images.append(a.get("src", ""))
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "table":
            self.tables.append([])
        if tag == "tr":
            self.tables[-1].append([])
        if tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, d):
        if self._cell is not None:
            self._cell += d


def render(args, name, rc=0):
    out = os.path.join(work, name)
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([tlsql] + args + ["-q", "--html", out], capture_output=True, text=True, timeout=900)
    check(r.returncode == rc and os.path.exists(out), f"{name}: written, exit {rc} {r.stderr.strip()}")
    render.stderr = r.stderr
    p = Page()
    with open(out, encoding="utf-8") as f:
        p.feed(f.read())
    check("script" not in p.tags and "link" not in p.tags and "iframe" not in p.tags, f"{name}: no script, link or iframe")
    external = [r for r in p.refs if r.startswith(("http:", "https:", "//", "file:", "ftp:"))]
    check(not external, f"{name}: no external references {external[:3]}")
    ok_images = 0
    for src in p.images:
        svg, png = "data:image/svg+xml;base64,", "data:image/png;base64,"
        if src.startswith(svg):
            ok_images += ET.fromstring(base64.b64decode(src[len(svg):])).tag.endswith("svg")
        elif src.startswith(png):  # a picture whose SVG would pass 4 MiB
            ok_images += base64.b64decode(src[len(png):])[:8] == b"\x89PNG\r\n\x1a\n"
    check(ok_images == len(p.images), f"{name}: {ok_images} inline pictures decode")
    return out, p


def report_rows(args, name):
    r = subprocess.run([tlsql] + args + ["-q", "--csv", "--report", name], capture_output=True, text=True, timeout=900)
    return list(csv.reader(io.StringIO(r.stdout)))


def same_table(table, rows):
    """The HTML table's cells equal the report's CSV (NULL shows as 'NULL', an empty CSV field)."""
    return len(table) == len(rows) and all(
        [("" if c == "NULL" else c) for c in t] == r for t, r in zip(table, rows))


bert = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")
page_path, p = render([bert], "bert.html")
check(len(p.images) == 2, f"bert.html: roofline and timeline pictures ({len(p.images)})")
check(all(s in p.ids for s in ("summary", "pictures", "timeline", "ops", "kernels")) and "diff" not in p.ids,
      "bert.html: summary, pictures, timeline, ops, kernels sections; no diff")
ops = report_rows([bert], "ops")
check(any(same_table(t, ops) for t in p.tables), f"bert.html: the ops table = --report ops ({len(ops) - 1} rows)")
timeline = report_rows([bert], "timeline")
check(any(same_table(t, timeline) for t in p.tables), "bert.html: the GPU time breakdown = --report timeline")
check(len(p.tables) == 5, f"bert.html: 5 tables (summary, health, timeline, ops, kernels): {len(p.tables)}")
kernels = report_rows([bert], "kernels")
check(any(same_table(t, kernels) for t in p.tables), "bert.html: the kernels table = --report kernels")
# The ops and kernels sections are made on a second connection (a copy of the main schema,
# Session::twin) while the first makes the rest; with an object in temp, which that copy would not
# have, everything is made on the one connection: the same page, byte for byte.
one_path, _ = render([bert, "-c", "CREATE TEMP VIEW keep_one_connection AS SELECT 1"], "bert_one_connection.html")
with open(page_path, "rb") as a, open(one_path, "rb") as b:
    check(a.read() == b.read(), "bert.html: the same page made on one connection")

base, test = (os.path.join(data, f"hta_trace_compare_{s}.json.gz") for s in ("base", "test"))
params = ["-c", ".parameter set @control_step all", "-c", ".parameter set @test_step all"]
diff_path, d = render([base, "--diff", test] + params, "diff.html")
check(len(d.images) == 6 and "diff" in d.ids,
      f"diff.html: roofline and timeline of both traces, the two diff charts ({len(d.images)})")
check(sum(1 for t in d.tables if t and "gpu_busy_pct" in t[0]) == 2, "diff.html: the summary of both traces")
diff = report_rows([base, "--diff", test] + params, "diff")
header, rows = diff[0], diff[1:]
k = header.index("diff_duration")
rows.sort(key=lambda r: (r[0] == "(total)", -abs(float(r[k]))))  # the report's totals rows last
check(any(t and t[0] == header and [x[0] for x in t[1:]] == [r[0] for r in rows] for t in d.tables),
      "diff.html: the diff table, largest |diff_duration| first, its totals last")
# The op-by-op comparison comes first (issue 21): the diff_tree_ops report, as --report prints it.
full = report_rows([base, "--diff", test] + params, "diff_tree_ops")
keep = [full[0].index(c) for c in ("name", "lowest_common_ancestor_name", "kernel_time_trace1_us",
                                   "kernel_time_trace2_us", "speedup", "delta_us", "kernel_names_trace1",
                                   "kernel_names_trace2")]
ops_tree = [[r[k] for k in keep] for r in full]
check(d.ids and d.ids[0] == "diff_tree" and d.tables and same_table(d.tables[0], ops_tree[:101]),
      f"diff.html: first section = --report diff_tree_ops ({d.ids[:2]})")

# A CPU-only trace: the four GPU sections cannot be produced; each says why on the page, the
# command exits 1 with one line saying how many; no picture; ops = the cpu_ops report.
for cpu in (os.path.join(shared, "traces", "hta", "cpu_only_rank34.json.gz"),
            os.path.join(shared, "traces", "cpu_only_seq2seq_2022.json")):
    if not os.path.exists(cpu):
        print(f"skip {cpu}: not present")
        continue
    name = "cpu_only_" + os.path.basename(cpu).split(".")[0] + ".html"
    cpu_path, c = render([cpu], name, rc=1)
    with open(cpu_path, encoding="utf-8") as f:
        text = f.read()
    why = "could not be produced: no GPU events (kernels, memcpys, memsets) in this trace"
    sections = ("Roofline", "GPU timeline", "The GPU time breakdown", "The kernels report")
    check(all(f"{w} {why}" in text for w in sections) and text.count("could not be produced") == 4,
          f"{name}: roofline, GPU timeline, GPU time breakdown and kernels each say why they are missing")
    lines = render.stderr.strip().splitlines()
    check(len(lines) == 1 and "4 section(s) could not be produced" in lines[0], f"{name}: one stderr line {lines}")
    check(not c.images, f"{name}: no picture ({len(c.images)})")
    cpu_ops = report_rows([cpu], "cpu_ops")
    check(len(cpu_ops) > 1 and any(same_table(t, cpu_ops) for t in c.tables),
          f"{name}: the ops section = --report cpu_ops ({len(cpu_ops) - 1} rows)")

# Bad output path: one line, exit 1, nothing written.
r = subprocess.run([tlsql, bert, "-q", "--html", "/nonexistent/dir/r.html"], capture_output=True, text=True)
check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "cannot write" in r.stderr,
      f"--html to a missing folder: {r.stderr.strip()}")

# The browser: no console messages, a screenshot that decodes.
if not shutil.which("chromium") and not shutil.which("chromium-browser"):
    print("SKIP: chromium is not installed (scripts/test.sh installs it); the page was not opened in a browser")
else:
    for page in (page_path, diff_path):
        png = page + ".png"
        r = subprocess.run([os.path.join(scripts, "screenshot_html.sh"), page, png, "1440", "3000"],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, f"{os.path.basename(page)}: opens in headless chromium, no console messages "
                                 f"{r.stderr.strip()[-300:]}")
        with open(png, "rb") as f:
            head = f.read(24)
        check(head[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(head[16:20], "big") == 1440,
              f"{os.path.basename(page)}: screenshot {png}")
    # Readable at 1400 px (issue 18 item 14): the browser lays the diff page out and a script added to
    # a copy (the page itself has none) records each table's header cells: no text column narrower
    # than 150 px (a kernel name was a 5-character column, 60 lines tall), and the diff_kernels
    # table, speedup included, within its box without scrolling.
    measure = diff_path + ".measure.html"
    with open(diff_path, encoding="utf-8") as f:
        page_text = f.read()
    script = """<script>
const out = [];
for (const t of document.querySelectorAll('table')) {
  const box = t.parentElement.getBoundingClientRect();
  out.push({visible: box.right, cells: [...t.querySelectorAll('th')].map(th => {
    const r = th.getBoundingClientRect();
    const td = t.rows.length > 1 ? t.rows[1].cells[th.cellIndex] : null;
    return [th.textContent, r.width, r.right, td ? td.className : ''];
  })});
}
document.body.setAttribute('data-layout', JSON.stringify(out));
</script>"""
    with open(measure, "w", encoding="utf-8") as f:
        f.write(page_text.replace("</body>", script + "</body>"))
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--user-data-dir=" + os.path.join(work, "chromium-profile"), "--window-size=1400,3000",
                        "--dump-dom", "file://" + measure], capture_output=True, text=True, timeout=300)
    import html as html_mod, json, re
    m = re.search(r'data-layout="([^"]*)"', r.stdout)
    tables = json.loads(html_mod.unescape(m.group(1))) if m else []
    narrow = [(c[0], round(c[1])) for t in tables for c in t["cells"] if c[3] == "text" and c[1] < 150]
    check(tables and not narrow, f"diff.html at 1400 px: every text column at least 150 px wide ({narrow[:3]})")
    kernels = [t for t in tables if t["cells"] and t["cells"][-1][0] == "speedup"]
    wide = [(t["cells"][-1][0], round(t["cells"][-1][2]), round(t["visible"])) for t in tables
            if t["cells"] and t["cells"][-1][2] > t["visible"] + 1]
    check(len(kernels) == 1 and not wide,
          f"diff.html at 1400 px: every table, diff_kernels' speedup included, fits its box (last column, "
          f"its right edge, the box's: {wide})")

finish()
