-- The rest of the per-run summary (methodology.md §4): spread and tails, and
-- the seeded bootstrap interval of the median. NULL for runs closed before.
ALTER TABLE summaries
  ADD COLUMN mad            double precision,
  ADD COLUMN p5             double precision,
  ADD COLUMN p95            double precision,
  ADD COLUMN median_ci_low  double precision,
  ADD COLUMN median_ci_high double precision;
