// The pieces of the coordinator's HTTP side that need no server: the
// Prometheus text and the one check of a write request.
#include <gtest/gtest.h>
#include <httplib.h>

#include "coordinator/http_server.h"
#include "coordinator/metrics.h"

namespace perfgate::coordinator {
namespace {

TEST(Metrics, HistogramBucketsAreCumulativeAndCountersLabelled) {
  Metrics m;
  m.BatchStored(10, 0.0005, false);  // first bucket
  m.BatchStored(20, 0.02, false);    // le=0.025
  m.BatchStored(0, 30, true);        // beyond the last bound: +Inf only
  m.BatchRefused();
  m.GateOutcome("regression");
  m.GateOutcome("pass");
  m.GateOutcome("pass");
  m.StoreError("Evaluate \"x\"");
  const std::string text = m.Render(7);
  EXPECT_NE(text.find("perfgate_ingest_batches_total 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_ingest_duplicate_batches_total 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_refused_batches_total 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_samples_total 30\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_batch_seconds_bucket{le=\"0.001\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_batch_seconds_bucket{le=\"0.01\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_batch_seconds_bucket{le=\"0.025\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_batch_seconds_bucket{le=\"5\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_batch_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_ingest_batch_seconds_count 3\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_gates_total{outcome=\"pass\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_gates_total{outcome=\"regression\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_store_errors_total{operation=\"Evaluate \\\"x\\\"\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE perfgate_ingest_batch_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("perfgate_open_runs 7\n"), std::string::npos);
  EXPECT_EQ(m.Render(std::nullopt).find("perfgate_open_runs"), std::string::npos);
}

httplib::Request Write(const std::string& content_type, const std::string& authorization) {
  httplib::Request req;
  if (!content_type.empty()) req.headers.emplace("Content-Type", content_type);
  if (!authorization.empty()) req.headers.emplace("Authorization", authorization);
  return req;
}

TEST(CheckWriteAccess, NeedsJsonAndTheExactToken) {
  EXPECT_TRUE(CheckWriteAccess(Write("application/json", "Bearer t0k"), "t0k").ok());
  EXPECT_EQ(CheckWriteAccess(Write("application/json", ""), "t0k").code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(CheckWriteAccess(Write("application/json", "Bearer t0"), "t0k").code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(CheckWriteAccess(Write("application/json", "Bearer t0kk"), "t0k").code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(CheckWriteAccess(Write("application/json", "t0k"), "t0k").code(), absl::StatusCode::kUnauthenticated);
  // A form post from another origin cannot set a JSON content type without a preflight.
  EXPECT_EQ(CheckWriteAccess(Write("text/plain", "Bearer t0k"), "t0k").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckWriteAccess(Write("", ""), "").code(), absl::StatusCode::kInvalidArgument);
  // Without a token the coordinator checks no credential, as its gRPC side.
  EXPECT_TRUE(CheckWriteAccess(Write("application/json", ""), "").ok());
}

}  // namespace
}  // namespace perfgate::coordinator
