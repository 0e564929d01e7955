// Webhook bodies and signatures without a database: the HMAC agrees with an
// independent implementation, the bodies carry what a receiver needs in
// each format, and endpoints that could never be delivered to are refused.
#include <gtest/gtest.h>

#include "coordinator/notification_body.h"
#include "coordinator/notifier.h"
#include "nlohmann/json.hpp"

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

const char kRegression[] = R"({"type":"regression.new","branch":"main","sku":"h100-sxm5-80gb",
  "regression":{"id":7,"benchmark":"kernels/gemm{n=8192}","metric":"tflops","unit":"TFLOP/s","change":0.08,
  "median_before":700,"median_after":644,"good_commit":"aaaaaaaaaaaaaaaa","bad_commit":"bbbbbbbbbbbbbbbb"},
  "dashboard_path":"/#/regressions?id=7"})";

TEST(NotificationBody, JsonIsTheEventWithItsKeyAndLink) {
  auto body = RenderBody("json", kRegression, "key-1", "https://perf.example.com/");
  ASSERT_TRUE(body.ok()) << body.status();
  const json j = json::parse(*body);
  EXPECT_EQ(j["regression"]["id"], 7);
  EXPECT_EQ(j["idempotency_key"], "key-1");
  EXPECT_EQ(j["dashboard_url"], "https://perf.example.com/#/regressions?id=7");
  // Without a public URL there is no link, and the same input gives the same bytes.
  EXPECT_FALSE(json::parse(*RenderBody("json", kRegression, "key-1", "")).contains("dashboard_url"));
  EXPECT_EQ(*RenderBody("json", kRegression, "k", ""), *RenderBody("json", kRegression, "k", ""));
}

TEST(NotificationBody, SlackIsOneLineAPersonReads) {
  auto body = RenderBody("slack", kRegression, "key-1", "https://perf.example.com");
  ASSERT_TRUE(body.ok()) << body.status();
  const std::string text = json::parse(*body)["text"];
  EXPECT_NE(text.find("New regression #7: kernels/gemm{n=8192} tflops on main / h100-sxm5-80gb +8.0 % worse"),
            std::string::npos) << text;
  EXPECT_NE(text.find("700 → 644 TFLOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("between aaaaaaaaaaaa and bbbbbbbbbbbb"), std::string::npos) << text;
  EXPECT_NE(text.find("<https://perf.example.com/#/regressions?id=7|open in perfgate>"), std::string::npos) << text;

  const char gate[] = R"({"type":"gate.failed","branch":"pr-12","sku":"h100",
    "gate":{"candidate_commit":"cccccccccccccccc","baseline_branch":"main",
    "failed":[{"benchmark":"b1","metric":"ms","change":0.2}]}})";
  const std::string g = json::parse(*RenderBody("slack", gate, "k", ""))["text"];
  EXPECT_EQ(g, "Gate failed on pr-12 / h100 at cccccccccccc against main: b1 ms +20.0 %");

  const char bisection[] = R"js({"type":"bisection.finished","branch":"main","sku":"h100",
    "bisection":{"id":4,"summary":"culprit c11 (+14.8 % [+13.2, +16.4])"}})js";
  const std::string b = json::parse(*RenderBody("slack", bisection, "k", ""))["text"];
  EXPECT_EQ(b, "Bisection #4 on main / h100 ended: culprit c11 (+14.8 % [+13.2, +16.4])");
}

TEST(NotificationBody, UnknownNumbersAndFieldsOfAWrongTypeNeverThrow) {
  const char gate[] = R"({"type":"gate.failed","branch":"b","sku":"s",
    "gate":{"candidate_commit":"c","baseline_branch":"main","failed":[{"benchmark":"gone","metric":"ms","change":null}]}})";
  const std::string g = json::parse(*RenderBody("slack", gate, "k", ""))["text"];
  EXPECT_EQ(g, "Gate failed on b / s at c against main: gone ms (change unknown)");
  const char odd[] = R"({"type":"regression.new","branch":7,"regression":{"id":"x","benchmark":[]}})";
  EXPECT_TRUE(absl::IsInvalidArgument(RenderBody("slack", odd, "k", "").status()));
}

TEST(NotificationBody, BadPayloadsAndFormatsAreRefused) {
  EXPECT_TRUE(absl::IsInvalidArgument(RenderBody("json", "[1]", "k", "").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(RenderBody("json", "{", "k", "").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(RenderBody("teams", kRegression, "k", "").status()));
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
