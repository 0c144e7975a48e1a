-- The args members queries use most, as columns of the saved event table (run once, after its rows
-- are inserted: see event_table.sql).
ALTER TABLE @schema.event ADD COLUMN input_dims TEXT GENERATED ALWAYS AS (args -> '$."Input Dims"') VIRTUAL;
ALTER TABLE @schema.event ADD COLUMN input_types TEXT GENERATED ALWAYS AS (args -> '$."Input type"') VIRTUAL;
ALTER TABLE @schema.event ADD COLUMN input_strides TEXT GENERATED ALWAYS AS (args -> '$."Input Strides"') VIRTUAL;
ALTER TABLE @schema.event ADD COLUMN concrete_inputs TEXT GENERATED ALWAYS AS (args -> '$."Concrete Inputs"') VIRTUAL;
