#!/usr/bin/env python3
"""Huge pages by input size (repl/main.cpp, docs/performance.md): tlsql starts itself again with
glibc.malloc.hugetlb=1 only when the files named on its command line hold 32 MiB or more in all, and
only where transparent huge pages are given on request ("[madvise]"); a GLIBC_TUNABLES naming
hugetlb is left as set. Seen from outside: the environment of the running process, read from
/proc while it waits for its first trace on a FIFO.
usage: huge_pages.py TLSQL DATA_DIR WORK_DIR"""
import os, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data, work = sys.argv[1:4]
work = os.path.join(work, "huge_pages")
os.makedirs(work, exist_ok=True)
small = os.path.join(data, "fx_markers.json")
# The same events padded to 20 MiB with whitespace between the array's values (valid JSON), twice.
big = os.path.join(work, "big")
fifo_dir = os.path.join(work, "fifo")
os.makedirs(big, exist_ok=True)
os.makedirs(fifo_dir, exist_ok=True)
halves = [os.path.join(big, f"padded_20m_{i}.json") for i in (0, 1)]
with open(small) as f:
    text = f.read()
cut = text.index("[") + 1
for half in halves:
    with open(half, "w") as f:
        f.write(text[:cut] + " " * (20 << 20) + text[cut:])


def tunables(args, env_tunables=None):
    """GLIBC_TUNABLES of tlsql (None when unset) once it has started: its first trace is a FIFO,
    which it opens only past its start (and restart); this side's open for writing returns then."""
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if env_tunables is not None:
        env["GLIBC_TUNABLES"] = env_tunables
    fifo = os.path.join(fifo_dir, "trace.json")
    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    p = subprocess.Popen([tlsql, "-q", "--csv", fifo, *args, "-c", "SELECT count(*) AS n FROM trace"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    fd = None
    for _ in range(6000):  # (ENXIO until a reader has it open; 60 s at most)
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            if p.poll() is not None:
                break
            time.sleep(0.01)
    value = None
    if fd is not None:
        with open(f"/proc/{p.pid}/environ", "rb") as f:
            env_now = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
        value = env_now.get(b"GLIBC_TUNABLES")
        os.set_blocking(fd, True)
        os.write(fd, text.encode())
        os.close(fd)
    out, err = p.communicate(timeout=120)
    check(fd is not None and p.returncode == 0, f"{args}: loaded ({err.strip()[:200]})")
    return None if value is None else value.decode()


with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
    on_request = "[madvise]" in f.read()
check(tunables([small]) is None, "a small trace: no restart with huge pages")
check(tunables([]) is None, "a FIFO alone (0 bytes known): none")
check(tunables([halves[0]]) is None, "a 20 MiB trace: none (under 32 MiB)")
if on_request:
    check(tunables([halves[0], "--diff", halves[1]]) == "glibc.malloc.hugetlb=1",
          "two 20 MiB traces (a diff): summed, restarted with glibc.malloc.hugetlb=1")
    check(tunables([big]) == "glibc.malloc.hugetlb=1", "a folder of the two: its files summed")
else:
    print("skip: transparent huge pages are not given on request here (the restart never happens)")
check(tunables([big], "glibc.malloc.hugetlb=0") == "glibc.malloc.hugetlb=0", "a hugetlb the user set is kept")
check(tunables([small], "glibc.malloc.hugetlb=1") == "glibc.malloc.hugetlb=1", "(either way)")
for half in halves:
    os.remove(half)
finish()
