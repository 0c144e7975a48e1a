SELECT count(*) FROM ancestors();
SELECT count(*) FROM children('x');
SELECT count(*) FROM descendants(99);
SELECT gpu_time(99);
SELECT gpu_time('abc');
SELECT gpu_time(NULL) IS NULL AS null_in_null_out;
SELECT count(*) FROM launched(0, 'nosuchschema');
