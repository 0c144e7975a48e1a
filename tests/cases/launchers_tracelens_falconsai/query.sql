-- Kernel launchers (TraceLens's rule) per op name, against TraceLens's ops_unique_args.csv.
SELECT e.name, count(DISTINCT l.launcher) FROM launch_link l
  JOIN event e ON e.uid = l.launcher JOIN event g ON g.uid = l.gpu
  WHERE g.name NOT LIKE '%nccl%' AND e.kind = 'cpu_op'
  GROUP BY e.name ORDER BY e.name;
SELECT 'ex_UID launchers' AS name, count(*) AS "count(DISTINCT l.launcher)" FROM event
  WHERE uid IN (4, 7, 14, 15, 18, 30, 68, 90, 104, 107, 114, 1256, 1258) AND uid IN (SELECT launcher FROM kernel UNION SELECT launcher FROM launch_link);
