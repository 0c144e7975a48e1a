-- Run after a trace's rows are in: its derived trace and device columns, and odd_metadata's health row.
-- @trace (the trace's id) is a bound parameter: the statements are prepared once for a
-- session's loads into a schema (TraceWriter, src/db_writer.h).
UPDATE @schema.trace SET
  metadata = json(metadata),
  rank = json_extract(metadata, '$.distributedInfo.rank'),
  world_size = json_extract(metadata, '$.distributedInfo.world_size'),
  schema_version = json_extract(metadata, '$.schemaVersion'),
  base_time_ns = json_extract(metadata, '$.baseTimeNanoseconds')
WHERE id = @trace AND json_valid(metadata);
INSERT OR REPLACE INTO @schema.device(trace, id, name, vendor, total_memory, sm_count, compute_capability,
                              warp_size, max_threads_per_block, shared_mem_per_block, regs_per_block, properties)
SELECT @trace,
       coalesce(d.value ->> '$.id', d.key),
       d.value ->> '$.name',
       CASE WHEN d.value ->> '$.name' LIKE '%AMD%' OR d.value ->> '$.name' LIKE '%Radeon%'
                 OR d.value ->> '$.name' LIKE '%Instinct%' OR d.value ->> '$.warpSize' = 64 THEN 'AMD'
            WHEN d.value ->> '$.name' LIKE '%NVIDIA%' OR d.value ->> '$.name' LIKE 'Tesla%'
                 OR d.value ->> '$.warpSize' = 32 THEN 'NVIDIA' END,
       d.value ->> '$.totalGlobalMem',
       coalesce(d.value ->> '$.numSms', d.value ->> '$.multiProcessorCount'),
       coalesce(d.value ->> '$.computeMajor', d.value ->> '$.major') || '.' ||
         coalesce(d.value ->> '$.computeMinor', d.value ->> '$.minor'),
       d.value ->> '$.warpSize',
       d.value ->> '$.maxThreadsPerBlock',
       d.value ->> '$.sharedMemPerBlock',
       d.value ->> '$.regsPerBlock',
       d.value
FROM @schema.trace t, json_each(coalesce(t.metadata -> '$.deviceProperties', t.metadata -> '$.computeProperties')) d
WHERE t.id = @trace AND json_valid(t.metadata) AND d.type = 'object';
-- Metadata that is JSON but not of the shape Kineto writes is kept in trace.metadata and noted.
INSERT INTO @schema.health(trace, "check", count, example_uid, detail)
SELECT @trace, 'odd_metadata', n, NULL,
       'deviceProperties / computeProperties entries or distributedInfo that are not objects: kept in trace.metadata, not read'
FROM (SELECT (SELECT count(*) FROM json_each(t.metadata, '$.deviceProperties') d WHERE d.type <> 'object')
           + (SELECT count(*) FROM json_each(t.metadata, '$.computeProperties') d WHERE d.type <> 'object')
           + coalesce(json_type(t.metadata, '$.distributedInfo') <> 'object', 0) AS n
      FROM @schema.trace t WHERE t.id = @trace AND json_valid(t.metadata))
WHERE n > 0;
