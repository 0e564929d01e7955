-- A case that could not measure a metric but knows a bound on it (a knee
-- beyond the rates a sweep covered: at least the top rate, or below the
-- lowest). The gate judges it as a bound, never as a value, so it is stored
-- beside how the case ended; NULL when the case gave none.
ALTER TABLE run_cases
  ADD COLUMN bound_metric text,
  ADD COLUMN bound_kind   text CHECK (bound_kind IN ('at_least', 'at_most')),
  ADD COLUMN bound_value  double precision,
  ADD CONSTRAINT run_cases_bound_whole
    CHECK ((bound_metric IS NULL) = (bound_kind IS NULL) AND (bound_kind IS NULL) = (bound_value IS NULL));
