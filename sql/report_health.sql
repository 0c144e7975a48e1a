-- what the loader repaired, skipped or could not link, per trace (see docs/schema.md)
SELECT t.path, h."check", h.count, h.example_uid, h.detail
FROM health h JOIN trace t ON t.id = h.trace
ORDER BY t.id, h."check";
