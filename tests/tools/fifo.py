"""Holding a tlsql process at a known point: it opens a FIFO (a trace, an -f script, a `.read`)
only once it has got there, and the side that writes the FIFO learns when through its own open."""
import os
import time


def new_fifo(path):
    """A FIFO at `path` (an earlier run's file there removed)."""
    if os.path.exists(path):
        os.remove(path)
    os.mkfifo(path)
    return path


def open_when_read(path, proc, seconds):
    """A blocking write descriptor on the FIFO `path` once `proc` has opened it for reading, or None
    when `proc` ended first or `seconds` passed (open for writing fails with ENXIO until a reader
    has it open; a blocking open would wait forever for a process that never gets there)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            if proc.poll() is not None:
                return None
            time.sleep(0.01)
            continue
        os.set_blocking(fd, True)
        return fd
    return None
