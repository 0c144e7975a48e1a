#!/usr/bin/env python3
"""The one registry of SQL functions (udf/registry.h): what tlsql registers on a connection is
exactly what tlsql_functions lists and .help prints, each with its arguments and a help line; and
the report tables (session/report_table.h) are exactly report_NAME for each name tlsql_reports
and --report list give.
usage: function_registry.py TLSQL"""
import os, sqlite3, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

tlsql = sys.argv[1]


def rows(sql):
    r = subprocess.run([tlsql, "--csv", "-c", sql], capture_output=True, text=True)
    check(r.returncode == 0, f"{sql}: {r.stderr.strip()[:100]}")
    return [line.split(",", 1)[0] for line in r.stdout.splitlines()[1:]]


# What tlsql adds: its function and module lists less those of a plain connection to the same
# SQLite library (Python's), less the loader's own tables (the event table module, this table) and
# the report tables' companions (tlsql_reports, notes: session/report.h).
plain = sqlite3.connect(":memory:")
plain_functions = {r[0] for r in plain.execute("SELECT name FROM pragma_function_list")}
plain_modules = {r[0] for r in plain.execute("SELECT name FROM pragma_module_list")}
added = set(rows("SELECT name FROM pragma_function_list")) - plain_functions
modules = set(rows("SELECT name FROM pragma_module_list")) - plain_modules
report_tables = {m for m in modules if m.startswith("report_")}
added |= modules - report_tables - {"tlsql_event", "tlsql_schema", "tlsql_functions", "tlsql_reports", "notes"}
listed = rows("SELECT name FROM tlsql_functions")
check(len(listed) == len(set(listed)), "each function is listed once")
check(added == set(listed), f"registered == listed (registered only: {sorted(added - set(listed))}; "
                            f"listed only: {sorted(set(listed) - added)})")
# One function of each file that registers itself (TLSQL_FUNCTIONS, udf/registry.h), named here and
# not by the registry: a file whose object the build dropped, or whose registrar never ran, fails.
whole_help = subprocess.run([tlsql, "-c", ".help"], capture_output=True, text=True).stdout
for must in ("descendants", "flops", "gpu_time", "counted", "short_name", "union_ns", "regexp", "trace_kinds",
             "critical_path", "engine_steps", "optimizable_events", "tree_diff", "replay"):
    check(must in listed and f"{must}(" in whole_help, f"{must} is in the registry and .help")
# ...and answers: [0, 5) and [3, 9) cover 9 ns.
r = subprocess.run([tlsql, "--csv", "-c", "SELECT union_ns(column1, column2) FROM (VALUES (0, 5), (3, 9))"],
                   capture_output=True, text=True)
check(r.stdout.splitlines()[1:] == ["9"], f"union_ns over [0, 5) and [3, 9) is 9: {r.stdout.strip()!r} {r.stderr.strip()}")

reports = rows("SELECT name FROM tlsql_reports")
listed_reports = [line.split()[0] for line in subprocess.run([tlsql, "--report", "list"], capture_output=True,
                                                            text=True).stdout.splitlines() if line and line[0] != " "]
check(report_tables == {"report_" + n for n in reports} and reports == listed_reports and len(reports) > 25,
      f"report tables == tlsql_reports == --report list ({len(reports)} reports)")

r = subprocess.run([tlsql, "--csv", "-c", "SELECT name, arguments, kind, help FROM tlsql_functions"],
                   capture_output=True, text=True)
import csv, io  # noqa: E402
table = list(csv.DictReader(io.StringIO(r.stdout)))
check(all(t["arguments"].startswith("(") and t["arguments"].endswith(")") for t in table), "arguments are (…)")
check(all(t["help"] and "\n" not in t["help"] for t in table), "every function has a one-line help")
check({t["kind"] for t in table} == {"scalar", "aggregate", "table"}, "kinds: scalar, aggregate, table")
help_text = subprocess.run([tlsql, "-c", ".help"], capture_output=True, text=True).stdout
check(all(f"{t['name']}{t['arguments']}" in help_text and t["help"] in help_text for t in table),
      ".help prints every registered function with its help")
finish()
