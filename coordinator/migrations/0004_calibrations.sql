-- Calibrations of a node's noise floor (perfgate-agent calibrate): per case
-- and metric, the spread of the log medians of separate A/A processes. A
-- gate uses one for a candidate of the same SKU, node and environment that
-- is not older than the policy's calibration_max_age (docs/calibration.md).
-- Keyed by what it describes, so a newer calibration replaces an older one
-- and one made in another environment (a driver update) stays beside it.
-- benchmark is the key text rather than a reference to benchmarks: a node
-- is calibrated before it has stored any run of a case.
CREATE TABLE calibrations (
  id               bigserial PRIMARY KEY,
  sku              text NOT NULL,
  node             text NOT NULL,
  environment_hash text NOT NULL,
  -- The environment's fields, kept in environments like a run's.
  environment_id   bigint NOT NULL REFERENCES environments (id),
  -- The agent that measured it.
  agent_id         bigint NOT NULL REFERENCES agents (id),
  benchmark        text NOT NULL,
  metric           text NOT NULL,
  unit             text NOT NULL,
  direction        text NOT NULL CHECK (direction IN ('higher_is_better', 'lower_is_better')),
  -- NaN sorts above every number in PostgreSQL, so this also refuses NaN.
  spread           double precision NOT NULL CHECK (spread >= 0 AND spread < 'Infinity'),
  processes        integer NOT NULL CHECK (processes >= 2),
  measured_at      timestamptz NOT NULL,
  stored_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (sku, node, environment_hash, benchmark, metric)
);
