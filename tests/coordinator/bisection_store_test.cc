// The bisections repository on a real, migrated PostgreSQL, and the bodies
// of its HTTP routes in the API's JSON (bisection_messages.h): a job, its probes (each commit's attempt once,
// none after the end), its outcome, and the culprit written into the
// regression's triage record in the same transaction.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "common/identity.h"
#include "coordinator/domain/bisection_messages.h"
#include "coordinator/domain/notification_events.h"
#include "nlohmann/json.hpp"
#include "tests/coordinator/migrated_store_test.h"
#include "perfgate/v1/notification.pb.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {
namespace {

using store::Bisection;
using store::BisectionProbe;

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
    auto b = BisectionFromBody(Json{{"good", "c19"}, {"bad", "c20"}, {"commits", {"c20"}},
                                    {"settings", {{"repo", "/src"}}}, {"regression_id", regression}, {"by", "ann"}}
                                   .dump());
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *b : Bisection{};
  }

  // `verdict`: carries, clean, undecided or failed.
  static BisectionProbe ProbeAt(const std::string& commit, int attempt, const std::string& verdict) {
    auto p = ProbeFromBody(Json{{"commit", commit}, {"attempt", attempt},
                                {"verdict", "PROBE_VERDICT_" + absl::AsciiStrToUpper(verdict)}, {"threshold", 0.075},
                                {"change", 0.15}, {"ci", {{"low", 0.13}, {"high", 0.17}}}, {"rounds", 6},
                                {"benchmark", "gbench/BM_Work"}, {"metric", "real_time"}}
                               .dump());
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

  auto outcome = OutcomeFromBody(Json{{"state", "BISECTION_STATE_CULPRIT"}, {"culprit", "c20"}, {"change", 0.15},
                                      {"ci", {{"low", 0.13}, {"high", 0.17}}}, {"summary", "culprit c20"},
                                      {"triage_note", "culprit c20 (+15.0 % [+13.0, +17.0])"}}
                                     .dump());
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
  v1::NotificationEvent event;
  ASSERT_TRUE(wire::FromApiJson(outbox->front().payload, &event, "payload").ok()) << outbox->front().payload;
  EXPECT_EQ(event.bisection().outcome().culprit(), "c20");
  EXPECT_EQ(event.bisection().regression_id(), regression);
  EXPECT_DOUBLE_EQ(event.bisection().outcome().ci().high(), 0.17);
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
  auto answered = ToMessage(*listed);
  ASSERT_TRUE(answered.ok()) << answered.status();
  ASSERT_EQ(answered->bisections_size(), 1);
  EXPECT_EQ(answered->bisections(0).culprit(), "c20");
  EXPECT_EQ(answered->bisections(0).state(), v1::BISECTION_STATE_CULPRIT);
  EXPECT_EQ(answered->bisections(0).settings().repo(), "/src") << "the stored settings read back";
  EXPECT_DOUBLE_EQ(answered->bisections(0).ci().high(), 0.17);
}

TEST_F(BisectionStoreTest, RefusesAnUnknownRegressionOrBisection) {
  EXPECT_EQ(store_->CreateBisection(Job(424242)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetBisection(99).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->AddBisectionProbe(99, ProbeAt("c1", 1, "clean")).status().code(), absl::StatusCode::kNotFound);
}

TEST(BisectionJson, RefusesBodiesThatAreWrongNamingTheField) {
  const auto message = [](const absl::Status& s) { return std::string(s.message()); };
  EXPECT_NE(message(BisectionFromBody(R"({"good": "a", "bad": "b", "commits": ["c"]})").status()).find("commits"),
            std::string::npos);
  EXPECT_NE(message(BisectionFromBody(R"({"good": "a", "bad": "b", "commits": ["b"], "colour": 1})").status())
                .find("colour"),
            std::string::npos);
  EXPECT_NE(message(BisectionFromBody(R"({"good": "a", "bad": "b", "commits": [1]})").status()).find("commits"),
            std::string::npos);
  EXPECT_NE(message(BisectionFromBody("{\"good\": \"\xff\"}").status()).find("UTF-8"), std::string::npos);
  EXPECT_NE(message(BisectionFromBody("[1, 2]").status()).find("body"), std::string::npos);
  EXPECT_NE(message(ProbeFromBody(R"({"commit": "a", "attempt": 1, "verdict": "maybe", "threshold": 0.1})").status())
                .find("maybe"),
            std::string::npos);
  EXPECT_NE(message(ProbeFromBody(R"({"commit": "a", "attempt": 1, "threshold": 0.1})").status()).find("verdict"),
            std::string::npos)
      << "a probe without a verdict";
  const std::string clean = R"("verdict": "PROBE_VERDICT_CLEAN")";
  EXPECT_TRUE(ProbeFromBody(R"({"commit": "a", "attempt": 1, "threshold": 0.1, )" + clean + "}").ok());
  EXPECT_FALSE(ProbeFromBody(R"({"commit": "a", "attempt": 0, "threshold": 0.1, )" + clean + "}").ok());
  EXPECT_FALSE(ProbeFromBody(R"({"commit": "a", "attempt": 1, "threshold": -1, )" + clean + "}").ok());
  EXPECT_FALSE(ProbeFromBody(R"({"commit": "a", "attempt": 1, "threshold": 0.1, "ci": [0.1], )" + clean + "}").ok());
  EXPECT_NE(message(ProbeFromBody(R"({"commit": "a", "attempt": 1, "threshold": 0.1, "change": "Infinity", )" + clean +
                                  "}")
                        .status())
                .find("change"),
            std::string::npos)
      << "a value sent is finite";
  EXPECT_FALSE(ProbeFromBody(R"({"commit": "a", "attempt": 1, "threshold": 0.1, "ci": {"low": 0.2, "high": 0.1}, )" +
                             clean + "}")
                   .ok());
  EXPECT_FALSE(OutcomeFromBody(R"({"state": "BISECTION_STATE_CULPRIT", "summary": "s"})").ok())
      << "a culprit state names it";
  EXPECT_FALSE(OutcomeFromBody(R"({"state": "BISECTION_STATE_NO_CULPRIT", "summary": "s", "culprit": "c"})").ok());
  EXPECT_FALSE(OutcomeFromBody(R"({"state": "BISECTION_STATE_RUNNING", "summary": "s"})").ok());
  EXPECT_FALSE(OutcomeFromBody(R"({"state": "no_culprit", "summary": "s"})").ok()) << "the names of the mapping";
  EXPECT_TRUE(OutcomeFromBody(R"({"state": "BISECTION_STATE_NO_CULPRIT", "summary": "no culprit: ..."})").ok());
}

// The API's JSON of a probe: what was not measured is absent, never null or
// NaN; a verdict is its enum's name; the stored time is RFC 3339 text.
TEST(BisectionJson, AnswersInTheMappingOfTheMessages) {
  store::Bisection b;
  b.id = 7;
  b.good_commit = "c1";
  b.bad_commit = "c2";
  b.commits_json = R"(["c2"])";
  b.settings_json = R"({"repo": "/src", "endpoint_threshold": 0.05})";
  store::BisectionProbe failed;
  failed.commit = "c2";
  failed.verdict = ProbeVerdict::kFailed;
  failed.threshold = 0.05;
  failed.note = "the build failed";
  b.probes.push_back(failed);
  auto m = ToMessage(b);
  ASSERT_TRUE(m.ok()) << m.status();
  const Json j = Json::parse(wire::ToApiJson(*m));
  EXPECT_EQ(j["id"], "7") << "64-bit integers are strings in the mapping";
  EXPECT_EQ(j["state"], "BISECTION_STATE_RUNNING");
  EXPECT_FALSE(j.contains("change")) << j.dump();
  EXPECT_FALSE(j.contains("ci")) << j.dump();
  const Json& p = j["probes"][0];
  EXPECT_EQ(p["verdict"], "PROBE_VERDICT_FAILED");
  EXPECT_FALSE(p.contains("change")) << p.dump();
  EXPECT_EQ(p["rounds"], 0) << "a zero is printed";
  EXPECT_EQ(p["at"], "1970-01-01T00:00:00Z");
  EXPECT_EQ(j["settings"]["repo"], "/src");
  b.settings_json = R"({"repo": 5})";
  EXPECT_EQ(ToMessage(b).status().code(), absl::StatusCode::kInternal) << "stored settings that do not read";
}

}  // namespace
}  // namespace perfgate::coordinator
