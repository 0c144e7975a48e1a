#!/usr/bin/env python3
"""Drives the interactive tlsql through a pseudo-terminal, as a person would: a multi-line
statement, tab completion of a dot-command and of a column, Ctrl-C during a long query and at
the prompt (the session must survive and answer the next one), and the history file.

    repl_pty.py TLSQL TRACE
"""
import fcntl, os, pty, select, struct, sys, tempfile, termios, time

tlsql, trace = sys.argv[1], sys.argv[2]
home = tempfile.mkdtemp()
pid, fd = pty.fork()
if pid == 0:
    os.environ["HOME"] = home
    os.environ["TERM"] = "xterm"
    os.execv(tlsql, [tlsql, trace])

buf = b""


def expect(what, timeout=30):
    global buf
    end = time.time() + timeout
    while what.encode() not in buf:
        left = end - time.time()
        if left <= 0:
            sys.exit(f"timed out waiting for {what!r}; screen so far:\n{buf.decode(errors='replace')[-2000:]}")
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
    i = buf.index(what.encode()) + len(what)
    seen, buf = buf[:i], buf[i:]
    return seen.decode(errors="replace")


def send(s):
    os.write(fd, s.encode())


expect("tlsql> ")
send("SELECT count(*) AS n\r")
expect("...> ")  # continuation prompt for an unfinished statement
send("FROM event;\r")
out = expect("tlsql> ")
assert "│ 7 │" in out.replace("  ", " ").replace("  ", " ") or " 7 " in out, out

send(".tab\t")  # completes to .tables
send("\r")
out = expect("tlsql> ")
assert "launch_link" in out and "kernel" in out, out

send("SELECT correla\t FROM event WHERE uid = 5;\r")  # completes to correlation
out = expect("tlsql> ")
assert "2131433" in out, out

t0 = time.time()
send("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c;\r")
time.sleep(1.0)
send("\x03")  # Ctrl-C
out = expect("tlsql> ")
assert "interrupted" in out, out
assert time.time() - t0 < 15, "the interrupt did not stop the query"

send("SELECT 6 * 7 AS answer;\r")
out = expect("tlsql> ")
assert "42" in out, out

# Tab completion of report names and modes (issue 18 item 6).
send(".mode mark\t\r")
send(".mode\r")
out = expect("tlsql> ")
out = expect("tlsql> ")
assert "current output mode: markdown" in out, out
send(".mode box\r")
expect("tlsql> ")
send(".report summa\t\r")
out = expect("tlsql> ")
assert "gpu_busy_pct" in out, out  # .report summa<TAB> ran the summary

# A table wider than the terminal wraps its widest column to fit (issue 18 item 5), text cut to
# 3 lines ending in an ellipsis, the number whole (issue 40 item 11): the box is 60 wide, the
# number's column 12 (10 and its padding), so the name's is 60 - 12 - 3 (rules) - 2 = 43: 43 + 43
# + 42 k's and the ellipsis.
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 60, 0, 0))
send("SELECT printf('%.200c', 'k') AS name, 12345.6789 AS us;\r")
out = expect("tlsql> ")
rows = [l for l in out.replace("\r", "").split("\n") if "│" in l or "┌" in l]
assert rows and max(len(l) for l in rows) <= 60 and "12,345.679" in out, out
assert sum(l.count("k") for l in rows) == 43 + 43 + 42 and out.count("…") == 1, out
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))

# Ctrl-C at the prompt (issue 18 item 2): the half-typed line, and a statement begun on an earlier
# line, are dropped and the session stays, as in sqlite3.
send("SELECT 1 +")
time.sleep(0.3)
send("\x03")
expect("^C", timeout=30)
expect("tlsql> ", timeout=30)
send("SELECT 'first' AS a\r")
expect("...> ")
send("\x03")
expect("tlsql> ")
send("SELECT 6 * 8 AS b;\r")
out = expect("tlsql> ")
assert "48" in out and "first" not in out and "error" not in out, out

# A resize just before Ctrl-C at the prompt: the prompt comes back without a key.
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
send("SELECT 2 +")
time.sleep(0.3)
send("\x03")
expect("tlsql> ", timeout=30)
send("SELECT 5 AS five;\r")
out = expect("tlsql> ")
assert "5" in out and "error" not in out, out

# Typed non-ASCII text reaches SQLite whole (in the C locale libedit dropped it).
send("SELECT 'µs é' AS u, length('µs é') AS n;\r")
out = expect("tlsql> ")
assert "µs é" in out and "│ 4 │" in out, out

send(".quit\r")
_, status = os.waitpid(pid, 0)
# libedit's history file escapes blanks and newlines (\040, \012).
history = open(os.path.join(home, ".tlsql_history")).read().replace("\\040", " ").replace("\\012", "\n")
assert "SELECT 6 * 7 AS answer;" in history, history
assert "FROM event;" in history, history
print("repl_pty: ok")
