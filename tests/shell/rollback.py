#!/usr/bin/env python3
"""What the functions keep of a connection's own rows is read again after a ROLLBACK (ChangesSeen,
udf/connection_cache.h): kernel rules, gpu_spec peaks, perf_model_user formulas, and the rows
critical_path reads (launch_link). A ROLLBACK leaves sqlite3_total_changes as it was, and each was
kept until that count moved: rows inserted then rolled back went on answering. Each case asks the
same question before, inside and after a transaction, through the tlsql binary's one connection,
and after a COMMIT; the expected values are the table's own rows (a formula '42', a peak of 1).
usage: rollback.py TLSQL DATA_DIR"""
import os, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql, data = sys.argv[1:3]
trace = os.path.join(data, "tracelens_h100_bert_small_uncased.json.gz")  # one H100: gpu_spec's H100 SXM


def answers(question, change, end):
    """The question's answers (a header line and a value line each, as CSV) before the change,
    inside the transaction and after `end`."""
    r = subprocess.run([tlsql, trace, "-c", question, "-c", "BEGIN", "-c", change, "-c", question, "-c", end,
                        "-c", question], capture_output=True, text=True, timeout=120)
    out = r.stdout.strip().split("\n")
    return r, [out[i + 1] for i in range(0, len(out) - 1, 2)]


cases = [
    # (what, question, change, the answer inside)
    ("kernel rule", "SELECT group_concat(DISTINCT gpu_class(uid)) FROM kernel WHERE name LIKE '%flash%'",
     "INSERT INTO kernel_rule(pattern, class) VALUES ('*flash*', 'communication')", "communication"),
    ("gpu_spec peak", "SELECT min(peak_tflops(uid)) FROM event WHERE name = 'aten::addmm'",
     "UPDATE gpu_spec SET matrix_tflops = 1, vector_tflops = 1", "1.0"),
    ("user model", "SELECT min(flops(uid)) FROM event WHERE name = 'aten::addmm'",
     "INSERT INTO perf_model_user(name, flops) VALUES ('aten::addmm', '42')", "42.0"),
    ("launch_link", "SELECT count(*) FROM critical_path('', 0, 0)", "DELETE FROM launch_link", None),
]
for what, question, change, inside in cases:
    r, values = answers(question, change, "ROLLBACK")
    check(r.returncode == 0 and len(values) == 3, f"{what}: three answers ({r.stdout!r} {r.stderr.strip()[:200]})")
    if len(values) < 3:
        continue
    before, during, after = values
    if inside is not None:
        check(during == inside, f"{what}: inside the transaction the changed rows answer: {during!r}, want {inside!r}")
    else:
        check(during != before, f"{what}: inside the transaction the changed rows answer ({before!r} -> {during!r})")
    check(after == before, f"{what}: after ROLLBACK the rows as they were answer: {after!r}, want {before!r}")
    r, values = answers(question, change, "COMMIT")
    check(len(values) == 3 and values[2] == values[1], f"{what}: after COMMIT the changed rows still answer: {values}")

# Models published inside a transaction are read again from their table once it ends, outside the
# models' lock and once: a table whose reading calls a perf function (here a view put in its place,
# naming aten::mul only) neither hangs nor loops, and what it names is what answers (aten::addmm by
# the shipped model again, as in a session that never had a user model).
view = ("CREATE TEMP VIEW perf_model_user AS SELECT 'aten::mul' AS name, 'other' AS category, "
        "CAST((SELECT flops(uid) FROM event WHERE name = 'aten::addmm' LIMIT 1) AS TEXT) AS flops, NULL AS bytes, "
        "0 AS matrix, NULL AS dtype")
question = "SELECT min(flops(uid)) FROM event WHERE name = 'aten::addmm'"
shipped = subprocess.run([tlsql, trace, "-c", question], capture_output=True, text=True, timeout=60).stdout
try:
    r = subprocess.run([tlsql, trace, "-c", "INSERT INTO perf_model_user(name, flops) VALUES ('aten::addmm', '42')",
                        "-c", "DROP TABLE temp.perf_model_user", "-c", view,
                        "-c", question], capture_output=True, text=True, timeout=60)
    check(r.stdout.strip().split("\n")[-1:] == shipped.strip().split("\n")[-1:] and shipped.strip(),
          f"models read again through a table that calls flops(): {r.stdout!r} {r.stderr.strip()[:200]}")
except subprocess.TimeoutExpired:
    check(False, "models read again through a table that calls flops(): no answer in 60 s (a deadlock)")
finish()
