-- The event table of a saved database. A freshly loaded one serves the same columns from a
-- virtual table over the loader's memory (src/event_table.cpp); keep the two in step.
CREATE TABLE IF NOT EXISTS @schema.event(
  uid INTEGER PRIMARY KEY,     -- trace.uid_base + position in traceEvents
  trace INTEGER NOT NULL,
  kind TEXT NOT NULL,          -- normalized category, see docs/schema.md
  cat TEXT,                    -- the category as written in the trace
  name TEXT,
  ph TEXT,                     -- phase: X, B, E, i, s, f, M, C, ...
  pid,                         -- integer, or text where the trace writes a label ("Spans")
  tid,
  ts INTEGER,                  -- ns, exact from the decimal µs text
  dur INTEGER,                 -- ns
  end INTEGER,                 -- ts + dur, ns
  parent INTEGER,              -- uid of the parent in the call tree
  depth INTEGER,               -- 0 for roots
  step INTEGER,                -- N of the enclosing ProfilerStep#N (GPU work: its launch's)
  stream INTEGER,
  device INTEGER,
  correlation INTEGER,
  external_id INTEGER,
  seq INTEGER,                 -- args "Sequence number"
  fwd INTEGER,                 -- for backward ops: uid of the forward op
  flow_id,                     -- flow events: their "id"
  args TEXT                    -- the args object, as JSON text
);
-- input_dims, input_types, input_strides, concrete_inputs: event_generated.sql, added after the
-- rows are in (SQLite evaluates generated columns on every INSERT, even VIRTUAL ones: +80% save time).
