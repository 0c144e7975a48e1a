-- Every tree function against the same answer computed with a recursive CTE over `parent`, for
-- every event that has a parent or children (mismatches must be 0; sizes show the test is not
-- vacuous). Done on all cpu_ops and python frames as roots, and on every kernel for ancestors.
WITH RECURSIVE cte(root, uid, rel) AS (
  SELECT uid, uid, 0 FROM event WHERE kind IN ('cpu_op', 'annotation')
  UNION ALL SELECT cte.root, e.uid, cte.rel + 1 FROM event e JOIN cte ON e.parent = cte.uid),
want AS (SELECT root, uid, rel FROM cte WHERE rel > 0),
got AS (SELECT r.uid AS root, d.uid, d.rel_depth AS rel FROM event r, descendants(r.uid) d
        WHERE r.kind IN ('cpu_op', 'annotation'))
SELECT 'descendants' AS fn, (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM got))
     + (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM want)) AS mismatches,
       (SELECT count(*) FROM want) > 3000 AS nontrivial;

WITH RECURSIVE cte(start, uid, rel) AS (
  SELECT uid, parent, 1 FROM event WHERE kind IN ('kernel', 'memcpy', 'memset', 'python') AND parent IS NOT NULL
  UNION ALL SELECT cte.start, e.parent, cte.rel + 1 FROM event e JOIN cte ON e.uid = cte.uid WHERE e.parent IS NOT NULL),
got AS (SELECT s.uid AS start, a.uid, a.rel_depth FROM event s, ancestors(s.uid) a
        WHERE s.kind IN ('kernel', 'memcpy', 'memset', 'python') AND s.parent IS NOT NULL)
SELECT 'ancestors' AS fn, (SELECT count(*) FROM (SELECT * FROM cte EXCEPT SELECT * FROM got))
     + (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM cte)) AS mismatches,
       (SELECT count(*) FROM cte) > 10000 AS nontrivial;

SELECT 'children' AS fn, (SELECT count(*) FROM (
         SELECT parent, uid FROM event WHERE parent IS NOT NULL
         EXCEPT SELECT p.uid, c.uid FROM event p, children(p.uid) c)) AS mismatches,
       (SELECT count(*) FROM event WHERE parent IS NOT NULL) > 2000 AS nontrivial;

WITH RECURSIVE cte(root, uid) AS (
  SELECT uid, uid FROM op UNION ALL SELECT cte.root, e.uid FROM event e JOIN cte ON e.parent = cte.uid),
want AS (SELECT cte.root, cte.uid FROM cte JOIN event g ON g.uid = cte.uid WHERE g.kind IN ('kernel', 'memcpy', 'memset')),
got AS (SELECT o.uid, l.uid FROM op o, launched(o.uid) l)
SELECT 'launched' AS fn, (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM got))
     + (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM want)) AS mismatches,
       (SELECT count(*) FROM want) > 100 AS nontrivial;

WITH RECURSIVE cte(start, uid, rel) AS (
  SELECT uid, parent, 1 FROM op WHERE parent IS NOT NULL
  UNION ALL SELECT cte.start, e.parent, cte.rel + 1 FROM event e JOIN cte ON e.uid = cte.uid WHERE e.parent IS NOT NULL),
want AS (SELECT start, cte.uid FROM cte JOIN event p ON p.uid = cte.uid WHERE p.kind = 'python'),
got AS (SELECT o.uid, s.uid FROM op o, stack(o.uid) s)
SELECT 'stack' AS fn, (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM got))
     + (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM want)) AS mismatches,
       (SELECT count(*) FROM want) > 1000 AS nontrivial;

-- nearest_source(): torch.profiler's rule, as SQL: the nearest event at or above with '.py(' in its name.
WITH RECURSIVE up(start, uid, rel) AS (
  SELECT uid, uid, 0 FROM op UNION ALL SELECT up.start, e.parent, up.rel + 1 FROM event e JOIN up ON e.uid = up.uid
  WHERE e.parent IS NOT NULL),
want AS (SELECT start, (SELECT e.name FROM up u2 JOIN event e ON e.uid = u2.uid
                        WHERE u2.start = up.start AND e.name GLOB '*.py(*)*' ORDER BY u2.rel LIMIT 1) AS src
         FROM up GROUP BY start)
SELECT 'nearest_source' AS fn, count(*) FILTER (WHERE want.src IS NOT nearest_source(want.start)) AS mismatches,
       count(want.src) > 400 AS nontrivial FROM want;
