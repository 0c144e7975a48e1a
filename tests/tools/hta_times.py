"""HTA's parser's rule for float timestamps, which the end-to-end tests compare HTA's numbers on
(re-implemented here, apart from tlsql: tlsql keeps the ns)."""
import gzip
import json
import math


def trace_events(path):
    """The trace document (.json or .json.gz) and its event list."""
    with open(path, "rb") as f:
        raw = f.read()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return doc, doc["traceEvents"] if isinstance(doc, dict) else doc


def rounded_as_hta(path, out):
    """HTA's parser, when the times are floats: ts rounded up, ts + dur down, both whole µs. On such
    traces HTA's numbers are those of a copy rounded so: written to `out`, whose path is returned
    (`path` itself when no time is a float)."""
    doc, events = trace_events(path)
    if not any(isinstance(e.get("ts"), float) for e in events):
        return path
    for e in events:
        if isinstance(e.get("ts"), (int, float)):
            end = e["ts"] + e["dur"] if isinstance(e.get("dur"), (int, float)) else None
            e["ts"] = math.ceil(e["ts"])
            if end is not None:
                e["dur"] = math.floor(end) - e["ts"]
    with open(out, "w") as f:
        json.dump(doc, f)
    return out
