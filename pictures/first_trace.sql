SELECT path FROM @schema.trace ORDER BY id LIMIT 1;
