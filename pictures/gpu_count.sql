SELECT count(*) FROM @schema.gpu;
