-- perfgate schema, version 1. Applied by Store::Migrate() in one transaction,
-- under an advisory lock, after it has created schema_migrations itself.
-- Rows that describe a run (cases, batches, summaries, reports) are deleted
-- with it, so retention is one DELETE FROM runs.

-- Agents register once and are refreshed on every registration.
CREATE TABLE agents (
  id            bigserial PRIMARY KEY,
  name          text NOT NULL UNIQUE,
  hostname      text NOT NULL DEFAULT '',
  version       text NOT NULL DEFAULT '',
  registered_at timestamptz NOT NULL DEFAULT now(),
  last_seen     timestamptz NOT NULL DEFAULT now()
);

-- Environments are deduplicated by Environment::Hash(): thousands of runs on
-- one fleet share a handful of environments.
CREATE TABLE environments (
  id     bigserial PRIMARY KEY,
  hash   text NOT NULL UNIQUE,
  sku    text NOT NULL,
  fields jsonb NOT NULL DEFAULT '{}'::jsonb
);

-- Run ids are made by the agent (a resend is recognised by its id).
-- sku is copied from the environment so that the gate's baseline query is
-- served by one index on runs alone.
CREATE TABLE runs (
  id             uuid PRIMARY KEY,
  agent_id       bigint NOT NULL REFERENCES agents (id),
  environment_id bigint NOT NULL REFERENCES environments (id),
  sku            text NOT NULL,
  repo           text NOT NULL DEFAULT '',
  branch         text NOT NULL DEFAULT '',
  commit         text NOT NULL DEFAULT '',
  parent_commits text[] NOT NULL DEFAULT '{}',
  trigger        text NOT NULL,
  ci_job         text NOT NULL DEFAULT '',
  node           text NOT NULL DEFAULT '',
  started_at     timestamptz NOT NULL,
  finished_at    timestamptz,
  status         text NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'complete', 'failed')),
  failure_reason text NOT NULL DEFAULT '',
  CHECK ((status = 'running') = (finished_at IS NULL))
);
-- Baseline lookup (FindBaselineRuns) and history filters.
CREATE INDEX runs_branch_sku_finished ON runs (branch, sku, finished_at DESC);
-- ListRuns without filters: newest first.
CREATE INDEX runs_started ON runs (started_at DESC);

-- Benchmarks are global: one row per BenchmarkId::Key().
CREATE TABLE benchmarks (
  id     bigserial PRIMARY KEY,
  key    text NOT NULL UNIQUE,
  suite  text NOT NULL,
  name   text NOT NULL,
  params jsonb NOT NULL DEFAULT '{}'::jsonb
);

-- A benchmark's metrics. Unit and direction are fixed once stored: a number in
-- ms and one in us under one name would make every comparison wrong.
CREATE TABLE metrics (
  id           bigserial PRIMARY KEY,
  benchmark_id bigint NOT NULL REFERENCES benchmarks (id),
  name         text NOT NULL,
  unit         text NOT NULL,
  direction    text NOT NULL CHECK (direction IN ('higher_is_better', 'lower_is_better')),
  UNIQUE (benchmark_id, name)
);

-- Every case a run reported, with how it ended ('unspecified' until the agent
-- sends the case's final status). noise is the agent's own estimate.
CREATE TABLE run_cases (
  run_id       uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  benchmark_id bigint NOT NULL REFERENCES benchmarks (id),
  status       text NOT NULL DEFAULT 'unspecified'
               CHECK (status IN ('unspecified', 'ok', 'timed_out', 'skipped', 'failed')),
  reason       text NOT NULL DEFAULT '',
  noise        double precision NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, benchmark_id)
);

-- One row per stored batch: the primary key is what recognises a resent batch
-- (INSERT ... ON CONFLICT DO NOTHING), and CloseRun checks 1..last are here.
CREATE TABLE batches (
  run_id       uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  sequence     bigint NOT NULL CHECK (sequence >= 1),
  received_at  timestamptz NOT NULL DEFAULT now(),
  sample_count integer NOT NULL,
  PRIMARY KEY (run_id, sequence)
);

-- Every sample, one row per (sample, metric) rather than one row per sample
-- with a values array in metric order:
--  * a benchmark's metrics may grow between suite versions; an array would tie
--    the meaning of values[i] to one ordering of them forever, a metric_id
--    column does not;
--  * summaries, the gate's A/B comparison and history read one metric at a
--    time, which here is an index range scan instead of unnesting arrays;
--  * most cases report one to three metrics, so the extra row headers cost
--    little next to keeping every sample.
-- Written only with COPY. Partitioned by time (received_at) so that old months
-- can be detached and dropped cheaply; rows land in the default partition
-- until monthly partitions are attached. No foreign keys: COPY would check one
-- per row, and StoreBatch writes only ids it has just looked up under the
-- run's row lock. Deduplication is done by batches, not by a unique key here.
CREATE TABLE samples (
  run_id       uuid NOT NULL,
  benchmark_id bigint NOT NULL,
  metric_id    bigint NOT NULL,
  idx          integer NOT NULL,
  value        double precision NOT NULL,
  throttled    boolean NOT NULL DEFAULT false,
  received_at  timestamptz NOT NULL DEFAULT now()
) PARTITION BY RANGE (received_at);
CREATE TABLE samples_default PARTITION OF samples DEFAULT;
-- CloseRun and per-run reads: all samples of a run, grouped by metric.
CREATE INDEX samples_run_metric ON samples (run_id, metric_id, idx);

-- Per-run statistics of each metric over unthrottled samples. A row is created
-- (statistics NULL) when a run first reports the metric and filled by
-- CloseRun, so a case that ends with no samples still has its summary row.
CREATE TABLE summaries (
  run_id      uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  metric_id   bigint NOT NULL REFERENCES metrics (id),
  n           integer NOT NULL DEFAULT 0,
  n_throttled integer NOT NULL DEFAULT 0,
  median      double precision,
  mean        double precision,
  stdev       double precision,
  min         double precision,
  max         double precision,
  noise       double precision,
  PRIMARY KEY (run_id, metric_id)
);
-- History of one metric across runs.
CREATE INDEX summaries_metric ON summaries (metric_id);

CREATE TABLE gate_reports (
  id               bigserial PRIMARY KEY,
  candidate_run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  baseline_branch  text NOT NULL DEFAULT '',
  outcome          text NOT NULL,
  report           jsonb NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gate_reports_candidate ON gate_reports (candidate_run_id);
