-- Built once after the bulk insert (cheaper than maintaining them row by row).
CREATE INDEX IF NOT EXISTS @schema.event_parent ON event(parent);
CREATE INDEX IF NOT EXISTS @schema.event_correlation ON event(correlation) WHERE correlation IS NOT NULL;
-- (kind, trace): the per-trace counts by kind (summary) read the index alone.
CREATE INDEX IF NOT EXISTS @schema.event_kind ON event(kind, trace);
