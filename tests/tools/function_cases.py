"""What the function tests (tests/functions/*.py) share: running tlsql on some files with SQL, a
function's rows beside those of the SQL it stands for, from one load, and a file loaded and saved."""
import os
import subprocess

from checks import check

CUT = "8<"  # (a one-row statement between the two answers: where the first ends)


def run(tlsql, args, *sql):
    """`tlsql -q --csv ARGS -c SQL...`: the completed process."""
    cmd = [tlsql, "-q", "--csv"] + list(args)
    for s in sql:
        cmd += ["-c", s]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def two_answers(tlsql, args, mine, theirs, *before):
    """The rows (CSV lines, headers dropped) of `mine` and of `theirs`, run in one session after
    `before`; checks the session runs."""
    r = run(tlsql, args, *before, mine, f"SELECT '{CUT}' AS cut", theirs)
    check(r.returncode == 0, f"{args}: runs ({r.stderr.strip()[:160]})")
    out = r.stdout.splitlines()
    at = next((i for i in range(len(out) - 1) if out[i] == "cut" and out[i + 1] == CUT), None)
    if at is None:
        return [], [None]
    return out[1:at], out[at + 3:]


def loaded_and_saved(tlsql, path, tmp, prefix):
    """`path` and the database it saves to in `tmp` (checked), to run the same checks on both."""
    saved = os.path.join(tmp, prefix + os.path.basename(path).split(".")[0] + ".db")
    check(run(tlsql, [path, "-o", saved], "SELECT 1").returncode == 0, f"{os.path.basename(path)}: saved")
    return path, saved
