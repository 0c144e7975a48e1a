#!/usr/bin/env python3
"""Writes each ```cpp PATH block of a markdown page to OUT_DIR/PATH (docs/extending.md's examples,
built by tests/CMakeLists.txt), and prints the paths written, one a line.
usage: extract.py PAGE OUT_DIR"""
import os, re, sys

page, out = sys.argv[1:3]
text = open(page, encoding="utf-8").read()
blocks = re.findall(r"^```cpp ([\w./-]+)\n(.*?)^```$", text, re.S | re.M)
if not blocks:
    sys.exit(f"{page}: no ```cpp PATH block")
for path, body in blocks:
    if path.startswith("/") or ".." in path.split("/"):
        sys.exit(f"{page}: {path}: a path inside the repository")
    dest = os.path.join(out, path)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    old = open(dest, encoding="utf-8").read() if os.path.exists(dest) else None
    if old != body:  # unchanged files keep their time: no rebuild
        with open(dest, "w", encoding="utf-8") as f:
            f.write(body)
    print(path)
