-- per kernel name: count, total / mean / min / max µs, TFLOP/s, GB/s, achieved % (inductor's --analysis); @top rows
SELECT name, count(*) AS count,
       round(sum(dur) / 1e3, 3) AS total_us, round(avg(dur) / 1e3, 3) AS mean_us,
       round(min(dur) / 1e3, 3) AS min_us, round(max(dur) / 1e3, 3) AS max_us,
       round(sum(f) / sum(dur) / 1e3, 3) AS tflops, round(sum(b) / sum(dur), 3) AS gbps,
       round(avg(pct), 2) AS achieved_pct
FROM (SELECT name, dur, flops(uid) AS f, bytes(uid) AS b, achieved_pct(uid) AS pct FROM kernel)
GROUP BY name ORDER BY sum(dur) DESC LIMIT coalesce(@top, 50);
