"""What every end-to-end test script reports with: one `ok` / `FAIL` line per check, then the
number of failures, and exit status 1 if there was any (CTest reads that)."""
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def finish():
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
