-- host events worth optimizing: in the falling phases of GPU queue depth, ranked by z(idle fraction) + 0.6 z(self time), with source locations (torch.profiler _utils BasicEvaluation); @top @rank
-- Per trace (optimizable_events): queue depth = kernels launched but not started, at each launch
-- call and kernel start (memcpy / memset kernels excluded, launches = cudaLaunchKernel*, as torch);
-- GPU idle = from a point of depth 0 to the next point of depth > 0, plus before the first point;
-- falling phase = from a peak of depth >= 4 to the next point of depth 0; ranked: the host events
-- (ops, annotations, python frames, runtime calls) overlapping a falling phase, by the z-score of
-- their idle fraction + 0.6 x the z-score of their self time (torch.std: n - 1).
-- idle_pct: the event's GPU idle time as % of its duration (dur_us), a share, so capped at 100:
-- torch's rule can give an event more idle time than it lasted (130% on a pipeline-parallel
-- trace); the score keeps torch's figure, and the note (about_report.sql, also in `notes`) says
-- how many rows were capped.
SELECT t.rank, e.uid, e.name, round(j.self_ns / 1e3, 3) AS self_us, round(e.dur / 1e3, 3) AS dur_us,
       round(100 * min(j.idle_fraction, 1.0), 2) AS idle_pct, j.queue_depth, round(j.score, 3) AS score,
       nearest_source(e.uid) AS source
FROM trace t, optimizable_events(t.id, coalesce(@top, 10)) j JOIN event e ON e.uid = j.uid
WHERE @rank IS NULL OR t.rank = @rank ORDER BY t.id, j.position;
