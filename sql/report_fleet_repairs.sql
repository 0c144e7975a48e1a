-- per rank and loader check (what `tlsql fleet` stores as fleet.db's fleet_repairs): what the loader repaired or skipped, as the health table counts it
-- The health table's rows with the rank instead of the trace id (example_uid is left out: a uid
-- means nothing outside its own load). fleet_health lists them beside the ranks that failed.
SELECT t.rank, h."check", h.count, h.detail
FROM health h JOIN trace t ON t.id = h.trace
ORDER BY t.rank, h.trace, h."check";
