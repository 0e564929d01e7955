-- The points of every series, one row per metric of a complete run, kept by
-- CloseRun: history and the dashboard's series read the newest N points, or
-- a time range, of one metric. Read through summaries JOIN runs, that query
-- touched every summary of the metric and sorted all its runs, so its cost
-- followed the series' length; here an index in the series' own order
-- (newest first) answers it by reading the rows it returns, from the index
-- alone: each row carries what a point shows (docs/performance.md, "History
-- in O(answer)"). The reasons a run is invalid for gating stay in runs
-- (they have no bound on their length, an index row has); `invalid` says
-- whether to read them. Deleted with the run, as its summaries.
CREATE TABLE series_points (
  run_id      uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  metric_id   bigint NOT NULL REFERENCES metrics (id),
  finished_at timestamptz NOT NULL,
  sku         text NOT NULL,
  branch      text NOT NULL,
  node        text NOT NULL,
  commit      text NOT NULL,
  median      double precision NOT NULL,
  p5          double precision,
  p95         double precision,
  n           integer NOT NULL,
  n_throttled integer NOT NULL,
  invalid     boolean NOT NULL,
  PRIMARY KEY (run_id, metric_id)
);
-- Newest first over all branches (the dashboard), and within one branch (the
-- gate's history, the CLI); sku and node are filters on rows read in order.
CREATE INDEX series_points_newest ON series_points (metric_id, finished_at DESC, run_id)
  INCLUDE (sku, branch, node, commit, median, p5, p95, n, n_throttled, invalid);
CREATE INDEX series_points_branch ON series_points (metric_id, branch, finished_at DESC, run_id)
  INCLUDE (sku, node, commit, median, p5, p95, n, n_throttled, invalid);

INSERT INTO series_points (run_id, metric_id, finished_at, sku, branch, node, commit, median, p5, p95, n,
                           n_throttled, invalid)
  SELECT r.id, s.metric_id, r.finished_at, r.sku, r.branch, r.node, r.commit, s.median, s.p5, s.p95, s.n,
         s.n_throttled, cardinality(r.invalid_reasons) > 0
    FROM summaries s JOIN runs r ON r.id = s.run_id
   WHERE r.status = 'complete' AND s.n > 0 AND s.median IS NOT NULL;
