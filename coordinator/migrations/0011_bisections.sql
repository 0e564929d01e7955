-- Bisections (docs/bisect.md): `perfgate bisect` narrowing a regression (or
-- an explicit good..bad range) to the commit that carries it. The job keeps
-- the plan (the first-parent commits between the endpoints, oldest first)
-- and how probes are built and measured, so that an interrupted bisection
-- resumes from its stored probes; each probe is one interleaved A/B of a
-- commit against the good endpoint, with its verdict.
CREATE TABLE bisections (
  id              bigserial PRIMARY KEY,
  -- The regression it was started for; NULL for an explicit range.
  regression_id   bigint REFERENCES regressions (id) ON DELETE SET NULL,
  good_commit     text NOT NULL,
  bad_commit      text NOT NULL,
  -- The case and metric judged; empty until the first probe names them.
  benchmark       text NOT NULL DEFAULT '',
  metric          text NOT NULL DEFAULT '',
  commits         jsonb NOT NULL,
  settings        jsonb NOT NULL DEFAULT '{}',
  state           text NOT NULL DEFAULT 'running'
                  CHECK (state IN ('running', 'culprit', 'no_culprit', 'range')),
  -- The regression's size as measured at the endpoints (> 0 worse).
  regression_size double precision,
  culprit         text NOT NULL DEFAULT '',
  -- The culprit's change against the good endpoint and its 95 % interval.
  change          double precision,
  change_ci_low   double precision,
  change_ci_high  double precision,
  -- For 'range': the narrowest range it could name (last clean, first carrying).
  range_good      text NOT NULL DEFAULT '',
  range_bad       text NOT NULL DEFAULT '',
  summary         text NOT NULL DEFAULT '',
  created_by      text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bisections_regression ON bisections (regression_id, id DESC);

-- One measurement of one commit: attempt 1, then more rounds (attempt 2, ...)
-- while it is neither carrying nor clean.
CREATE TABLE bisection_probes (
  id             bigserial PRIMARY KEY,
  bisection_id   bigint NOT NULL REFERENCES bisections (id) ON DELETE CASCADE,
  commit         text NOT NULL,
  attempt        integer NOT NULL CHECK (attempt >= 1),
  verdict        text NOT NULL CHECK (verdict IN ('carries', 'clean', 'undecided', 'failed')),
  change         double precision,
  change_ci_low  double precision,
  change_ci_high double precision,
  p_value        double precision,
  -- What the probe was judged against: half the regression's size, or at
  -- the bad endpoint the smallest change worth bisecting.
  threshold      double precision NOT NULL,
  rounds         integer NOT NULL DEFAULT 0,
  note           text NOT NULL DEFAULT '',
  at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (bisection_id, commit, attempt)
);
CREATE INDEX bisection_probes_bisection ON bisection_probes (bisection_id, id);
