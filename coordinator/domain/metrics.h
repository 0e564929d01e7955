// The coordinator's Prometheus metrics, served by GET /metrics in the text
// exposition format 0.0.4: ingest batches and samples, the latency of storing
// one batch (a histogram), gates by outcome, store errors by operation,
// regressions detected, runs expired, the runs still open (read from the database at
// scrape time) and the lag of a standby that serves the reads. The gRPC services count into the one process-wide instance.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace perfgate::coordinator {

class Metrics {
 public:
  /// Upper bounds of the batch latency buckets, in seconds (+Inf implied).
  static constexpr std::array<double, 12> kLatencyBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                             0.1,   0.25,   0.5,   1,    2.5,   5};

  /// One batch stored (or recognised as a resend) in `seconds`.
  void BatchStored(uint64_t samples, double seconds, bool duplicate);
  /// One batch refused (bad input or a store error).
  void BatchRefused();
  void GateOutcome(const std::string& outcome);
  /// An operation failed for a reason of the store (connection, internal).
  void StoreError(const std::string& operation);
  void RegressionDetected();
  /// One closed run checked for regressions (whatever was found).
  void RegressionCheck();
  /// One silent run closed as failed by this coordinator's expiry.
  void RunExpired();

  /// The exposition text; open_runs is left out when unknown, the lag of
  /// the standby reads are served from when they are not (or unknown).
  std::string Render(std::optional<int64_t> open_runs, std::optional<double> standby_lag_s = std::nullopt) const;

 private:
  mutable std::mutex mu_;
  uint64_t batches_ = 0, duplicate_batches_ = 0, refused_batches_ = 0, samples_ = 0;
  std::array<uint64_t, kLatencyBuckets.size() + 1> latency_counts_{};  // last: +Inf
  double latency_sum_ = 0;
  std::map<std::string, uint64_t> gates_;         // by outcome
  std::map<std::string, uint64_t> store_errors_;  // by operation
  uint64_t regressions_ = 0, regression_checks_ = 0, runs_expired_ = 0;
};

/// The instance the services count into and /metrics renders.
Metrics& DefaultMetrics();

}  // namespace perfgate::coordinator
