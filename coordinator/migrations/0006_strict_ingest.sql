-- Strict ingest and runs that cannot be lost track of.
--
-- A metric is defined by its benchmark, name, unit and direction together.
-- Before, the first run that wrote a (benchmark, name) fixed its unit and
-- direction for everyone, so one wrong writer refused every later run of that
-- case. Now a different unit or direction is a different metric row: a run
-- keeps one definition per (benchmark, name), the gate compares a candidate
-- only with baselines of its own definition, and history follows the
-- definition of the newest complete run.
ALTER TABLE metrics DROP CONSTRAINT metrics_benchmark_id_name_key;
ALTER TABLE metrics ADD CONSTRAINT metrics_definition UNIQUE (benchmark_id, name, unit, direction);

-- What a batch held (a digest of its content), so that a batch resent under a
-- stored sequence with different content is refused instead of acknowledged
-- as a duplicate. Batches stored before this migration have none ('').
ALTER TABLE batches ADD COLUMN digest text NOT NULL DEFAULT '';

-- The sample index range of each case a batch holds ([[benchmark key, lowest,
-- highest], ...]), so that a sample index sent twice to one run is found by
-- comparing ranges, reading samples only where ranges overlap.
ALTER TABLE batches ADD COLUMN ranges jsonb NOT NULL DEFAULT '[]';

-- When the coordinator last heard of the run from its agent (OpenRun, a
-- reopen); with the newest batch's received_at it tells how long a running
-- run has been silent, so that the runs of agents that vanished are expired
-- as failed.
ALTER TABLE runs ADD COLUMN heard_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX runs_running ON runs (heard_at) WHERE status = 'running';
