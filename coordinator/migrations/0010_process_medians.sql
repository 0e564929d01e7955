-- The medians of the processes behind a metric of a run whose samples came
-- from several processes (a side of `perfgate-agent ab`: run details
-- "ab_blocks" or "ab_blocks:KEY"), in process order, as the gate counts
-- them. CloseRun computes them from the unthrottled samples in sample order,
-- so a gate of such runs reads summaries only, never the samples. NULL for
-- a run of one process (its summary's median is its one value) and for
-- runs closed before this version: the gate reads their samples, as before.
ALTER TABLE summaries ADD COLUMN process_medians double precision[];
