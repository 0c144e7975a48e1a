-- per rank: GPU busy / idle / computation / communication / memcpy time, exposed comm and memcpy (TraceLens gpu_timeline: type, time ms, percent); @steps @rank @linked @iteration @phase
-- The rows of timeline_ranks (its comments define each figure and parameter) without the rank
-- column, TraceLens's layout for one trace. With several traces loaded, `timeline` runs
-- timeline_ranks instead (sql/fallback_report.sql): a report's columns do not change with its
-- parameters or rows, so that report_timeline in a host has one shape (docs/reports.md).
SELECT type, "time ms", percent
FROM report_timeline_ranks(json_object('steps', @steps, 'rank', @rank, 'linked', @linked, 'iteration', @iteration,
                                       'phase', @phase));
