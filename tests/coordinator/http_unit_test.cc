// The pieces of the coordinator's HTTP side that need no server: the
// Prometheus text and the body check of a write request (who may call
// what is tested against a real server in http_security_e2e_test.cc).
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

httplib::Request Write(const std::string& content_type) {
  httplib::Request req;
  if (!content_type.empty()) req.headers.emplace("Content-Type", content_type);
  return req;
}

TEST(CheckJsonBody, WritesMustSendJson) {
  EXPECT_TRUE(CheckJsonBody(Write("application/json")).ok());
  EXPECT_TRUE(CheckJsonBody(Write("application/json; charset=utf-8")).ok());
  // A form post from another origin cannot set a JSON content type without a preflight.
  EXPECT_EQ(CheckJsonBody(Write("text/plain")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckJsonBody(Write("application/x-www-form-urlencoded")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckJsonBody(Write("")).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace perfgate::coordinator
