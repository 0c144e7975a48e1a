-- 8 rank files load into one database. Event counts from shared/traces/MANIFEST.md; uid_base is
-- their running sum (3290, 3290+3424=6714, +3268=9982, +3474=13456, +3310=16766, +3250=20016,
-- +3272=23288); rank / world_size from each file's distributedInfo.
SELECT id, rank, world_size, events, uid_base,
       (SELECT min(uid) FROM event e WHERE e.trace = t.id) AS first_uid,
       (SELECT count(*) FROM event e WHERE e.trace = t.id) AS rows
FROM trace t ORDER BY id;
