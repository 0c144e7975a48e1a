#!/usr/bin/env python3
"""The saved perf table's hash (TLSQL_PERF_RULES, CMakeLists.txt) covers every source of the perf
pass: the list CMake derived (BUILD/perf_rules_sources.txt) must be closed under what the compiler
itself read. For each .cpp in the list, every repository header in its ninja deps (the
preprocessor's view, not CMake's reading of #include lines) is in the list, and so is each such
header's .cpp (its definitions are compiled into the pass). A source missing from the hash would
let a saved database keep numbers computed by other rules (src/kind.cpp was: its serving-step parse
feeds attention FLOPs).
usage: perf_rules_sources.py SOURCE_DIR BUILD_DIR"""
import os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

src, build = sys.argv[1], sys.argv[2]
listed = set(open(os.path.join(build, "perf_rules_sources.txt")).read().split())
r = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True)
if r.returncode != 0 or "#deps" not in r.stdout:
    print("SKIP: no ninja deps in the build (another generator, or not built)")
    sys.exit(0)


def repo_path(p):
    """A dependency as ninja wrote it -> its path in the repository, or None (system headers)."""
    p = os.path.normpath(os.path.join(build, p))
    real = os.path.realpath(p)
    if p.startswith(os.path.join(os.path.realpath(build), "layers")) or "/layers/" in p:
        # build/layers/TARGET/<folder> links to the source folder
        parts = p.split(os.sep)
        k = parts.index("layers")
        return os.path.join(*parts[k + 2:])
    rel = os.path.relpath(real, os.path.realpath(src))
    return None if rel.startswith("..") else rel


deps = {}  # source .cpp -> repository headers it read
current = None
for line in r.stdout.splitlines():
    if not line.startswith(" ") and "#deps" in line:
        current = []
        first = True
        continue
    if current is None or not line.strip():
        continue
    p = repo_path(line.strip())
    if first:
        first = False
        deps.setdefault(p, set()) if p else None
        current = deps[p] if p else set()
        continue
    if p:
        current.add(p)

for root in ("udf/perf/perf_table.cpp", "udf/perf/perf_model.cpp", "udf/perf/perf_cache.cpp", "src/kind.cpp", "udf/gpu_class.cpp",
             "args/op_args.cpp"):
    check(root in listed, f"{root} is hashed")
for cpp in sorted(f for f in listed if f.endswith(".cpp")):
    check(cpp in deps, f"{cpp}: compiled (ninja knows what it read)")
    for h in sorted(deps.get(cpp, ())):
        check(h in listed, f"{cpp} reads {h}: hashed")
        sibling = h[:-2] + ".cpp" if h.endswith(".h") else None
        if sibling and os.path.exists(os.path.join(src, sibling)):
            check(sibling in listed, f"{cpp} reads {h}: its {sibling} hashed")
finish()
