SELECT 'inner' AS here;
SELECT nope FROM event;
