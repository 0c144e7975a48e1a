-- tlsql schema: the tables every loaded trace fills (event: see event_table.sql). Column meanings:
-- docs/schema.md.
CREATE TABLE IF NOT EXISTS @schema.trace(
  id INTEGER PRIMARY KEY,      -- 0 for the first file loaded, then 1, 2, ...
  path TEXT,                   -- the file as given on the command line
  uid_base INTEGER,            -- added to each event's position in traceEvents to make its uid
  rank INTEGER,                -- distributedInfo.rank
  world_size INTEGER,          -- distributedInfo.world_size
  events INTEGER,              -- rows in event for this trace: traceEvents' elements, then (--capture)
                               -- the capture-time events copied under graph replays
  bytes INTEGER,               -- JSON text size (uncompressed)
  load_ms REAL,                -- wall time to load this file
  schema_version INTEGER,      -- top-level schemaVersion
  base_time_ns INTEGER,        -- top-level baseTimeNanoseconds
  metadata TEXT                -- every top-level key except traceEvents, as JSON
);
CREATE TABLE IF NOT EXISTS @schema.device(
  trace INTEGER,
  id INTEGER,
  name TEXT,
  vendor TEXT,                 -- 'NVIDIA' or 'AMD' (from the name / warp size), NULL if unknown
  total_memory INTEGER,        -- bytes
  sm_count INTEGER,            -- SMs (NVIDIA) or compute units (AMD)
  compute_capability TEXT,     -- 'major.minor' (AMD: the gfx major.minor, e.g. 9.4 = gfx94x)
  warp_size INTEGER,
  max_threads_per_block INTEGER,
  shared_mem_per_block INTEGER,
  regs_per_block INTEGER,
  properties TEXT,             -- the device's whole deviceProperties object, as JSON
  PRIMARY KEY(trace, id)
);
CREATE TABLE IF NOT EXISTS @schema.health(
  trace INTEGER,
  "check" TEXT,
  count INTEGER,
  example_uid INTEGER,
  detail TEXT,
  gpu_events_affected INTEGER  -- the row's impact; NULL: not assessed (docs/schema.md)
);
-- GPU event -> its launch call and TraceLens's kernel launcher, filled by the loader.
CREATE TABLE IF NOT EXISTS @schema.launch_link(
  gpu INTEGER PRIMARY KEY,
  runtime INTEGER NOT NULL,
  launcher INTEGER NOT NULL
);

-- Graphs read from capture traces (--capture), and the graph each attributed graph launch replayed
-- (docs/inference.md).
CREATE TABLE IF NOT EXISTS @schema.captured_graph(
  id INTEGER PRIMARY KEY,
  path TEXT,                   -- the capture trace
  capture INTEGER,             -- the nth begin-capture .. end-capture in it, from 0
  nodes INTEGER,               -- launch calls (kernels, copies, fills) captured
  batch_size INTEGER,          -- from TraceLens's execution_details.json, when given
  mode TEXT                    -- likewise (FULL, PIECEWISE, ...)
);
CREATE TABLE IF NOT EXISTS @schema.replay_graph(
  launch INTEGER PRIMARY KEY,  -- uid of a graph launch call whose replay was attributed
  graph INTEGER,               -- captured_graph.id (NULL: matched to an eager run)
  eager_start INTEGER,         -- else the uid of the first GPU event of the eager run of the same kernels
  rule TEXT,                   -- 'exact', 'near' (all but a few nodes) or 'eager'
  tied INTEGER,                -- graphs that matched it equally, of which its place chose (1: no tie)
  missing_nodes INTEGER,       -- the graph's nodes that ran no GPU event in this replay (near)
  extra_events INTEGER         -- its GPU events that no node launched (near): left under the graph launch
);

-- The schema's own name, whatever it is attached under (a virtual table of tlsql's: SQLite tells it):
-- tlsql's views pass it to the functions so that other.op_summary computes over other's events.
CREATE VIRTUAL TABLE IF NOT EXISTS @schema.tlsql_schema USING tlsql_schema;
-- A random token naming this database. Databases saved before tlsql_schema existed have views
-- that pass 'db:' || token to the functions (a token held by two attached databases, a file and
-- its copy, is refused as ambiguous).
CREATE TABLE IF NOT EXISTS @schema.tlsql_self(token TEXT NOT NULL);
INSERT INTO @schema.tlsql_self SELECT lower(hex(randomblob(8))) WHERE NOT EXISTS (SELECT 1 FROM @schema.tlsql_self);
