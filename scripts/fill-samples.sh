#!/usr/bin/env bash
# Fills a migrated perfgate database with ROWS sample rows (default
# 10 000 000) through COPY, for the history benchmark of docs/performance.md:
# complete runs on branch main of two cases ("fill/case_0", "fill/case_1")
# with two metrics and SAMPLES samples each (default 1000: 4000 rows a run),
# their batches, cases, summaries (median, mean, spread computed by
# PostgreSQL from the rows) and series points. Fewer samples a run make
# longer series: SAMPLES=25 gives 10 000 runs a series at 1 M rows. Prepare
# the database with `perfgate-coordinator --database ... maintenance`
# (schema and partitions) first.
#
#   scripts/fill-samples.sh "host=127.0.0.1 port=5432 dbname=perfgate user=perfgate" [ROWS [SAMPLES]]
set -euo pipefail

db="${1:?usage: fill-samples.sh CONNINFO [ROWS]}"
rows="${2:-10000000}"
samples="${3:-1000}"
per_run=$(( 4 * samples ))
runs=$(( (rows + per_run - 1) / per_run ))
psql=(psql -d "$db" -v ON_ERROR_STOP=1 -q -X)

echo "fill-samples: $runs runs, $(( runs * per_run )) sample rows"
"${psql[@]}" <<SQL
INSERT INTO agents (name) VALUES ('fill') ON CONFLICT DO NOTHING;
INSERT INTO environments (hash, sku) VALUES ('fill', 'h100-sxm5-80gb') ON CONFLICT DO NOTHING;
INSERT INTO benchmarks (key, suite, name) VALUES ('fill/case_0', 'fill', 'case_0'), ('fill/case_1', 'fill', 'case_1')
  ON CONFLICT DO NOTHING;
INSERT INTO metrics (benchmark_id, name, unit, direction)
  SELECT b.id, m.name, m.unit, m.dir FROM benchmarks b,
    (VALUES ('time_ms', 'ms', 'lower_is_better'), ('tflops', 'TFLOP/s', 'higher_is_better')) m(name, unit, dir)
  WHERE b.suite = 'fill' ON CONFLICT DO NOTHING;
-- Runs 30 s apart over the last day, newest first; fill_runs remembers them.
CREATE TABLE fill_runs AS
  SELECT gen_random_uuid() AS id, now() - g * interval '30 seconds' AS opened FROM generate_series(1, $runs) g;
INSERT INTO runs (id, agent_id, environment_id, sku, branch, commit, trigger, started_at, opened_at, finished_at, status)
  SELECT f.id, a.id, e.id, 'h100-sxm5-80gb', 'main', md5(f.id::text), 'ci', f.opened, f.opened, f.opened + interval '20 seconds',
         'complete'
  FROM fill_runs f, agents a, environments e WHERE a.name = 'fill' AND e.hash = 'fill';
INSERT INTO batches (run_id, sequence, sample_count) SELECT id, 1, $(( 2 * samples )) FROM fill_runs;
INSERT INTO run_cases (run_id, benchmark_id, status)
  SELECT f.id, b.id, 'ok' FROM fill_runs f, benchmarks b WHERE b.suite = 'fill';
SQL

# The rows, in the order a batch writes them: per case, sample, metric.
start=$(date +%s.%N)
"${psql[@]}" -At -F $'\t' -c "SELECT f.id, b.id, m.id FROM fill_runs f, benchmarks b JOIN metrics m ON m.benchmark_id = b.id
                                 WHERE b.suite = 'fill' ORDER BY f.opened, b.id, m.id" |
  awk -F '\t' -v samples="$samples" 'BEGIN { srand(17); OFS = "\t" }
    { key = $1 "\t" $2; if (!(key in seen)) { seen[key] = 1; order[n++] = key } metrics[key] = metrics[key] " " $3 }
    END {
      for (k = 0; k < n; k++) {
        split(substr(metrics[order[k]], 2), ms, " ")
        for (i = 0; i < samples; i++) for (j = 1; j in ms; j++)
          print order[k], ms[j], i, 1 + 0.05 * rand(), "f"
      }
    }' |
  "${psql[@]}" -c "\\copy samples (run_id, benchmark_id, metric_id, idx, value, throttled) FROM STDIN"
echo "fill-samples: COPY took $(echo "$(date +%s.%N) - $start" | bc) s"

"${psql[@]}" <<SQL
INSERT INTO summaries (run_id, metric_id, n, n_throttled, median, mean, stdev, min, max, noise)
  SELECT s.run_id, s.metric_id, count(*), 0, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.value), avg(s.value),
         stddev_samp(s.value), min(s.value), max(s.value), stddev_samp(s.value) / avg(s.value)
  FROM samples s JOIN fill_runs f ON f.id = s.run_id GROUP BY s.run_id, s.metric_id;
INSERT INTO series_points (run_id, metric_id, finished_at, sku, branch, node, commit, median, p5, p95, n,
                           n_throttled, invalid)
  SELECT r.id, s.metric_id, r.finished_at, r.sku, r.branch, r.node, r.commit, s.median, s.p5, s.p95, s.n,
         s.n_throttled, false
  FROM summaries s JOIN runs r ON r.id = s.run_id JOIN fill_runs f ON f.id = r.id;
DROP TABLE fill_runs;
-- As autovacuum would leave them: index-only scans need the visibility map.
VACUUM (ANALYZE) series_points;
ANALYZE;
SQL
echo "fill-samples: done; $("${psql[@]}" -At -c "SELECT count(*) FROM samples") sample rows in the database"
