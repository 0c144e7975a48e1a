#!/usr/bin/env python3
"""No name is spliced into SQL text (issue 45.1, docs/security.md "Names in SQL"): a schema name
reaches tlsql from a function's argument, which a saved database's views choose, and the SQL a
function prepares runs as top-level SQL. src/sql_names.h is the one place that resolves a schema
against the connection's attached databases and quotes a name. This scans the C++ sources for any
other place that puts text between double quotes by hand (`\\"{}\\"`, `"\\"" + x`) or splices a
value between single quotes into a statement that names an SQL keyword. The few that build JSON,
HTML or messages are listed below with their count per file: a new one anywhere fails.
usage: sql_names.py SOURCE_DIR"""
import os, re, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from checks import check, finish  # noqa: E402

root = sys.argv[1]
# (file -> splices allowed there): none of them is SQL.
ALLOWED = {
    "src/augment.cpp": 2,               # looks for a "key" in an args JSON text
    "udf/names/name_functions.cpp": 3,  # source()'s JSON object
    "udf/perf/perf_functions.cpp": 1,   # a JSON object of kind counts
    "session/report_table.cpp": 1,      # tlsql_reports' JSON array of parameter names
    "session/output.cpp": 2,            # json_string's closing quote; insert mode's table (sql_identifier)
    "repl/sqlite3_commands.cpp": 2,     # .show's "nullvalue" and "separator" lines
    "pictures/html_report.cpp": 4,      # HTML attributes
    "src/readers/kineto_json/trace_scanner.cpp": 1,  # an error message quoting a repeated JSON key
}
quote_splice = re.compile(r'\\"\{\d*\}\\"|"\\""\s*\+|\+\s*"\\""')
# A value between single quotes in a string literal that holds SQL words.
string_literal = re.compile(r'"(?:[^"\\\n]|\\.)*"')
literal_splice = re.compile(r"'\{\d*\}'")
sql_word = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|FROM|INTO|PRAGMA|ATTACH|DETACH|CREATE|DROP|JOIN)\b")

# A qualifier "{}.table" in a format string: its argument must come from the helpers (schema_sql,
# quote_identifier) or be a variable that holds their result (named q, as the sources do).
qualifier = re.compile(r"\{\d*\}\.[a-z_]")
# (sql_identifier, session/output.cpp: insert mode's table name, quote_identifier's unless plain)
concat_sql = re.compile(r'(FROM|INTO|JOIN|TABLE|INDEX|PRAGMA|ON) "\s*\+(?!\s*(quote_identifier|schema_sql|sql_identifier)\()')


def format_calls(text):
    """Each fmt::format(...) call's text, by balanced parentheses (string literals skipped)."""
    for m in re.finditer(r"fmt::format\(", text):
        depth, i, quote = 1, m.end(), None
        while i < len(text) and depth:
            c = text[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
        yield text[m.start():i]


found = {}
for folder in ("args", "src", "udf", "session", "repl", "pictures", "replay"):
    for dirpath, _, files in os.walk(os.path.join(root, folder)):
        for f in files:
            if not f.endswith((".cpp", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            if rel.startswith("src/sql_names."):
                continue
            text = open(path, encoding="utf-8").read()
            n = len(quote_splice.findall(text)) + len(concat_sql.findall(text))
            for call in format_calls(text):
                lits = "".join(string_literal.findall(call))
                if qualifier.search(lits) and sql_word.search(lits):
                    args = string_literal.sub("", call)
                    if not re.search(r"schema_sql\(|quote_identifier\(|\bq\b", args):
                        n += 1
                        print(f"  {rel}: a qualifier from a name not quoted by the helpers: {call[:120]!r}")
            # statements (to the next ';') that splice into quotes and name an SQL word
            for lit in string_literal.findall(text):
                if literal_splice.search(lit) and sql_word.search(lit):
                    n += 1
                    print(f"  {rel}: a value between single quotes in SQL: {lit[:120]}")
            if n:
                found[rel] = n
for rel, n in sorted(found.items()):
    check(n <= ALLOWED.get(rel, 0), f"{rel}: {n} hand-quoted splice(s), {ALLOWED.get(rel, 0)} allowed "
          "(use quote_identifier / schema_sql from src/sql_names.h, or bind the value)")
check(len(found) >= 3, f"the scan saw the known JSON / HTML splices ({len(found)} files): it reads the sources")
# The helper itself is used where schemas reach SQL.
users = sum(open(os.path.join(d, f), encoding="utf-8").read().count("schema_sql(")
            for folder in ("src", "udf", "session", "pictures") for d, _, fs in os.walk(os.path.join(root, folder))
            for f in fs if f.endswith(".cpp"))
check(users >= 20, f"schema_sql is how schemas reach SQL ({users} uses)")
finish()
