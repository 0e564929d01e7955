#include "coordinator/domain/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfgate::coordinator {
namespace {

// A label value with \, " and newline escaped as the format requires.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Header(std::string& out, const char* name, const char* type, const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

void Metrics::BatchStored(uint64_t samples, double seconds, bool duplicate) {
  std::lock_guard<std::mutex> lock(mu_);
  ++batches_;
  if (duplicate) ++duplicate_batches_;
  samples_ += samples;
  size_t i = 0;
  while (i < kLatencyBuckets.size() && seconds > kLatencyBuckets[i]) ++i;
  ++latency_counts_[i];
  latency_sum_ += seconds;
}

void Metrics::BatchRefused() {
  std::lock_guard<std::mutex> lock(mu_);
  ++refused_batches_;
}

void Metrics::GateOutcome(const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  ++gates_[outcome];
}

void Metrics::StoreError(const std::string& operation) {
  std::lock_guard<std::mutex> lock(mu_);
  ++store_errors_[operation];
}

void Metrics::RegressionDetected() {
  std::lock_guard<std::mutex> lock(mu_);
  ++regressions_;
}

void Metrics::RegressionCheck() {
  std::lock_guard<std::mutex> lock(mu_);
  ++regression_checks_;
}

void Metrics::RunExpired() {
  std::lock_guard<std::mutex> lock(mu_);
  ++runs_expired_;
}

std::string Metrics::Render(std::optional<int64_t> open_runs, std::optional<double> standby_lag_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  Header(out, "perfgate_ingest_batches_total", "counter", "Result batches stored, resends included.");
  absl::StrAppend(&out, "perfgate_ingest_batches_total ", batches_, "\n");
  Header(out, "perfgate_ingest_duplicate_batches_total", "counter",
         "Batches recognised as resends (nothing written).");
  absl::StrAppend(&out, "perfgate_ingest_duplicate_batches_total ", duplicate_batches_, "\n");
  Header(out, "perfgate_ingest_refused_batches_total", "counter", "Batches refused.");
  absl::StrAppend(&out, "perfgate_ingest_refused_batches_total ", refused_batches_, "\n");
  Header(out, "perfgate_ingest_samples_total", "counter", "Samples written by stored batches.");
  absl::StrAppend(&out, "perfgate_ingest_samples_total ", samples_, "\n");
  Header(out, "perfgate_ingest_batch_seconds", "histogram", "Time to store one batch.");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    cumulative += latency_counts_[i];
    absl::StrAppend(&out, "perfgate_ingest_batch_seconds_bucket{le=\"",
                    absl::StrFormat("%g", kLatencyBuckets[i]), "\"} ", cumulative, "\n");
  }
  cumulative += latency_counts_.back();
  absl::StrAppend(&out, "perfgate_ingest_batch_seconds_bucket{le=\"+Inf\"} ", cumulative, "\n");
  absl::StrAppend(&out, "perfgate_ingest_batch_seconds_sum ", absl::StrFormat("%.6f", latency_sum_), "\n");
  absl::StrAppend(&out, "perfgate_ingest_batch_seconds_count ", cumulative, "\n");
  Header(out, "perfgate_gates_total", "counter", "Gates evaluated, by outcome.");
  for (const auto& [outcome, n] : gates_) {
    absl::StrAppend(&out, "perfgate_gates_total{outcome=\"", Label(outcome), "\"} ", n, "\n");
  }
  Header(out, "perfgate_store_errors_total", "counter",
         "Operations that failed in the store (connection lost, internal), by operation.");
  for (const auto& [op, n] : store_errors_) {
    absl::StrAppend(&out, "perfgate_store_errors_total{operation=\"", Label(op), "\"} ", n, "\n");
  }
  Header(out, "perfgate_regressions_detected_total", "counter", "Regressions stored by detection.");
  absl::StrAppend(&out, "perfgate_regressions_detected_total ", regressions_, "\n");
  Header(out, "perfgate_regression_checks_total", "counter", "Closed runs checked for regressions.");
  absl::StrAppend(&out, "perfgate_regression_checks_total ", regression_checks_, "\n");
  Header(out, "perfgate_runs_expired_total", "counter",
         "Runs of silent agents closed as failed by this coordinator (one replica each).");
  absl::StrAppend(&out, "perfgate_runs_expired_total ", runs_expired_, "\n");
  if (open_runs) {
    Header(out, "perfgate_open_runs", "gauge", "Runs opened and not yet closed.");
    absl::StrAppend(&out, "perfgate_open_runs ", *open_runs, "\n");
  }
  if (standby_lag_s) {
    Header(out, "perfgate_query_standby_lag_seconds", "gauge",
           "How far the standby serving reads (--query-database) is behind its primary.");
    absl::StrAppend(&out, "perfgate_query_standby_lag_seconds ", absl::StrFormat("%.3f", *standby_lag_s), "\n");
  }
  return out;
}

Metrics& DefaultMetrics() {
  static Metrics* metrics = new Metrics();  // never destroyed: threads may count during exit
  return *metrics;
}

}  // namespace perfgate::coordinator
