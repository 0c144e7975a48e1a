-- Views over event. Created after loading; they follow the schema they live in.
CREATE VIEW IF NOT EXISTS @schema.op AS SELECT * FROM event WHERE kind = 'cpu_op';
CREATE VIEW IF NOT EXISTS @schema.python AS SELECT * FROM event WHERE kind = 'python';
CREATE VIEW IF NOT EXISTS @schema.annotation AS SELECT * FROM event WHERE kind IN ('annotation', 'gpu_annotation');
CREATE VIEW IF NOT EXISTS @schema.runtime AS SELECT * FROM event WHERE kind IN ('runtime', 'driver');
CREATE VIEW IF NOT EXISTS @schema.gpu AS SELECT * FROM event WHERE kind IN ('kernel', 'memcpy', 'memset');
CREATE VIEW IF NOT EXISTS @schema.kernel AS
  SELECT e.*,
         l.runtime AS runtime,
         l.launcher AS launcher,
         e.args -> '$.grid' AS grid,
         e.args -> '$.block' AS block,
         e.args ->> '$."registers per thread"' AS registers,
         e.args ->> '$."shared memory"' AS shared_memory,
         e.args ->> '$."blocks per SM"' AS blocks_per_sm,
         e.args ->> '$."warps per SM"' AS warps_per_sm,
         e.args ->> '$."est. achieved occupancy %"' AS occupancy_pct,
         e.args ->> '$.queued' AS queued,
         e.args ->> '$.context' AS context
  FROM event e LEFT JOIN launch_link l ON l.gpu = e.uid
  WHERE e.kind = 'kernel';
CREATE VIEW IF NOT EXISTS @schema.launch AS
  SELECT l.runtime AS runtime,
         l.gpu AS gpu,
         CASE WHEN l.launcher <> l.runtime THEN l.launcher END AS op,
         g.correlation AS correlation,
         g.ts - r.ts AS delay          -- ns from the launch call's start to the GPU work's start
  FROM launch_link l JOIN event g ON g.uid = l.gpu JOIN event r ON r.uid = l.runtime;
CREATE VIEW IF NOT EXISTS @schema.thread AS
  SELECT trace, pid, tid, args ->> '$.name' AS name FROM event WHERE kind = 'meta' AND name = 'thread_name';
CREATE VIEW IF NOT EXISTS @schema.process AS
  SELECT trace, pid, args ->> '$.name' AS name FROM event WHERE kind = 'meta' AND name = 'process_name';
