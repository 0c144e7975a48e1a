-- Every GPU event whose correlation id is on a runtime/driver call of the trace is linked to it.
SELECT kind, count(*) AS events, count(parent) AS linked FROM gpu GROUP BY kind ORDER BY kind;
