"""The replay worker processes a test's process started (read from /proc), for the tests that check
how many tlsql-replay workers live and whose they are."""
import os


def workers_of(pid):
    """The live tlsql-replay processes whose parent is `pid` (zombies have exited)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            cmd = open(f"/proc/{p}/cmdline", "rb").read()
        except OSError:
            continue
        if int(stat[1]) == pid and stat[0] != "Z" and b"tlsql-replay" in cmd:
            out.append(int(p))
    return out
