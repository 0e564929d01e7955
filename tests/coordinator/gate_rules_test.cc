// The gate's rules over stored runs (coordinator/evaluate.h) and detection
// (coordinator/regressions.h), on the in-memory sources and without a
// database: which runs are a candidate's baseline (branch, SKU, the environment fields a policy names,
// the merge-base's ancestry, same node first, never the candidate's own
// commit) and which requests are refused, with which code. The PostgreSQL
// GateSource is held to the same reads by its conformance suite
// (gate_source_test.cc); what only PostgreSQL does (closing runs, process
// medians, calibrations as stored) is tested in evaluate_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/identity.h"
#include "coordinator/domain/evaluate.h"
#include "coordinator/domain/regressions.h"
#include "coordinator/store/memory_gate_source.h"
#include "coordinator/store/memory_regressions.h"
#include "tests/coordinator/run_spec.h"

namespace perfgate::coordinator {
namespace {

class GateRules : public ::testing::Test {
 protected:
  // Keeps a run as the Store holds it once closed, finished after every run
  // kept before; returns its id.
  std::string Store(const RunSpec& spec) {
    RunRecord r;
    r.meta.run_id = NewUuid();
    r.meta.agent_name = "agent";
    r.meta.environment = {spec.sku, {{"kernel", spec.kernel}}};
    r.meta.branch = spec.branch;
    r.meta.commit = spec.commit;
    r.meta.node = spec.node;
    r.meta.parent_commits = spec.parents;
    r.meta.started_at = now_;
    now_ += std::chrono::seconds(1);
    r.status = spec.status;
    r.finished_at = now_;
    r.samples = 5;
    store::StoredSummary s;
    s.summary.benchmark = "kernels/sgemm{m=512}";
    s.summary.metric = "time";
    s.summary.unit = "ms";
    s.summary.n = 5;
    s.summary.median = s.summary.mean = s.summary.min = s.summary.max = spec.time_ms;
    s.summary.p5 = s.summary.p95 = s.summary.median_ci_low = s.summary.median_ci_high = spec.time_ms;
    s.summary.status = CaseStatus::kOk;
    store_->PutRun(r, {s}, {{{s.summary.benchmark, "time"}, std::vector<double>(5, spec.time_ms)}});
    return r.meta.run_id;
  }

  absl::StatusOr<GateEvaluation> Gate(const std::string& candidate, const std::string& policy,
                                      const std::string& baseline_commit = "") {
    return HistoryGate(*store_, candidate, policy, baseline_commit);
  }

  std::unique_ptr<store::InMemoryGateSource> store_ = std::make_unique<store::InMemoryGateSource>();
  TimePoint now_ = std::chrono::system_clock::now();
};

// Detection after a run of main closes (coordinator/regressions.h), on the
// in-memory runs, series and regressions: a step of 20 % in main's series
// is stored once, as new, with its regression.new notification; the runs
// after it see the same step and store nothing more.
TEST_F(GateRules, DetectionStoresAStepOfMainOnceWithItsNotification) {
  std::string last;
  for (int i = 0; i < 24; ++i) {
    last = Store({.commit = "c" + std::to_string(i), .time_ms = (i < 12 ? 10.0 : 12.0) * (i % 2 ? 1.002 : 0.998)});
  }
  store::InMemoryRegressionRepository regressions;
  const DetectionStores stores{*store_, *store_, regressions};
  auto policy = gate::ParsePolicy("version: 1\n", "policy.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  auto found = DetectRegressions(stores, last, *policy);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].good_commit, "c11");
  EXPECT_EQ((*found)[0].bad_commit, "c12");
  EXPECT_EQ((*found)[0].state, RegressionState::kNew);
  EXPECT_NEAR((*found)[0].change, 0.2, 0.01);
  ASSERT_EQ(regressions.Notifications().size(), 1u);
  EXPECT_EQ(regressions.Notifications()[0].type, "regression.new");

  last = Store({.commit = "c24", .time_ms = 12});
  auto again = DetectRegressions(stores, last, *policy);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->empty());
  const std::string topic = Store({.branch = "topic", .commit = "t1", .time_ms = 20});
  auto other = DetectRegressions(stores, topic, *policy);  // its own series of one run
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_TRUE(other->empty());
  EXPECT_EQ(regressions.Notifications().size(), 1u);
}

TEST_F(GateRules, BaselineIsTheNewestKRunsOfTheBranchOnTheSameSku) {
  Store({.commit = "old"});
  const std::string b2 = Store({.commit = "b2"});
  const std::string b3 = Store({.commit = "b3"});
  Store({.branch = "feature", .commit = "f1"});
  Store({.commit = "gpu", .sku = "h100-sxm5-80gb"});
  Store({.commit = "failed", .status = RunStatus::kFailed});
  const std::string cand = Store({.branch = "pr", .commit = "c1", .time_ms = 13});
  auto ev = Gate(cand, "version: 1\ndefaults:\n  history: 2\n");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Ids(*ev), (std::vector<std::string>{b3, b2}));
  ASSERT_EQ(ev->result.verdicts.size(), 1u);
  // Two runs cannot show between-run noise, whatever their samples say (13 vs
  // 10 ms): without a calibration of the node the gate says what to run.
  EXPECT_EQ(ev->result.verdicts[0].verdict, gate::Verdict::kTooFewRuns);
  EXPECT_EQ(ev->result.outcome, gate::Outcome::kInconclusive);
}


TEST_F(GateRules, EnvironmentFieldsNamedByThePolicyMustMatch) {
  Store({.commit = "b1", .kernel = "5.15"});
  const std::string same = Store({.commit = "b2", .kernel = "6.1"});
  Store({.commit = "b3", .kernel = "5.15"});
  const std::string cand = Store({.branch = "pr", .kernel = "6.1"});
  auto ev = Gate(cand, "version: 1\ndefaults:\n  match: [kernel]\n");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Ids(*ev), std::vector<std::string>{same});
  auto any = Gate(cand, "version: 1\n");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->baselines.size(), 3u);
}


TEST_F(GateRules, MergeBaseRestrictsTheBaselineToItsAncestry) {
  Store({.commit = "a0"});
  Store({.commit = "a1"});
  Store({.commit = "after-fork"});  // on main, but not an ancestor of the candidate
  const std::string cand = Store({.branch = "pr", .commit = "p1", .parents = {"p0", "a1", "a0"}});
  auto ev = Gate(cand, "version: 1\n", "a1");
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_EQ(ev->baselines.size(), 2u);
  for (const RunRecord& r : ev->baselines) EXPECT_NE(r.meta.commit, "after-fork");
}


TEST_F(GateRules, SameNodeRunsComeFirst) {
  const std::string same_node = Store({.commit = "b1", .node = "node-a"});
  Store({.commit = "b2", .node = "node-b"});
  Store({.commit = "b3", .node = "node-b"});
  const std::string cand = Store({.branch = "pr", .node = "node-a"});
  auto ev = Gate(cand, "version: 1\ndefaults:\n  history: 1\n");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Ids(*ev), std::vector<std::string>{same_node});
}


TEST_F(GateRules, RefusesBadRequestsWithPreciseCodes) {
  const std::string failed = Store({.branch = "pr", .status = RunStatus::kFailed});
  EXPECT_EQ(Gate("nope", "version: 1\n").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Gate(NewUuid(), "version: 1\n").status().code(), absl::StatusCode::kNotFound);
  auto not_complete = Gate(failed, "version: 1\n");
  EXPECT_EQ(not_complete.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(not_complete.status().message().find("failed"), std::string::npos);
  auto typo = Gate(failed, "version: 1\ndefaults:\n  tolerence: 5%\n");
  EXPECT_EQ(typo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(typo.status().message().find(":3:"), std::string::npos) << typo.status();
}


TEST_F(GateRules, AbModeRefusesAMissingOrForeignBaselineRun) {
  const std::string other_sku = Store({.commit = "g", .sku = "h100-sxm5-80gb"});
  const std::string cand = Store({.branch = "pr", .commit = "c1"});
  GateRequest req;
  req.candidate_run_id = cand;
  req.mode = gate::Mode::kAb;
  req.policy_yaml = "version: 1\n";
  auto none = EvaluateCandidate(*store_, req);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(none.status().message()), ::testing::HasSubstr("baseline_run_id"));
  req.baseline_run_id = other_sku;
  auto foreign = EvaluateCandidate(*store_, req);
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(foreign.status().message()), ::testing::HasSubstr("h100-sxm5-80gb"));
}



TEST_F(GateRules, RunsOfTheCandidatesCommitAreNeverItsBaseline) {
  Store({.commit = "m1"});
  Store({.commit = "m2"});
  Store({.commit = "m3"});
  const std::string earlier = Store({.commit = "m4", .time_ms = 10.1});
  const std::string cand = Store({.commit = "m4", .time_ms = 10.2});  // main gated against itself
  auto ev = Gate(cand, "version: 1\n");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->baselines.size(), 3u);
  for (const RunRecord& r : ev->baselines) EXPECT_NE(r.meta.commit, "m4");
  ASSERT_EQ(ev->candidate_repeats.size(), 1u);
  EXPECT_EQ(ev->candidate_repeats[0].meta.run_id, earlier);
}


}  // namespace
}  // namespace perfgate::coordinator
