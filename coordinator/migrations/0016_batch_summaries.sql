-- A metric's statistics computed when its samples are stored. Most metrics
-- of a run arrive whole in one batch (every case of `perfgate ingest`, every
-- case of an agent run without process blocks): StoreBatch summarizes such a
-- metric from the values it has in hand, while PostgreSQL takes the COPY,
-- and keeps the summary row beside the placeholder; CloseRun then writes it
-- instead of reading the metric's samples back. sample_batches counts the
-- batches that brought samples of the metric; the kept row is used only
-- when it is 1 (a second batch clears it) and the run has no process
-- blocks (their medians need the samples in order).
ALTER TABLE summaries
  ADD COLUMN sample_batches integer NOT NULL DEFAULT 0,
  ADD COLUMN batch_summary  jsonb;
-- Whether the batch counted its metrics into summaries.sample_batches: a
-- run with a batch stored before this version (false) is summarized from
-- its samples, all of them, as before.
ALTER TABLE batches ADD COLUMN summarized boolean NOT NULL DEFAULT false;
