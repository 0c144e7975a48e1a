-- histogram of the durations of kernels shorter than @threshold_us (default 10), per rank, in @bins equal bins (default 100) from the shortest to the longest, as TraceLens's short-kernel study (numpy.histogram); @threshold_us @bins
-- The kernels of report short_kernels (every GPU kernel with duration < @threshold_us), their µs
-- binned as numpy.histogram(values, bins=@bins) bins them: edges lo + k * (hi - lo) / @bins from the
-- shortest (lo) to the longest (hi) (lo - 0.5 to hi + 0.5 when all are equal), each bin [start, end)
-- but the last [start, end]; a value goes to the bin numpy's edge comparisons give (its index from
-- (v - lo) * (@bins / (hi - lo)), moved down when below its bin's start, up when at or above the
-- next edge). Every bin is a row, empty ones too. @bins: 1 to 10000.
WITH RECURSIVE
  v AS (SELECT k.trace, k.dur / 1e3 AS us FROM event k WHERE k.kind = 'kernel' AND k.dur < coalesce(@threshold_us, 10) * 1e3),
  nb AS (SELECT max(1, min(coalesce(@bins, 100), 10000)) AS n),
  r AS (SELECT trace, CASE WHEN min(us) = max(us) THEN min(us) - 0.5 ELSE min(us) END AS lo,
               CASE WHEN min(us) = max(us) THEN max(us) + 0.5 ELSE max(us) END AS hi
        FROM v GROUP BY trace),
  k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k, nb WHERE i + 1 < nb.n),
  edges AS (SELECT r.trace, k.i, r.lo + k.i * ((r.hi - r.lo) / nb.n) AS start,
                   CASE WHEN k.i + 1 = nb.n THEN r.hi ELSE r.lo + (k.i + 1) * ((r.hi - r.lo) / nb.n) END AS stop
            FROM r CROSS JOIN k CROSS JOIN nb),
  guess AS (SELECT v.trace, v.us, min(CAST((v.us - r.lo) * (nb.n * 1.0 / (r.hi - r.lo)) AS INTEGER), nb.n - 1) AS i
            FROM v JOIN r ON r.trace = v.trace CROSS JOIN nb),
  placed AS (SELECT g.trace, CASE WHEN g.us < e.start THEN g.i - 1
                                  WHEN g.us >= e.stop AND g.i <> nb.n - 1 THEN g.i + 1 ELSE g.i END AS i
             FROM guess g JOIN edges e ON e.trace = g.trace AND e.i = g.i CROSS JOIN nb),
  counts AS (SELECT trace, i, count(*) AS count FROM placed GROUP BY trace, i)
SELECT t.rank, e.i AS bin, e.start AS bin_start, e.stop AS bin_end, coalesce(c.count, 0) AS count
FROM edges e JOIN trace t ON t.id = e.trace LEFT JOIN counts c ON c.trace = e.trace AND c.i = e.i
ORDER BY t.rank, e.trace, e.i;
