#!/usr/bin/env python3
"""Huge pages by input size (repl/main.cpp, docs/performance.md): tlsql starts itself again with
glibc.malloc.hugetlb=1 only when the traces it loads (TRACE arguments, the trace files of a
folder, --diff) hold 32 MiB or more in all, or one is a stream (a FIFO), and only where
transparent huge pages are given on request ("[madvise]"); other files on the command line (an
-o target, a folder's other files) do not count, and a GLIBC_TUNABLES naming hugetlb is left as
set. Seen from outside: the environment of the running process, read from /proc while it waits on
a FIFO (its -f script, or its trace), which it opens only once past its start and restart; and
from its /proc smaps then, what follows from those settings (repl/main.cpp, tune_memory): the
store's args blocks on 2 MiB pages where malloc takes them, and one malloc arena for every thread
unless the user set their number.
usage: huge_pages.py TLSQL DATA_DIR WORK_DIR"""
import os, shutil, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402
from fifo import new_fifo, open_when_read  # noqa: E402

tlsql, data, work = sys.argv[1:4]
work = os.path.join(work, "huge_pages")
shutil.rmtree(work, ignore_errors=True)
big, fifo_dir = os.path.join(work, "big"), os.path.join(work, "fifo")
os.makedirs(big)
os.makedirs(fifo_dir)
small = os.path.join(data, "fx_markers.json")
with open(small) as f:
    text = f.read()
# The same events padded to 20 MiB with whitespace between the array's values (valid JSON), twice;
# a 40 MiB file that is no trace beside them (a folder loads only its .json / .json.gz files).
halves = [os.path.join(big, f"padded_20m_{i}.json") for i in (0, 1)]
cut = text.index("[") + 1
for half in halves:
    with open(half, "w") as f:
        f.write(text[:cut] + " " * (20 << 20) + text[cut:])
# A trace with 3.2 MB of args (an arena's blocks double from 64 KiB: its sixth, of 2 MiB, is the
# first that may take 2 MiB pages), in the folder too; padded by 20 MiB, so that its rows, reserved
# by the file's size, take a mapping of their own, not the store's RowSpace (whose 64 MiB blocks
# take 2 MiB pages too, src/event_store.h).
with_args = os.path.join(big, "args_3m.json")
with open(with_args, "w") as f:
    f.write('{"traceEvents": [' + " " * (20 << 20) + ",".join(
        f'{{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": {i}, "dur": 1, '
        f'"args": {{"note": "{i:08d}{"x" * 60}"}}}}' for i in range(40000)) + "]}")
one_half = os.path.join(work, "one_half")
os.makedirs(one_half)
os.link(halves[0], os.path.join(one_half, "padded_20m.json"))
with open(os.path.join(one_half, "old.db"), "wb") as f:
    f.truncate(40 << 20)
large_out = os.path.join(work, "large_out.db")
with open(large_out, "wb") as f:
    f.truncate(40 << 20)


def mappings(smaps):
    """The mappings /proc/PID/smaps lists: (start, end, perms, path ("" when anonymous), VmFlags)."""
    found = []
    for line in smaps.splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            found.append([lo, hi, fields[1], fields[5] if len(fields) > 5 else "", []])
        elif fields and fields[0] == "VmFlags:" and found:
            found[-1][4] = fields[1:]
    return found


def huge_arena_block(smaps):
    """Whether /proc/PID/smaps shows a block of the store's args as 2 MiB pages asked for: an
    anonymous mapping of whole 2 MiB pages on a 2 MiB boundary marked MADV_HUGEPAGE ("hg";
    src/event_store.cpp, new_block; blocks mapped side by side show as one mapping; a trace's own
    rows' and malloc's mappings are no multiple of 2 MiB; the traces here are too large for the
    store's RowSpace)."""
    page = 2 << 20
    return any(not path and lo % page == 0 and (hi - lo) % page == 0 and "hg" in flags
               for lo, hi, _, path, flags in mappings(smaps))


def malloc_arenas(smaps):
    """How many heaps of threads' malloc arenas /proc/PID/smaps shows: glibc maps each as 64 MiB on
    a 64 MiB boundary, anonymous, its unused part PROT_NONE (the main arena's heap is brk's)."""
    maps = mappings(smaps)
    heap, n = 64 << 20, 0
    for i, (lo, hi, perms, path, _) in enumerate(maps):
        if path or perms != "rw-p" or lo % heap:
            continue
        nxt = maps[i + 1] if i + 1 < len(maps) else None
        if nxt and nxt[0] == hi and nxt[2] == "---p" and not nxt[3]:
            hi = nxt[1]
        n += hi - lo == heap
    return n


arena_huge = {}  # (args tuple, GLIBC_TUNABLES given) -> what huge_arena_block said of that run
arenas = {}  # the same -> malloc_arenas of that run
sanitized_runs = []  # per run: whether AddressSanitizer's runtime was mapped in the process


def tunables(args, env_tunables=None, stream=False):
    """GLIBC_TUNABLES of tlsql (None when unset), read while it waits on a FIFO: its -f script, or
    with `stream` its first trace (then written the small trace's text). Its smaps, read then,
    go to arena_huge and arenas."""
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if env_tunables is not None:
        env["GLIBC_TUNABLES"] = env_tunables
    fifo = new_fifo(os.path.join(fifo_dir, "trace.json" if stream else "script.sql"))
    cmd = [tlsql, "-q", "--csv", fifo, *args] if stream else [tlsql, "-q", "--csv", *args, "-f", fifo]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    fd = open_when_read(fifo, p, 60)
    value = None
    if fd is not None:
        with open(f"/proc/{p.pid}/environ", "rb") as f:
            env_now = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
        value = env_now.get(b"GLIBC_TUNABLES")
        with open(f"/proc/{p.pid}/smaps") as f:
            smaps = f.read()
            arena_huge[(tuple(args), env_tunables)] = huge_arena_block(smaps)
            arenas[(tuple(args), env_tunables)] = malloc_arenas(smaps)
            # (ASan's runtime as a library (GCC), or its shadow memory at x86-64's offset, 0x7fff8000,
            # where it is linked in (Clang))
            sanitized_runs.append(any("libasan" in path or (not path and lo <= 0x7fff8000 < hi)
                                      for lo, hi, _, path, _ in mappings(smaps)))
        os.write(fd, (text if stream else "SELECT count(*) AS n FROM trace;\n").encode())
        os.close(fd)
    out, err = p.communicate(timeout=120)
    check(fd is not None and p.returncode == 0, f"{args}: ran ({err.strip()[:200]})")
    return None if value is None else value.decode()


try:
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
        on_request = "[madvise]" in f.read()
except OSError:  # (no transparent huge pages here: tlsql never restarts)
    on_request = False
check(tunables([small]) is None, "a small trace: no restart with huge pages")
check(tunables([halves[0]]) is None, "a 20 MiB trace: none (under 32 MiB)")
check(tunables([one_half]) is None, "a folder of a 20 MiB trace and a 40 MiB file that is no trace: none")
check(tunables([small, "-o", large_out]) is None, "a small trace saved over a 40 MiB file: none (an output)")
if on_request:
    check(tunables([halves[0], "--diff", halves[1]]) == "glibc.malloc.hugetlb=1",
          "two 20 MiB traces (a diff): summed, restarted with glibc.malloc.hugetlb=1")
    check(tunables([big]) == "glibc.malloc.hugetlb=1", "a folder of the two: its traces summed")
    check(tunables([], stream=True) == "glibc.malloc.hugetlb=1", "a trace read from a FIFO (size unknown): restarted")
else:
    print("skip: transparent huge pages are not given on request here (the restart never happens)")
check(tunables([big], "glibc.malloc.hugetlb=0") == "glibc.malloc.hugetlb=0", "a hugetlb the user set is kept")
check(arena_huge.get(((big,), "glibc.malloc.hugetlb=0")) is False, "... and with it the args blocks take no 2 MiB pages")
check(tunables([small], "glibc.malloc.hugetlb=1") == "glibc.malloc.hugetlb=1", "(either way)")
# The store's args blocks ask for 2 MiB pages where malloc does (the restart's, or the user's), on
# a 2 MiB boundary; not under AddressSanitizer, where a block stays a heap allocation and ASan's
# allocator stands for malloc's arenas (seen in the process's own mappings: the test's environment
# says nothing of how tlsql was built), nor where the kernel has no transparent huge pages to ask
# for (smaps then marks no mapping "hg").
sanitized = any(sanitized_runs)
if not sanitized and os.path.exists("/sys/kernel/mm/transparent_hugepage/enabled"):
    check(tunables([with_args], "glibc.malloc.hugetlb=1") == "glibc.malloc.hugetlb=1", "(a trace with args)")
    check(arena_huge.get(((with_args,), "glibc.malloc.hugetlb=1")), "the user's hugetlb=1: the args blocks ask for 2 MiB pages")
    check(tunables([with_args], "glibc.malloc.hugetlb=") == "glibc.malloc.hugetlb=", "an empty hugetlb is kept")
    check(arena_huge.get(((with_args,), "glibc.malloc.hugetlb=")) is False, "... and read as glibc reads it, 0: none asked")
    check(tunables([with_args]) is None and arena_huge.get(((with_args,), None)) is False,
          "a trace under 32 MiB, no restart: the args blocks do not")
    if on_request:
        check(arena_huge.get(((big,), None)), "restarted with huge pages: the args blocks ask for them too")
# One malloc arena for every thread (repl/main.cpp, tune_memory), unless the user set their number:
# the load's threads (two or more) leave no heaps of arenas of their own.
if not sanitized:
    four = (halves[0], "--threads", "4")
    check(tunables(list(four)) is None and arenas.get((four, None)) == 0, "one malloc arena: four load threads add none")
    if on_request:
        check(arenas.get(((big,), None)) == 0, "(restarted with huge pages too)")
    many = tunables(list(four), "glibc.malloc.arena_max=8")
    check(many == "glibc.malloc.arena_max=8", "an arena_max the user set is kept")
    check((arenas.get((four, "glibc.malloc.arena_max=8")) or 0) > 0, "... and the threads take arenas")
shutil.rmtree(work, ignore_errors=True)
finish()
