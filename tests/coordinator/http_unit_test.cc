// The pieces of the coordinator's HTTP side that need no server: the
// Prometheus text, the body check of a write request, the framing checks of
// a request's length and the admission of connections per address (who may
// call what is tested against a real server in http_security_e2e_test.cc,
// the same checks over raw sockets in front_door_e2e_test.cc).
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "coordinator/api/http_admission.h"
#include "coordinator/api/http_server.h"
#include "coordinator/domain/metrics.h"

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

httplib::Request WithHeaders(const std::string& method, const httplib::Headers& headers) {
  httplib::Request req;
  req.method = method;
  req.headers = headers;
  return req;
}

// The status RefuseBody gives, 0 when the body may be read.
int Refusal(const std::string& method, const httplib::Headers& headers) {
  const std::optional<BodyRefusal> r = RefuseBody(WithHeaders(method, headers), 1024);
  return r ? r->status : 0;
}

TEST(RefuseBody, ALengthGivenTwoWaysIsABadRequestAndTheSameLengthTwiceIsOne) {
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "5"}, {"Content-Length", "7"}}), 400);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "5, 7"}}), 400);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}}), 400);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "+5"}}), 400);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "0x5"}}), 400);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", ""}}), 400);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "99999999999999999999"}}), 400);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "5"}, {"Content-Length", "5"}}), 0);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "5, 5"}}), 0);
  EXPECT_EQ(Refusal("POST", {{"Content-Length", "2048"}}), 413);
  EXPECT_EQ(Refusal("POST", {{"Transfer-Encoding", "chunked"}}), 411);
  EXPECT_EQ(Refusal("GET", {{"Content-Length", "0"}, {"Content-Length", "33"}}), 400);
  EXPECT_EQ(Refusal("GET", {}), 0);
}

sockaddr_storage Peer(int family, const char* ip) {
  sockaddr_storage s{};
  s.ss_family = static_cast<sa_family_t>(family);
  void* where = family == AF_INET ? static_cast<void*>(&reinterpret_cast<sockaddr_in*>(&s)->sin_addr)
                                  : static_cast<void*>(&reinterpret_cast<sockaddr_in6*>(&s)->sin6_addr);
  EXPECT_EQ(inet_pton(family, ip, where), 1) << ip;
  return s;
}

TEST(Admission, AClientIsCountedByItsAddressAndAnIpv6ClientByItsSlash64) {
  EXPECT_EQ(ClientAddress(Peer(AF_INET, "10.1.2.3")), "10.1.2.3");
  EXPECT_EQ(ClientAddress(Peer(AF_INET6, "::ffff:10.1.2.3")), "10.1.2.3");
  EXPECT_EQ(ClientAddress(Peer(AF_INET6, "2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
  EXPECT_EQ(ClientAddress(Peer(AF_INET6, "2001:db8:1:2:bbbb::9")), "2001:db8:1:2::/64");
}

TEST(Admission, OneAddressTakesAtMostItsShareAndATrustedProxyOnlyTheWhole) {
  Admission admission({.max_connections = 5, .max_per_address = 2, .trusted_proxies = {"10.0.0.9"}});
  EXPECT_FALSE(admission.Enter("10.0.0.1"));
  EXPECT_FALSE(admission.Enter("10.0.0.1"));
  const std::optional<std::string> third = admission.Enter("10.0.0.1");
  ASSERT_TRUE(third);
  EXPECT_EQ(*third, "too many connections from 10.0.0.1 (2 per address); close some or try again later");
  EXPECT_FALSE(admission.Enter("10.0.0.2"));
  EXPECT_FALSE(admission.Enter("10.0.0.9"));
  EXPECT_FALSE(admission.Enter("10.0.0.9"));
  // Five in all: the whole is full, even for the proxy.
  EXPECT_TRUE(admission.Enter("10.0.0.9"));
  EXPECT_TRUE(admission.Enter("10.0.0.3"));
  admission.Leave("10.0.0.1");
  EXPECT_FALSE(admission.Enter("10.0.0.3"));
  admission.Leave("10.0.0.2");
  EXPECT_FALSE(admission.Enter("10.0.0.1"));
}

}  // namespace
}  // namespace perfgate::coordinator
