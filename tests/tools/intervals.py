"""Interval arithmetic the end-to-end tests re-implement their references with (kept apart from
tlsql's own: udf/interval_union.h)."""


def merged(spans):
    """The union of (start, end) spans as sorted, disjoint [start, end] lists (empty spans dropped)."""
    out = []
    for s, e in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def union_length(spans):
    """Total length covered by the spans."""
    return sum(e - s for s, e in merged(spans))
