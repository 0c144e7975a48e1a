SELECT count(*) FROM event;
SELECT 1;

SELECT nope
  FROM event;
SELECT 2;
