// The notification outbox against a real PostgreSQL and real HTTP receivers
// on loopback: events and their deliveries commit together; a receiver that
// is down for a while and comes back gets every event once (after
// de-duplication by idempotency key) with valid signatures, even with two
// coordinators delivering; a receiver answering 500 is retried with growing
// waits until the attempts run out, and the outbox says why.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <pqxx/pqxx>

#include "common/identity.h"
#include "coordinator/migrations.h"
#include "coordinator/domain/notification_body.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/domain/notifier.h"
#include "gate/gate.h"
#include "nlohmann/json.hpp"
#include "perfgate/v1/notification.pb.h"
#include "tests/coordinator/migrated_store_test.h"
#include "tests/coordinator/webhook_receiver.h"
#include "tests/support/processes.h"
#include "tests/support/tls.h"
#include "wire/api_json.h"

namespace perfgate::coordinator::notifications_test {
namespace {

using nlohmann::json;
using std::chrono::seconds;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef";

class NotificationsTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->RegisterAgent("agent", "host", "test").ok());
  }

  // A run of `branch` on `sku`; its id.
  std::string OpenRun(const std::string& branch, const std::string& sku = "h100-sxm5-80gb") {
    RunMeta meta;
    meta.run_id = NewUuid();
    meta.agent_name = "agent";
    meta.environment = {sku, {{"driver", "550"}}};
    meta.branch = branch;
    meta.commit = "c0ffee" + std::to_string(++runs_);
    meta.started_at = std::chrono::system_clock::now();
    EXPECT_TRUE(store_->OpenRun(meta).ok());
    return meta.run_id;
  }

  // An endpoint as `webhooks add --allow-private` stores it: the receivers
  // of these tests listen on 127.0.0.1.
  void AddEndpoint(const std::string& name, const std::string& url, const std::string& branch = "*",
                   const std::string& sku = "*", std::vector<std::string> events = {}) {
    store::NotificationEndpoint e;
    e.name = name;
    e.url = url;
    e.secret = kSecret;
    e.allow_private = true;
    e.branch = branch;
    e.sku = sku;
    e.events = events.empty() ? std::vector<std::string>(std::begin(store::kNotificationEvents),
                                                         std::end(store::kNotificationEvents))
                              : events;
    ASSERT_TRUE(CheckEndpoint(e).ok()) << CheckEndpoint(e);
    auto added = store_->AddEndpoint(e);
    ASSERT_TRUE(added.ok()) << added.status();
  }

  // A failed gate of a new run of `branch`: one gate.failed event.
  void FailGate(const std::string& branch) {
    gate::GateResult result;
    result.outcome = gate::Outcome::kRegression;
    result.summary = "1 regression";
    const auto verdict = [](const char* benchmark, gate::Verdict v, double change, bool gating) {
      gate::MetricVerdict m;
      m.benchmark = benchmark;
      m.metric = "time";
      m.verdict = v;
      m.change = change;
      m.gating = gating;
      return m;
    };
    result.verdicts = {verdict("kernels/sgemm{m=512}", gate::Verdict::kRegression, 0.12, true),
                       verdict("kernels/gone{m=1}", gate::Verdict::kMissing, gate::MetricVerdict::kNaN, true),
                       verdict("kernels/advisory{m=1}", gate::Verdict::kRegression, 0.5, false),
                       verdict("kernels/noisy{m=1}", gate::Verdict::kTooNoisy, 0.3, true),
                       verdict("kernels/fast{m=1}", gate::Verdict::kImprovement, -0.2, true)};
    auto id = store_->SaveGateReport(OpenRun(branch), "main", result.outcome, "{}", GateFailed(result));
    ASSERT_TRUE(id.ok()) << id.status();
  }

  std::vector<store::OutboxEntry> Outbox(std::optional<store::DeliveryState> state = std::nullopt) {
    auto all = store_->ListOutbox({"", state, 1000});
    EXPECT_TRUE(all.ok()) << all.status();
    return all.ok() ? *all : std::vector<store::OutboxEntry>();
  }

  int runs_ = 0;
};

TEST_F(NotificationsTest, EventsAndTheirDeliveriesCommitTogetherForTheEndpointsThatWantThem) {
  AddEndpoint("all", "http://127.0.0.1:9/hook");
  AddEndpoint("h100-main", "http://127.0.0.1:9/hook", "main", "h100-*");
  AddEndpoint("release", "http://127.0.0.1:9/hook", "release/*");
  AddEndpoint("triage-only", "http://127.0.0.1:9/hook", "*", "*", {"regression.triage"});

  FailGate("main");  // all, h100-main
  EXPECT_TRUE(store_->SaveGateReport(OpenRun("main"), "main", gate::Outcome::kPass, "{}").ok());  // nobody
  // A gate report of an unknown run is refused, and nothing is queued for it.
  gate::GateResult regression;
  regression.outcome = gate::Outcome::kRegression;
  EXPECT_TRUE(absl::IsNotFound(
      store_->SaveGateReport(NewUuid(), "main", regression.outcome, "{}", GateFailed(regression)).status()));

  store::DetectedRegression d;
  d.regression = {.benchmark = "kernels/sgemm{m=512}", .metric = "time", .sku = "h100-sxm5-80gb",
                  .branch = "main", .unit = "ms", .bad_commit = "bad", .first_bad_run_id = OpenRun("main"),
                  .median_before = 1.0, .median_after = 1.1, .change = 0.1, .p_value = 0.001};
  auto found = store_->SaveDetectedRegression(d, RegressionFound);  // all, h100-main
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  auto triaged = store_->ApplyTriage({(*found)->id, RegressionState::kAcknowledged, "looking", "alice", ""},
                                     RegressionTriaged);  // all three
  ASSERT_TRUE(triaged.ok()) << triaged.status();
  FailGate("release/2.1");  // all, release

  std::map<std::string, std::multiset<std::string>> got;
  std::set<std::string> keys;
  for (const store::OutboxEntry& e : Outbox()) {
    got[e.endpoint].insert(e.event_type);
    keys.insert(e.idempotency_key);
    EXPECT_EQ(e.state, store::DeliveryState::kPending);
    EXPECT_EQ(e.attempts, 0);
    EXPECT_TRUE(e.url.empty() && e.secret.empty()) << "a listing never carries them";
  }
  using S = std::multiset<std::string>;
  EXPECT_EQ(got["all"], (S{"gate.failed", "gate.failed", "regression.new", "regression.triage"}));
  EXPECT_EQ(got["h100-main"], (S{"gate.failed", "regression.new", "regression.triage"}));
  EXPECT_EQ(got["release"], (S{"gate.failed"}));
  EXPECT_EQ(got["triage-only"], (S{"regression.triage"}));
  EXPECT_EQ(keys.size(), 9u);  // one key per delivery

  v1::NotificationEvent triage;
  for (const store::OutboxEntry& e : Outbox()) {
    if (e.event_type == "regression.triage") {
      ASSERT_TRUE(wire::FromApiJson(e.payload, &triage, "payload").ok()) << e.payload;
    }
  }
  EXPECT_EQ(triage.type(), "regression.triage");
  EXPECT_EQ(triage.triage().to(), v1::REGRESSION_STATE_ACKNOWLEDGED);
  EXPECT_EQ(triage.triage().by(), "alice");

  ASSERT_TRUE(store_->RemoveEndpoint("all").ok());
  EXPECT_EQ(Outbox().size(), 5u);
  EXPECT_TRUE(absl::IsNotFound(store_->RemoveEndpoint("all")));
  EXPECT_TRUE(absl::IsAlreadyExists(store_->AddEndpoint({.name = "release", .url = "http://x/", .secret = kSecret,
                                                          .events = {"gate.failed"}})
                                        .status()));
}

TEST_F(NotificationsTest, ReceiverDownForAWhileGetsEveryEventOnceWithValidSignatures) {
  WebhookReceiver receiver;
  ASSERT_TRUE(receiver.Start());
  AddEndpoint("hook", receiver.url());
  receiver.Stop();  // down before the first event
  constexpr int kEvents = 12;
  for (int i = 0; i < kEvents; ++i) FailGate("main");

  // Two coordinators deliver the same outbox, as two replicas would, each
  // over connections of its own.
  auto replica_a = Store::Connect(ConnInfo(), 2);
  auto replica_b = Store::Connect(ConnInfo(), 2);
  ASSERT_TRUE(replica_a.ok() && replica_b.ok());
  NotifierOptions o;
  o.poll_interval_s = 0.02;
  o.backoff_initial_s = 0.05;
  o.backoff_max_s = 0.2;
  o.batch = 5;
  o.timeout_s = 5;
  Notifier first(**replica_a, o), second(**replica_b, o);
  first.Start();
  second.Start();
  // Every delivery has failed at least twice while the receiver was down.
  ASSERT_TRUE(WaitUntil([&] {
    for (const auto& e : Outbox()) if (e.attempts < 2) return false;
    return true;
  }, seconds(60)));
  for (const auto& e : Outbox()) {
    EXPECT_EQ(e.state, store::DeliveryState::kPending);
    EXPECT_NE(e.last_error.find("endpoint 'hook': could not connect"), std::string::npos) << e.last_error;
    EXPECT_EQ(e.last_error.find(std::to_string(receiver.port())), std::string::npos) << "no URL: " << e.last_error;
  }
  EXPECT_TRUE(receiver.deliveries().empty());

  ASSERT_TRUE(receiver.StartAgain());
  ASSERT_TRUE(WaitUntil([&] { return Outbox(store::DeliveryState::kDelivered).size() == kEvents; }, seconds(60)))
      << Outbox(store::DeliveryState::kPending).size() << " still pending";

  std::set<std::string> stored;
  for (const auto& e : Outbox()) stored.insert(e.idempotency_key);
  std::map<std::string, int> seen;  // the receiver's de-duplication
  for (const auto& d : receiver.deliveries()) {
    EXPECT_TRUE(SignatureMatches(kSecret, d.timestamp, d.body, d.signature)) << d.body;
    EXPECT_FALSE(SignatureMatches("another secret of enough length", d.timestamp, d.body, d.signature));
    EXPECT_EQ(d.event, "gate.failed");
    v1::NotificationEvent body;
    ASSERT_TRUE(wire::FromApiJson(d.body, &body, "body").ok()) << d.body;  // the message, nothing beside it
    EXPECT_EQ(body.version(), kNotificationVersion);
    EXPECT_EQ(body.idempotency_key(), d.idempotency_key);
    const auto& failed = body.gate().failed();
    ASSERT_EQ(failed.size(), 2) << d.body;  // the gating failures only
    EXPECT_EQ(failed[0].benchmark(), "kernels/sgemm{m=512}");
    EXPECT_DOUBLE_EQ(failed[0].change(), 0.12);
    EXPECT_EQ(failed[0].verdict(), v1::VERDICT_REGRESSION);
    EXPECT_EQ(failed[1].benchmark(), "kernels/gone{m=1}");
    EXPECT_EQ(failed[1].verdict(), v1::VERDICT_MISSING);
    EXPECT_EQ(body.gate().summary(), "1 regression");
    EXPECT_FALSE(failed[1].has_change());
    ++seen[d.idempotency_key];
  }
  std::set<std::string> received;
  for (const auto& [key, n] : seen) received.insert(key);
  EXPECT_EQ(received, stored);
  EXPECT_EQ(received.size(), static_cast<size_t>(kEvents));
  // The claims held: no row went to both coordinators.
  for (const auto& [key, n] : seen) EXPECT_EQ(n, 1) << key;
}

TEST_F(NotificationsTest, ReceiverAnswering500IsRetriedWithBackoffAndTheOutboxSaysWhyWithoutUrlOrAnswer) {
  WebhookReceiver receiver(500, "disk full at /var/lib/internal-detail");
  ASSERT_TRUE(receiver.Start());
  // A Slack-like URL: its path is the secret.
  AddEndpoint("broken", receiver.url("/T000/B000/s3cr3t-path"));
  FailGate("main");

  NotifierOptions o;
  o.poll_interval_s = 0.02;
  o.backoff_initial_s = 0.1;
  o.backoff_max_s = 10;
  o.max_attempts = 4;
  Notifier notifier(*store_, o);
  notifier.Start();
  ASSERT_TRUE(WaitUntil([&] { return Outbox(store::DeliveryState::kFailed).size() == 1; }, seconds(60)));
  const store::OutboxEntry e = Outbox()[0];
  EXPECT_EQ(e.attempts, 4);
  // The endpoint's name and the answer's status line; never its URL, nor
  // what the receiver wrote in the body: the read role lists last_error.
  EXPECT_EQ(e.last_error, "endpoint 'broken': HTTP 500 Internal Server Error");
  ASSERT_TRUE(e.last_attempt_at.has_value());
  EXPECT_FALSE(e.delivered_at.has_value());

  const auto got = receiver.deliveries();
  ASSERT_EQ(got.size(), 4u);
  for (const auto& d : got) {
    EXPECT_EQ(d.idempotency_key, e.idempotency_key);  // one event, retried
    EXPECT_EQ(d.path, "/hook/T000/B000/s3cr3t-path");
    EXPECT_EQ(d.host, "127.0.0.1:" + std::to_string(receiver.port()));
  }
  // Each wait is at least the back-off planned for it: 0.1 s, 0.2 s, 0.4 s.
  for (size_t i = 1; i < got.size(); ++i) {
    const double waited = std::chrono::duration<double>(got[i].at - got[i - 1].at).count();
    EXPECT_GE(waited, 0.95 * BackoffSeconds(o, static_cast<int>(i))) << "after attempt " << i;
  }
}

TEST_F(NotificationsTest, HttpsEndpointsAreVerifiedAgainstTheCaGiven) {
  auto dir = testing::TempDir::Create();
  ASSERT_TRUE(dir.ok());
  auto pki = testing::MakeTestPki(dir->path());
  ASSERT_TRUE(pki.ok()) << pki.status();
  WebhookReceiver receiver(200, "ok", pki->server_cert, pki->server_key);
  ASSERT_TRUE(receiver.Start());
  AddEndpoint("tls", receiver.url());
  NotifierOptions o;
  o.max_attempts = 1;
  o.timeout_s = 5;

  FailGate("main");
  o.ca_file = pki->other_ca_cert;  // a CA that did not sign the receiver's certificate
  ASSERT_EQ(Notifier(*store_, o).DeliverDue().value_or(-1), 0);
  ASSERT_EQ(Outbox(store::DeliveryState::kFailed).size(), 1u);
  EXPECT_NE(Outbox(store::DeliveryState::kFailed)[0].last_error.find("did not verify"), std::string::npos)
      << Outbox(store::DeliveryState::kFailed)[0].last_error;
  EXPECT_TRUE(receiver.deliveries().empty());

  FailGate("main");
  o.ca_file = pki->ca_cert;
  ASSERT_EQ(Notifier(*store_, o).DeliverDue().value_or(-1), 1);
  ASSERT_EQ(receiver.deliveries().size(), 1u);
  const auto d = receiver.deliveries()[0];
  EXPECT_TRUE(SignatureMatches(kSecret, d.timestamp, d.body, d.signature));
  EXPECT_EQ(Outbox(store::DeliveryState::kDelivered).size(), 1u);
}

// A name checked when its endpoint was added may later resolve to a
// private address (DNS changed, or was made to): each delivery resolves
// the host once, checks every address, and posts only when all are public
// or the endpoint allows private ones. `localhost` stands for such a name:
// it resolves offline, to the loopback. A metadata address is never posted
// to, even where private ones are allowed.
TEST_F(NotificationsTest, ANameThatResolvesToAPrivateAddressIsNotPostedToUnlessItsEndpointAllowsIt) {
  WebhookReceiver receiver;
  ASSERT_TRUE(receiver.Start());
  store::NotificationEndpoint moved{.name = "moved", .url = receiver.url("", "localhost"), .secret = kSecret,
                                    .events = {"gate.failed"}};
  EXPECT_TRUE(absl::IsInvalidArgument(CheckEndpoint(moved))) << "`webhooks add` refuses localhost itself";
  store::NotificationEndpoint allowed = moved;
  allowed.name = "allowed";
  allowed.allow_private = true;
  store::NotificationEndpoint metadata = allowed;
  metadata.name = "metadata";
  metadata.url = "http://169.254.169.254/latest/meta-data/";
  for (const auto& e : {moved, allowed, metadata}) ASSERT_TRUE(store_->AddEndpoint(e).ok());
  FailGate("main");

  NotifierOptions o;
  o.max_attempts = 1;
  o.timeout_s = 2;  // were the metadata address tried, the attempt would end here, not hang
  ASSERT_EQ(Notifier(*store_, o).DeliverDue().value_or(-1), 1);
  const auto got = receiver.deliveries();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].host, "localhost:" + std::to_string(receiver.port()));
  std::map<std::string, store::OutboxEntry> by_endpoint;
  for (const auto& e : Outbox()) by_endpoint[e.endpoint] = e;
  EXPECT_EQ(by_endpoint["allowed"].state, store::DeliveryState::kDelivered);
  EXPECT_EQ(by_endpoint["moved"].state, store::DeliveryState::kFailed);
  // 127.0.0.0/8 or ::1, whichever the resolver gave first
  const std::string& why = by_endpoint["moved"].last_error;
  EXPECT_EQ(why.find("endpoint 'moved': refused: its host resolves to a loopback ("), 0u) << why;
  EXPECT_NE(why.find("address, and the endpoint was not added with --allow-private"), std::string::npos) << why;
  EXPECT_EQ(by_endpoint["metadata"].state, store::DeliveryState::kFailed);
  EXPECT_EQ(by_endpoint["metadata"].last_error,
            "endpoint 'metadata': refused: its host resolves to a cloud instance-metadata address");
}

// Errors recorded before migration 0013 quoted the endpoint's URL (here a
// password and a secret path) and the answer's body; the migration
// withholds them, and the endpoints it finds may not reach private
// addresses until added again with --allow-private.
TEST_F(NotificationsTest, Migration13WithholdsErrorsThatQuotedUrlsAndAllowsNoPrivateAddresses) {
  ASSERT_TRUE(server().CreateDatabase(DatabaseName() + "_before13").ok());
  {
    pqxx::connection c(server().ConnInfo(DatabaseName() + "_before13"));
    pqxx::work txn(c);
    txn.exec("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
             "applied_at timestamptz NOT NULL DEFAULT now())");
    for (const Migration& m : Migrations()) {
      if (m.version > 12) break;
      txn.exec(m.sql);
      txn.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name);
    }
    txn.exec("INSERT INTO notification_endpoints (name, url, format, secret, events) VALUES ('old', "
             "'https://bot:hunter2@hooks.example.com/T0/s3cr3t', 'json', 'signing-secret-0123', '{gate.failed}')");
    txn.exec("INSERT INTO notification_outbox (endpoint_id, event_type, payload, last_error) SELECT id, "
             "'gate.failed', '{}', 'POST https://bot:hunter2@hooks.example.com/T0/s3cr3t: HTTP 500: db at 10.0.0.7' "
             "FROM notification_endpoints");
    txn.exec("INSERT INTO notification_outbox (endpoint_id, event_type, payload) "
             "SELECT id, 'gate.failed', '{}' FROM notification_endpoints");
    txn.commit();
  }
  auto store = Store::Connect(server().ConnInfo(DatabaseName() + "_before13"), 1);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Migrate().ok());
  auto outbox = (*store)->ListOutbox({"", std::nullopt, 10});
  ASSERT_TRUE(outbox.ok()) << outbox.status();
  ASSERT_EQ(outbox->size(), 2u);
  EXPECT_EQ((*outbox)[0].last_error, "") << "an attempt that never failed has nothing to withhold";
  EXPECT_EQ((*outbox)[1].last_error, "an error recorded before migration 0013, withheld: it could quote the URL");
  auto endpoints = (*store)->ListEndpoints();
  ASSERT_TRUE(endpoints.ok() && endpoints->size() == 1) << endpoints.status();
  EXPECT_FALSE((*endpoints)[0].allow_private);
}

TEST_F(NotificationsTest, AStaleClaimCannotOverwriteANewerOne) {
  AddEndpoint("hook", "http://127.0.0.1:9/hook");
  FailGate("main");
  auto first = store_->ClaimDueNotifications(10, 0.0);  // a lease that runs out at once
  ASSERT_TRUE(first.ok() && first->size() == 1) << first.status();
  auto second = store_->ClaimDueNotifications(10, 60.0);
  ASSERT_TRUE(second.ok() && second->size() == 1) << second.status();
  EXPECT_TRUE(store_->ClaimDueNotifications(10, 60.0)->empty());  // held by the second claim
  store::DeliveryOutcome stale{.id = (*first)[0].id, .claim_token = (*first)[0].claim_token, .delivered = true};
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->RecordDelivery(stale)));
  store::DeliveryOutcome fresh{.id = (*second)[0].id, .claim_token = (*second)[0].claim_token, .delivered = true};
  EXPECT_TRUE(store_->RecordDelivery(fresh).ok());
  EXPECT_EQ(Outbox(store::DeliveryState::kDelivered).size(), 1u);
}

}  // namespace
}  // namespace perfgate::coordinator::notifications_test
