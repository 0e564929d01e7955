// Webhook bodies and signatures without a database: the HMAC agrees with an
// independent implementation, the events the domain words from what the
// store hands it carry what a receiver needs in each format, and endpoints
// that could never be delivered to are refused.
#include <gtest/gtest.h>

#include "coordinator/domain/notification_body.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/domain/notifier.h"
#include "nlohmann/json.hpp"
#include "perfgate/v1/notification.pb.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {
namespace {

using nlohmann::json;

TEST(NotificationBody, SignatureIsHmacSha256OfTimestampDotBody) {
  // Python: hmac.new(b"Jefe", b"1700000000.what do ya want for nothing?", hashlib.sha256).hexdigest()
  const std::string sig = SignDelivery("Jefe", 1700000000, "what do ya want for nothing?");
  EXPECT_EQ(sig, "sha256=1cdd0650c8be1cb0974b1788d458b1e781206cfef59b85faafc582d2e182c57e");
  EXPECT_TRUE(SignatureMatches("Jefe", 1700000000, "what do ya want for nothing?", sig));
  EXPECT_FALSE(SignatureMatches("Jefe", 1700000001, "what do ya want for nothing?", sig));
  EXPECT_FALSE(SignatureMatches("Jefe", 1700000000, "what do ya want for nothing!", sig));
  EXPECT_FALSE(SignatureMatches("jefe", 1700000000, "what do ya want for nothing?", sig));
  EXPECT_FALSE(SignatureMatches("Jefe", 1700000000, "what do ya want for nothing?", sig.substr(1)));
}

// The regression of the examples, as the store hands it to the domain.
store::Regression Regression7() {
  store::Regression r;
  r.id = 7;
  r.benchmark = "kernels/gemm{n=8192}";
  r.metric = "tflops";
  r.unit = "TFLOP/s";
  r.direction = Direction::kHigherIsBetter;
  r.change = 0.08;
  r.median_before = 700;
  r.median_after = 644;
  r.good_commit = "aaaaaaaaaaaaaaaa";
  r.bad_commit = "bbbbbbbbbbbbbbbb";
  r.branch = "main";
  r.sku = "h100-sxm5-80gb";
  return r;
}

std::string Payload(const std::optional<store::NotificationEvent>& e) {
  EXPECT_TRUE(e.has_value());
  return e ? e->payload : "";
}

// The failing gate of the examples: one gating regression and one missing metric.
std::string GatePayload() {
  gate::GateResult result;
  result.outcome = gate::Outcome::kRegression;
  result.summary = "1 of 3 metrics regressed";
  gate::MetricVerdict slower;
  slower.benchmark = "b1";
  slower.metric = "ms";
  slower.change = 0.2;
  slower.verdict = gate::Verdict::kRegression;
  gate::MetricVerdict gone = slower;
  gone.benchmark = "gone";
  gone.change = gate::MetricVerdict::kNaN;
  gone.verdict = gate::Verdict::kMissing;
  gate::MetricVerdict advisory = slower;
  advisory.gating = false;
  result.verdicts = {slower, gone, advisory};
  const store::StoredReport report{.id = 31, .branch = "pr-12", .sku = "h100", .commit = "cccccccccccccccc",
                                   .baseline_branch = "main"};
  return Payload(GateFailed(result)(report));
}

TEST(NotificationBody, JsonIsTheEventMessageWithItsKeyAndLink) {
  auto body = RenderBody("json", Payload(RegressionFound(Regression7())), "key-1", "https://perf.example.com/");
  ASSERT_TRUE(body.ok()) << body.status();
  v1::NotificationEvent e;
  ASSERT_TRUE(wire::FromApiJson(*body, &e, "body").ok()) << *body;  // the message, no field beside it
  EXPECT_EQ(e.version(), kNotificationVersion);
  EXPECT_EQ(e.type(), "regression.new");
  EXPECT_EQ(e.regression().id(), 7);
  EXPECT_DOUBLE_EQ(e.regression().change(), 0.08);
  EXPECT_EQ(e.idempotency_key(), "key-1");
  EXPECT_EQ(e.dashboard_url(), "https://perf.example.com/#/regressions?id=7");
  const json j = json::parse(*body);
  EXPECT_EQ(j["regression"]["id"], "7");  // the API's JSON: 64-bit integers as strings
  EXPECT_EQ(j["regression"]["direction"], "HIGHER_IS_BETTER");
  // Without a public URL there is no link, and the same input gives the same bytes.
  const std::string payload = Payload(RegressionFound(Regression7()));
  EXPECT_EQ(json::parse(*RenderBody("json", payload, "key-1", ""))["dashboard_url"], "");
  EXPECT_EQ(*RenderBody("json", payload, "k", ""), *RenderBody("json", payload, "k", ""));
}

TEST(NotificationBody, SlackIsOneLineAPersonReads) {
  auto body = RenderBody("slack", Payload(RegressionFound(Regression7())), "key-1", "https://perf.example.com");
  ASSERT_TRUE(body.ok()) << body.status();
  const std::string text = json::parse(*body)["text"];
  EXPECT_NE(text.find("New regression #7: kernels/gemm{n=8192} tflops on main / h100-sxm5-80gb +8.0 % worse"),
            std::string::npos) << text;
  EXPECT_NE(text.find("700 → 644 TFLOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("between aaaaaaaaaaaa and bbbbbbbbbbbb"), std::string::npos) << text;
  EXPECT_NE(text.find("<https://perf.example.com/#/regressions?id=7|open in perfgate>"), std::string::npos) << text;

  store::Regression moved = Regression7();
  moved.events.push_back({RegressionState::kNew, RegressionState::kFixed, "ana", "reverted", "dddddddddddddddd"});
  const std::string t = json::parse(*RenderBody("slack", Payload(RegressionTriaged(moved)), "k", ""))["text"];
  EXPECT_EQ(t, "Regression #7 (kernels/gemm{n=8192} tflops on main / h100-sxm5-80gb): new → fixed by ana, "
               "fixed by dddddddddddd: reverted");

  // Only gating failures are listed; a change that could not be computed says so.
  const std::string g = json::parse(*RenderBody("slack", GatePayload(), "k", ""))["text"];
  EXPECT_EQ(g, "Gate failed on pr-12 / h100 at cccccccccccc against main: b1 ms +20.0 %; gone ms (change unknown)");

  store::FinishedBisection b{.id = 4, .regression_id = 0, .branch = "main", .sku = "h100"};
  b.outcome.state = BisectionState::kCulprit;
  b.outcome.culprit = "c11";
  b.outcome.summary = "culprit c11 (+14.8 % [+13.2, +16.4])";
  const std::string bisected = Payload(BisectionFinished(b));
  EXPECT_EQ(json::parse(*RenderBody("slack", bisected, "k", ""))["text"],
            "Bisection #4 on main / h100 ended: culprit c11 (+14.8 % [+13.2, +16.4])");
  v1::NotificationEvent e;
  ASSERT_TRUE(wire::FromApiJson(bisected, &e, "payload").ok()) << bisected;
  EXPECT_EQ(e.bisection().outcome().state(), v1::BISECTION_STATE_CULPRIT);
  EXPECT_FALSE(e.bisection().has_regression_id());  // an explicit range: no regression, no page
  EXPECT_EQ(e.dashboard_path(), "");
}

TEST(NotificationBody, TheFailedGatesMetricsAreMessagesWithTheirVerdicts) {
  v1::NotificationEvent e;
  const std::string payload = GatePayload();
  ASSERT_TRUE(wire::FromApiJson(payload, &e, "payload").ok()) << payload;
  EXPECT_EQ(e.type(), "gate.failed");
  EXPECT_EQ(e.dashboard_path(), "/#/report/31");
  ASSERT_EQ(e.gate().failed_size(), 2);
  EXPECT_EQ(e.gate().failed(0).verdict(), v1::VERDICT_REGRESSION);
  EXPECT_EQ(e.gate().failed(1).verdict(), v1::VERDICT_MISSING);
  EXPECT_FALSE(e.gate().failed(1).has_change());  // not computed: absent, never NaN
  EXPECT_EQ(json::parse(payload)["gate"]["failed"][1].count("change"), 0u);
}

// Rows queued by a release before payloads were messages are still delivered.
const char kVersionOne[] = R"({"type":"regression.new","branch":"main","sku":"h100-sxm5-80gb",
  "regression":{"id":7,"benchmark":"kernels/gemm{n=8192}","metric":"tflops","change":0.08},
  "dashboard_path":"/#/regressions?id=7"})";

TEST(NotificationBody, APayloadOfVersionOneGoesOutAsItWasStored) {
  const json j = json::parse(*RenderBody("json", kVersionOne, "key-1", "https://perf.example.com"));
  EXPECT_EQ(j["regression"]["id"], 7);
  EXPECT_EQ(j["idempotency_key"], "key-1");
  EXPECT_EQ(j["dashboard_url"], "https://perf.example.com/#/regressions?id=7");
  EXPECT_EQ(json::parse(*RenderBody("slack", kVersionOne, "k", "https://perf.example.com"))["text"],
            "regression.new on main / h100-sxm5-80gb <https://perf.example.com/#/regressions?id=7|open in perfgate>");
}

TEST(NotificationBody, BadPayloadsAndFormatsAreRefused) {
  EXPECT_TRUE(absl::IsInvalidArgument(RenderBody("json", "[1]", "k", "").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(RenderBody("json", "{", "k", "").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(RenderBody("teams", kVersionOne, "k", "").status()));
  // A payload that says it is a message is read as one: a field of the wrong type or unknown is named.
  const absl::Status odd = RenderBody("slack", R"({"version":2,"type":"regression.new","branch":7})", "k", "").status();
  EXPECT_TRUE(absl::IsInvalidArgument(odd));
  EXPECT_NE(odd.message().find("branch"), std::string::npos) << odd.message();
  const absl::Status unknown = RenderBody("json", R"({"version":2,"mystery":1})", "k", "").status();
  EXPECT_NE(unknown.message().find("mystery"), std::string::npos) << unknown.message();
}

TEST(Notifier, BackoffDoublesUpToItsCap) {
  NotifierOptions o;
  o.backoff_initial_s = 10;
  o.backoff_max_s = 60;
  EXPECT_DOUBLE_EQ(BackoffSeconds(o, 1), 10);
  EXPECT_DOUBLE_EQ(BackoffSeconds(o, 2), 20);
  EXPECT_DOUBLE_EQ(BackoffSeconds(o, 3), 40);
  EXPECT_DOUBLE_EQ(BackoffSeconds(o, 4), 60);
  EXPECT_DOUBLE_EQ(BackoffSeconds(o, 40), 60);
}

TEST(Notifier, EndpointsThatCannotBeDeliveredToAreRefusedByField) {
  store::NotificationEndpoint ok{.name = "team-a", .url = "https://hooks.example.com/x", .format = "slack",
                                 .secret = "0123456789abcdef", .events = {"gate.failed"}};
  EXPECT_TRUE(CheckEndpoint(ok).ok()) << CheckEndpoint(ok);
  auto refused = [&](auto change, const std::string& names) {
    store::NotificationEndpoint e = ok;
    change(e);
    const absl::Status s = CheckEndpoint(e);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << names;
    EXPECT_NE(s.message().find(names), std::string::npos) << s.message();
  };
  refused([](auto& e) { e.name = "a b"; }, "webhook name");
  refused([](auto& e) { e.url = "ftp://x/"; }, "--url");
  refused([](auto& e) { e.url = "https:///path"; }, "--url: the host is empty");
  refused([](auto& e) { e.url = "https://hooks.example.com/a b"; }, "--url: a space at character 28");
  refused([](auto& e) { e.url = "https://bot:hunter2@hooks.example.com/"; }, "--url: user information");
  refused([](auto& e) { e.url = "http://169.254.169.254/latest/meta-data/"; }, "instance-metadata");
  refused([](auto& e) { e.url = "http://127.0.0.1:8080/hook"; }, "--allow-private");
  refused([](auto& e) { e.url = "http://[::1]:8080/hook"; }, "--allow-private");
  refused([](auto& e) { e.url = "http://192.168.1.20/hook"; }, "--allow-private");
  refused([](auto& e) { e.format = "xml"; }, "--format");
  refused([](auto& e) { e.events = {}; }, "--event");
  refused([](auto& e) { e.events = {"gate.passed"}; }, "--event 'gate.passed'");
  refused([](auto& e) { e.sku = ""; }, "--sku");
  refused([](auto& e) { e.secret = "short"; }, "openssl rand");
  store::NotificationEndpoint local = ok;
  local.url = "http://127.0.0.1:8080/hook";
  local.allow_private = true;
  EXPECT_TRUE(CheckEndpoint(local).ok()) << CheckEndpoint(local);
}

}  // namespace
}  // namespace perfgate::coordinator
