-- Each trace's rank (its id where the trace has none): the timeline's lane labels.
SELECT id, coalesce(rank, id) FROM @schema.trace;
