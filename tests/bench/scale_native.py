#!/usr/bin/env python3
"""Scaled copies of the other profilers' samples, for the load benchmark (tests/bench/native.sh):
the records repeated N times, each copy shifted past the last in time and in correlation ids, so
that the copy loads as one longer run of the same work (kernel names, tables, strings unchanged).
  scale_native.py rocprof IN.json[.gz] OUT.json N   kernel dispatches, API calls, copies, markers
  scale_native.py nsys IN.sqlite OUT.sqlite N       kernels, memcpys, memsets, syncs, runtime calls,
                                                   NVTX ranges (rows copied with SQL)"""
import gzip, json, shutil, sqlite3, sys

kind, src, dst, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

if kind == "rocprof":
    doc = json.load(gzip.open(src) if src.endswith(".gz") else open(src))
    for tool in doc["rocprofiler-sdk-tool"]:
        recs = tool["buffer_records"]
        stamps = [r[k] for v in recs.values() for r in v for k in ("start_timestamp", "end_timestamp") if k in r]
        span = max(stamps) - min(stamps) + 1000 if stamps else 0
        corr = max([r.get("correlation_id", {}).get("internal", 0) for v in recs.values() for r in v] or [0]) + 1
        for key, records in recs.items():
            copies = []
            for i in range(1, n):
                for r in records:
                    c = json.loads(json.dumps(r))
                    for k in ("start_timestamp", "end_timestamp"):
                        if k in c:
                            c[k] += i * span
                    if "correlation_id" in c:
                        c["correlation_id"]["internal"] += i * corr
                    if "dispatch_info" in c and "dispatch_id" in c["dispatch_info"]:
                        c["dispatch_info"]["dispatch_id"] += i * corr
                    copies.append(c)
            records.extend(copies)
    with open(dst, "w") as f:
        json.dump(doc, f)
elif kind == "nsys":
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    timed = [t for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                         "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS")
             if t in tables]
    lo, hi = db.execute("SELECT min(s), max(e) FROM (" + " UNION ALL ".join(
        f'SELECT min(start) AS s, max(coalesce("end", start)) AS e FROM {t}' for t in timed) + ")").fetchone()
    span = hi - lo + 1000
    corr = max(db.execute(f"SELECT coalesce(max(correlationId), 0) FROM {t}").fetchone()[0]
               for t in timed if t != "NVTX_EVENTS") + 1
    for t in timed:
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
        base = db.execute(f"SELECT max(rowid) FROM {t}").fetchone()[0]
        for i in range(1, n):
            sel = []
            for c in cols:
                if c in ("start", "end"):
                    sel.append(f'"{c}" + {i * span}')
                elif c == "correlationId":
                    sel.append(f'"{c}" + {i * corr}')
                else:
                    sel.append(f'"{c}"')
            names = ", ".join(f'"{c}"' for c in cols)
            db.execute(f"INSERT INTO {t}({names}) SELECT {', '.join(sel)} FROM {t} WHERE rowid <= {base}")
    db.commit()
    db.execute("VACUUM")
    db.close()
else:
    sys.exit(f"usage: {__doc__}")
