-- The HTML report's title and trace list.
SELECT id, path, rank, world_size FROM main.trace ORDER BY id;
