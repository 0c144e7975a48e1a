-- fleet.db: what went wrong, per rank: rank files that failed (the error), ranks of the world size no file was loaded for, and each rank's loader repairs (check, count, detail); no rows when nothing did
-- problem 'error': a file in fleet_rank with status 'error' (missing, unreadable, corrupt or
-- truncated JSON, no rank, a rank two files claim: detail is the one-line error). 'missing': a
-- rank below the largest world size the loaded ranks report that no loaded file is (ranks are
-- listed up to 1,048,576, whatever a trace claims). 'repair: CHECK': the loader's health rows of
-- a loaded rank (report fleet_repairs; docs/schema.md, health), which that rank's figures include.
WITH RECURSIVE w(r) AS (SELECT 0 WHERE (SELECT max(world_size) FROM fleet_traces) > 0
                        UNION ALL
                        SELECT r + 1 FROM w WHERE r + 1 < min((SELECT max(world_size) FROM fleet_traces), 1048576)),
ok AS (SELECT rank, file FROM fleet_rank WHERE status = 'ok')
SELECT * FROM (
SELECT rank, file, 'error' AS problem, NULL AS count, error AS detail FROM fleet_rank WHERE status = 'error'
UNION ALL
SELECT r, NULL, 'missing', NULL,
       printf('no loaded rank file is rank %d of world size %d', r, (SELECT max(world_size) FROM fleet_traces))
FROM w WHERE r NOT IN (SELECT rank FROM ok)
UNION ALL
SELECT p.rank, ok.file, 'repair: ' || p."check", p.count, p.detail FROM fleet_repairs p JOIN ok ON ok.rank = p.rank)
ORDER BY problem = 'error' DESC, problem = 'missing' DESC, rank, file;
