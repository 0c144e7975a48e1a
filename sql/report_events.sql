-- events per kind and category, with their total duration (ms)
-- (Grouped in a subquery: the event table then hands its rows over by kind and cat, no sort.)
SELECT * FROM (SELECT kind, cat, count(*) AS events, round(sum(dur) / 1e6, 3) AS total_ms
               FROM event GROUP BY kind, cat)
ORDER BY kind, events DESC;
