-- Kernel launchers (TraceLens's rule) per op name, against TraceLens's ops_unique_args.csv.
SELECT e.name, count(DISTINCT l.launcher) FROM launch_link l
  JOIN event e ON e.uid = l.launcher JOIN event g ON g.uid = l.gpu
  WHERE g.name NOT LIKE '%nccl%' AND e.kind = 'cpu_op'
  GROUP BY e.name ORDER BY e.name;
SELECT 'ex_UID launchers' AS name, count(*) AS "count(DISTINCT l.launcher)" FROM event
  WHERE uid IN (8, 15, 19, 23, 27, 29, 36, 37, 41, 48, 86, 123, 126, 133, 463, 477) AND uid IN (SELECT launcher FROM kernel UNION SELECT launcher FROM launch_link);
