-- Regressions found on tracked branches (docs/dashboard.md): a level shift of
-- one series (benchmark, metric, SKU, branch) that E-divisive found after a
-- run of the branch closed and that is worse than the policy's tolerance.
-- One row per change: first_bad_run_id is unique within a series, and the
-- detector also treats a stored change a few runs away as the same one.
CREATE TABLE regressions (
  id               bigserial PRIMARY KEY,
  benchmark        text NOT NULL,
  metric           text NOT NULL,
  sku              text NOT NULL,
  branch           text NOT NULL,
  unit             text NOT NULL DEFAULT '',
  direction        text NOT NULL CHECK (direction IN ('higher_is_better', 'lower_is_better')),
  -- The last commit measured at the old level and the first at the new one.
  good_commit      text NOT NULL DEFAULT '',
  bad_commit       text NOT NULL,
  first_bad_run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  median_before    double precision NOT NULL,
  median_after     double precision NOT NULL,
  -- Relative change, > 0 worse for the metric's direction (0.08 = 8 % worse).
  change           double precision NOT NULL,
  p_value          double precision NOT NULL,
  state            text NOT NULL DEFAULT 'new'
                   CHECK (state IN ('new', 'acknowledged', 'investigating', 'fixed', 'accepted', 'invalid')),
  fixed_by_commit  text NOT NULL DEFAULT '',
  detected_at      timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (benchmark, metric, sku, branch, first_bad_run_id)
);
CREATE INDEX regressions_state ON regressions (state, detected_at DESC);

-- Every change of a regression's state, with who made it, when, and why.
-- The row of detection itself is the first ('' to 'new').
CREATE TABLE regression_events (
  id            bigserial PRIMARY KEY,
  regression_id bigint NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
  from_state    text NOT NULL DEFAULT '',
  to_state      text NOT NULL,
  actor         text NOT NULL,
  note          text NOT NULL DEFAULT '',
  commit        text NOT NULL DEFAULT '',
  at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX regression_events_regression ON regression_events (regression_id, id);
