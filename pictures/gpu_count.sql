SELECT count(*) FROM gpu;
