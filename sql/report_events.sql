-- events per kind and category, with their total duration (ms)
SELECT kind, cat, count(*) AS events, round(sum(dur) / 1e6, 3) AS total_ms
FROM event GROUP BY kind, cat ORDER BY kind, events DESC;
