#!/usr/bin/env python3
"""source(uid) is the user's code (issue 18 item 12): for sampled ops of traces with python frames,
the nearest frame above the op whose file is neither torch's nor the standard library's, by this
test's own rule (Python's sys.stdlib_module_names and the torch packages), else the nearest frame,
which nearest_source(uid) always gives. usage: source_frames.py TLSQL DATA_DIR SHARED_DIR"""
import csv, io, json, os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, shared = sys.argv[1:4]
TORCH = {"torch", "functorch", "torchgen"}


def library(frame):
    if frame.startswith("<"):
        return True
    path = frame.split(".py(")[0]
    for packages in ("site-packages/", "dist-packages/"):
        if packages in path:
            path = path[path.rindex(packages) + len(packages):]
    return "/lib/python3." in path or path.split("/")[0] in TORCH | set(sys.stdlib_module_names)


traces = [os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")]
traces += [os.path.join(shared, "traces", t) for t in ("tracelens/h100/Falconsai_nsfw_image_detection.json.gz",
                                                      "h100_vllm_tp4_rank0_cudagraph.pt.trace.json.gz")]
QUERY = """SELECT o.uid, source(o.uid), nearest_source(o.uid),
  (SELECT json_group_array(name) FROM (SELECT e.name FROM ancestors(o.uid) a JOIN event e ON e.uid = a.uid
   WHERE e.name GLOB '*.py(*)*' ORDER BY a.rel_depth)) FROM op o WHERE o.uid % 7 = 0"""
for trace in traces:
    name = os.path.basename(trace)
    if not os.path.exists(trace):
        print(f"skip {name}: not present")
        continue
    r = subprocess.run([tlsql, "-q", trace, "--csv", "-c", QUERY], capture_output=True, text=True, timeout=300)
    rows = list(csv.reader(io.StringIO(r.stdout)))[1:]

    bad, moved = [], 0
    for uid, source, nearest, frames in rows:
        frames = json.loads(frames)
        want = next((f for f in frames if not library(f)), frames[0] if frames else "")
        if source != want or nearest != (frames[0] if frames else ""):
            bad.append((uid, source, want, nearest))
        moved += source != nearest
    check(r.returncode == 0 and len(rows) > 50 and not bad,
          f"{name}: source / nearest_source of {len(rows)} ops by the rule ({len(bad)} differ: {bad[:2]})")
    check(moved > 0, f"{name}: {moved} ops whose user frame is not their nearest frame")
finish()
