-- what the loader repaired, skipped or could not link, per trace (see docs/schema.md)
-- (rows without a trace: the capture traces of --capture, named in detail). gpu_events_affected:
-- the GPU events each problem leaves unlinked or misplaced, NULL where not assessed (docs/schema.md).
SELECT coalesce(t.path, '(capture traces)') AS path, h."check", h.count, h.gpu_events_affected, h.example_uid, h.detail
FROM health h LEFT JOIN trace t ON t.id = h.trace
ORDER BY h.trace IS NULL, t.id, h."check";
