-- Run details (volatile facts the agent recorded: device UUIDs, temperatures,
-- current clocks, Slurm ids) and the reasons a run is invalid for gating
-- (methodology.md §3). Existing runs get none of either.
ALTER TABLE runs ADD COLUMN details jsonb NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN invalid_reasons text[] NOT NULL DEFAULT '{}';
