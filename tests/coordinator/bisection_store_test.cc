// The bisections repository on a real, migrated PostgreSQL, and the JSON
// bodies of its HTTP routes: a job, its probes (each commit's attempt once,
// none after the end), its outcome, and the culprit written into the
// regression's triage record in the same transaction.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "common/identity.h"
#include "coordinator/http_json.h"
#include "coordinator/notification_events.h"
#include "tests/coordinator/migrated_store_test.h"

namespace perfgate::coordinator {
namespace {

using Json = nlohmann::json;

class BisectionStoreTest : public MigratedStoreTest {
 protected:
  // A stored regression of a run of main, as the watcher would store it.
  int64_t StoredRegression() {
    EXPECT_TRUE(store_->RegisterAgent("agent-1", "node-1", "0.1.0").ok());
    RunMeta run;
    run.run_id = NewUuid();
    run.agent_name = "agent-1";
    run.environment.sku = "cpu-test";
    run.branch = "main";
    run.commit = "c20";
    run.trigger = Trigger::kCi;
    EXPECT_TRUE(store_->OpenRun(run).ok());
    store::DetectedRegression d;
    d.regression.benchmark = "gbench/BM_Work";
    d.regression.metric = "real_time";
    d.regression.sku = "cpu-test";
    d.regression.branch = "main";
    d.regression.good_commit = "c19";
    d.regression.bad_commit = "c20";
    d.regression.first_bad_run_id = run.run_id;
    d.regression.change = 0.15;
    d.detected_after_run_id = run.run_id;
    auto saved = store_->SaveDetectedRegression(d, RegressionFound);
    EXPECT_TRUE(saved.ok() && saved->has_value()) << saved.status();
    return saved.ok() && saved->has_value() ? (*saved)->id : 0;
  }

  static Bisection Job(int64_t regression) {
    auto b = BisectionFromJson({{"good", "c19"}, {"bad", "c20"}, {"commits", {"c20"}},
                                {"settings", {{"repo", "/src"}}}, {"regression_id", regression}, {"by", "ann"}});
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *b : Bisection{};
  }

  static BisectionProbe ProbeAt(const std::string& commit, int attempt, const std::string& verdict) {
    auto p = ProbeFromJson({{"commit", commit}, {"attempt", attempt}, {"verdict", verdict}, {"threshold", 0.075},
                            {"change", 0.15}, {"ci", {0.13, 0.17}}, {"rounds", 6}, {"benchmark", "gbench/BM_Work"},
                            {"metric", "real_time"}});
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : BisectionProbe{};
  }
};

TEST_F(BisectionStoreTest, StoresTheJobItsProbesAndItsCulpritInTheRegressionsTriageRecord) {
  const int64_t regression = StoredRegression();
  auto b = store_->CreateBisection(Job(regression));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->state, BisectionState::kRunning);
  EXPECT_EQ(b->benchmark, "");
  auto with_probe = store_->AddBisectionProbe(b->id, ProbeAt("c20", 1, "carries"));
  ASSERT_TRUE(with_probe.ok()) << with_probe.status();
  ASSERT_EQ(with_probe->probes.size(), 1u);
  EXPECT_EQ(with_probe->benchmark, "gbench/BM_Work") << "the first probe names the case";
  EXPECT_DOUBLE_EQ(with_probe->probes[0].ci_high, 0.17);
  EXPECT_EQ(store_->AddBisectionProbe(b->id, ProbeAt("c20", 1, "carries")).status().code(),
            absl::StatusCode::kAlreadyExists);

  auto outcome = OutcomeFromJson({{"state", "culprit"}, {"culprit", "c20"}, {"change", 0.15}, {"ci", {0.13, 0.17}},
                                  {"summary", "culprit c20"}, {"triage_note", "culprit c20 (+15.0 % [+13.0, +17.0])"}});
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  // Endpoints that want the end of a bisection: one of main's, one of another branch.
  for (const auto& [name, branch] : {std::pair<std::string, std::string>{"main-hook", "main"}, {"release-hook", "release/*"}}) {
    store::NotificationEndpoint e;
    e.name = name;
    e.url = "http://127.0.0.1:9/hook";
    e.secret = "a secret of sixteen or more bytes";
    e.branch = branch;
    e.events = {"bisection.finished"};
    ASSERT_TRUE(store_->AddEndpoint(e).ok());
  }
  auto done = store_->FinishBisection(b->id, *outcome, "perfgate bisect", BisectionFinished);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state, BisectionState::kCulprit);
  auto outbox = store_->ListOutbox({"", std::nullopt, 100});
  ASSERT_TRUE(outbox.ok()) << outbox.status();
  ASSERT_EQ(outbox->size(), 1u) << "written with the outcome, for the endpoint of the regression's branch";
  EXPECT_EQ(outbox->front().endpoint, "main-hook");
  EXPECT_EQ(outbox->front().event_type, "bisection.finished");
  const auto event = nlohmann::json::parse(outbox->front().payload);
  EXPECT_EQ(event["bisection"]["culprit"], "c20");
  EXPECT_EQ(event["regression_id"], regression);
  EXPECT_DOUBLE_EQ(event["bisection"]["ci"][1].get<double>(), 0.17);
  EXPECT_EQ(done->outcome.culprit, "c20");
  auto r = store_->GetRegression(regression);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, RegressionState::kNew) << "a culprit found does not change the regression's state";
  ASSERT_EQ(r->events.size(), 2u);
  EXPECT_EQ(r->events.back().note, "culprit c20 (+15.0 % [+13.0, +17.0])");
  EXPECT_EQ(r->events.back().commit, "c20");

  // Ended: no more probes, no second outcome.
  EXPECT_EQ(store_->AddBisectionProbe(b->id, ProbeAt("c20", 2, "carries")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->FinishBisection(b->id, *outcome, "x", BisectionFinished).status().code(),
            absl::StatusCode::kFailedPrecondition);
  auto listed = store_->ListBisections(regression, 10);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(ToJson(listed->front())["culprit"], "c20");
}

TEST_F(BisectionStoreTest, RefusesAnUnknownRegressionOrBisection) {
  EXPECT_EQ(store_->CreateBisection(Job(424242)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetBisection(99).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->AddBisectionProbe(99, ProbeAt("c1", 1, "clean")).status().code(), absl::StatusCode::kNotFound);
}

TEST(BisectionJson, RefusesBodiesThatAreWrongNamingTheField) {
  const auto message = [](const absl::Status& s) { return std::string(s.message()); };
  EXPECT_NE(message(BisectionFromJson({{"good", "a"}, {"bad", "b"}, {"commits", {"c"}}}).status()).find("commits"),
            std::string::npos);
  EXPECT_NE(message(BisectionFromJson({{"good", "a"}, {"bad", "b"}, {"commits", {"b"}}, {"colour", 1}}).status())
                .find("colour"),
            std::string::npos);
  EXPECT_NE(message(ProbeFromJson({{"commit", "a"}, {"attempt", 1}, {"verdict", "maybe"}, {"threshold", 0.1}}).status())
                .find("maybe"),
            std::string::npos);
  EXPECT_FALSE(ProbeFromJson({{"commit", "a"}, {"attempt", 0}, {"verdict", "clean"}, {"threshold", 0.1}}).ok());
  EXPECT_FALSE(ProbeFromJson({{"commit", "a"}, {"attempt", 1}, {"verdict", "clean"}, {"threshold", -1}}).ok());
  EXPECT_FALSE(ProbeFromJson({{"commit", "a"}, {"attempt", 1}, {"verdict", "clean"}, {"threshold", 0.1},
                              {"ci", {0.1}}}).ok());
  EXPECT_FALSE(OutcomeFromJson({{"state", "culprit"}, {"summary", "s"}}).ok()) << "a culprit state names it";
  EXPECT_FALSE(OutcomeFromJson({{"state", "no_culprit"}, {"summary", "s"}, {"culprit", "c"}}).ok());
  EXPECT_FALSE(OutcomeFromJson({{"state", "running"}, {"summary", "s"}}).ok());
  EXPECT_TRUE(OutcomeFromJson({{"state", "no_culprit"}, {"summary", "no culprit: ..."}}).ok());
}

}  // namespace
}  // namespace perfgate::coordinator
