// Choosing a gate's baseline from stored runs: branch, SKU, environment
// fields named by the policy, the merge-base's ancestry, same node first.
#include "coordinator/evaluate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/identity.h"
#include "coordinator/store.h"
#include "tests/coordinator/migrated_store_test.h"

namespace perfgate::coordinator {
namespace {

struct RunSpec {
  std::string branch = "main";
  std::string commit = "c0";
  std::string node = "node-a";
  std::string sku = "cpu-amd-epyc";
  std::string kernel = "6.1";
  double time_ms = 10.0;  // every sample's value
  RunStatus status = RunStatus::kComplete;
  std::vector<std::string> parents;
};

class EvaluateTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->RegisterAgent("agent", "host", "test").ok());
  }

  // Stores a complete (or failed) run of one case; returns its id.
  std::string Store(const RunSpec& spec) {
    RunMeta meta;
    meta.run_id = NewUuid();
    meta.agent_name = "agent";
    meta.environment = {spec.sku, {{"kernel", spec.kernel}}};
    meta.branch = spec.branch;
    meta.commit = spec.commit;
    meta.node = spec.node;
    meta.parent_commits = spec.parents;
    meta.started_at = std::chrono::system_clock::now();
    EXPECT_TRUE(store_->OpenRun(meta).ok());
    CaseResult c;
    c.benchmark = {"kernels", "sgemm", {{"m", "512"}}};
    c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
    for (uint32_t i = 0; i < 5; ++i) c.samples.push_back({i, {spec.time_ms}, false});
    c.status = CaseStatus::kOk;
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 1, {c}).ok());
    EXPECT_TRUE(store_->CloseRun(meta.run_id, spec.status, 1, "").ok());
    return meta.run_id;
  }

  absl::StatusOr<GateEvaluation> Gate(const std::string& candidate, const std::string& policy,
                                      const std::string& baseline_commit = "") {
    GateRequest req;
    req.candidate_run_id = candidate;
    req.baseline_branch = "main";
    req.baseline_commit = baseline_commit;
    req.policy_yaml = policy;
    return EvaluateCandidate(*store_, req);
  }

  // Stores a calibration of the case's time on `node`, measured `age` ago
  // in the environment RunSpec gives kernel `kernel`.
  void Calibrate(std::chrono::hours age, const std::string& kernel = "6.1",
                 const std::string& node = "node-a", double spread = 0.01) {
    CalibrationSet set;
    set.node = node;
    set.environment = {"cpu-amd-epyc", {{"kernel", kernel}}};
    set.measured_at = std::chrono::system_clock::now() - age;
    set.entries.push_back({"kernels/sgemm{m=512}", "time", "ms", Direction::kLowerIsBetter, spread, 10});
    auto stored = store_->PutCalibration("agent", set);
    ASSERT_TRUE(stored.ok()) << stored.status();
  }

  static std::vector<std::string> Ids(const GateEvaluation& ev) {
    std::vector<std::string> out;
    for (const RunRecord& r : ev.baselines) out.push_back(r.meta.run_id);
    return out;
  }

};

TEST_F(EvaluateTest, BaselineIsTheNewestKRunsOfTheBranchOnTheSameSku) {
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

TEST_F(EvaluateTest, EnvironmentFieldsNamedByThePolicyMustMatch) {
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

TEST_F(EvaluateTest, MergeBaseRestrictsTheBaselineToItsAncestry) {
  Store({.commit = "a0"});
  Store({.commit = "a1"});
  Store({.commit = "after-fork"});  // on main, but not an ancestor of the candidate
  const std::string cand = Store({.branch = "pr", .commit = "p1", .parents = {"p0", "a1", "a0"}});
  auto ev = Gate(cand, "version: 1\n", "a1");
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_EQ(ev->baselines.size(), 2u);
  for (const RunRecord& r : ev->baselines) EXPECT_NE(r.meta.commit, "after-fork");
}

TEST_F(EvaluateTest, SameNodeRunsComeFirst) {
  const std::string same_node = Store({.commit = "b1", .node = "node-a"});
  Store({.commit = "b2", .node = "node-b"});
  Store({.commit = "b3", .node = "node-b"});
  const std::string cand = Store({.branch = "pr", .node = "node-a"});
  auto ev = Gate(cand, "version: 1\ndefaults:\n  history: 1\n");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Ids(*ev), std::vector<std::string>{same_node});
}

TEST_F(EvaluateTest, RefusesBadRequestsWithPreciseCodes) {
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

TEST_F(EvaluateTest, AbModeComparesTheNamedBaselineRunOnly) {
  Store({.commit = "b1", .time_ms = 20});  // history would see this run; A/B must not
  const std::string side = Store({.branch = "ab-baseline", .commit = "c1", .time_ms = 10});
  const std::string cand = Store({.branch = "pr", .commit = "c1", .time_ms = 10.1});
  GateRequest req;
  req.candidate_run_id = cand;
  req.mode = gate::Mode::kAb;
  req.baseline_run_id = side;
  req.policy_yaml = "version: 1\n";
  auto ev = EvaluateCandidate(*store_, req);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(Ids(*ev), std::vector<std::string>{side});
  ASSERT_EQ(ev->result.verdicts.size(), 1u);
  EXPECT_EQ(ev->result.mode, gate::Mode::kAb);
  EXPECT_NEAR(ev->result.verdicts[0].change, 0.01, 1e-9);
  // One process a side shows no spread of its own.
  EXPECT_EQ(ev->result.verdicts[0].verdict, gate::Verdict::kTooFewRuns);

  // A calibration of the node (0.2 %) does, and 1 % is within 3 %.
  ASSERT_NO_FATAL_FAILURE(Calibrate(std::chrono::hours(1), "6.1", "node-a", 0.002));
  auto calibrated = EvaluateCandidate(*store_, req);
  ASSERT_TRUE(calibrated.ok()) << calibrated.status();
  ASSERT_EQ(calibrated->result.verdicts.size(), 1u);
  EXPECT_EQ(calibrated->result.verdicts[0].method, gate::Method::kCalibrated);
  EXPECT_EQ(calibrated->result.verdicts[0].verdict, gate::Verdict::kPass)
      << calibrated->result.verdicts[0].note;
}

TEST_F(EvaluateTest, AbModeRefusesAMissingOrForeignBaselineRun) {
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

constexpr auto kDay = std::chrono::hours(24);
constexpr char kOneRunPolicy[] = "version: 1\ndefaults:\n  history: 1\n";

TEST_F(EvaluateTest, OneBaselineRunAndACalibrationOfTheNodeJudgeAThirtyPercentSlowerCandidate) {
  Store({.commit = "b1"});
  const std::string first = Store({.branch = "pr", .commit = "c1", .time_ms = 13});
  ASSERT_NO_FATAL_FAILURE(Calibrate(kDay));
  // One run of the candidate: a neighbour could have slowed it; unconfirmed.
  auto once = Gate(first, kOneRunPolicy);
  ASSERT_TRUE(once.ok()) << once.status();
  ASSERT_EQ(once->result.verdicts.size(), 1u);
  EXPECT_EQ(once->result.verdicts[0].method, gate::Method::kCalibrated);
  EXPECT_EQ(once->result.verdicts[0].verdict, gate::Verdict::kUnconfirmed) << once->result.verdicts[0].note;
  EXPECT_THAT(once->result.verdicts[0].note, ::testing::HasSubstr("--filter 'kernels/sgemm{m=512}'"));
  EXPECT_EQ(once->result.outcome, gate::Outcome::kInconclusive);
  EXPECT_TRUE(once->candidate_repeats.empty());

  // The same commit measured again: both runs are judged, and both are slower.
  Store({.branch = "pr", .commit = "c2", .time_ms = 10});       // another commit: not a repeat
  Store({.branch = "pr", .commit = "c1", .sku = "h100-sxm5-80gb", .time_ms = 13});  // another SKU
  const std::string again = Store({.branch = "pr", .commit = "c1", .time_ms = 13});
  auto ev = Gate(again, kOneRunPolicy);
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_EQ(ev->candidate_repeats.size(), 1u);
  EXPECT_EQ(ev->candidate_repeats[0].meta.run_id, first);
  ASSERT_EQ(ev->result.verdicts.size(), 1u);
  const gate::MetricVerdict& v = ev->result.verdicts[0];
  EXPECT_EQ(v.method, gate::Method::kCalibrated);
  EXPECT_EQ(v.verdict, gate::Verdict::kRegression) << v.note;
  EXPECT_EQ(v.candidate_runs, 2u);
  EXPECT_NEAR(v.change, 0.3, 1e-9);
  EXPECT_THAT(v.note, ::testing::HasSubstr("calibration of node node-a"));
  EXPECT_THAT(ev->result.summary, ::testing::HasSubstr("judged over 2 runs (also " + first + ")"));
  EXPECT_EQ(ev->result.outcome, gate::Outcome::kRegression);
}

TEST_F(EvaluateTest, RunsOfTheCandidatesCommitAreNeverItsBaseline) {
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

TEST_F(EvaluateTest, AStaleCalibrationOrOneOfAnotherEnvironmentOrNodeIsNotUsed) {
  Store({.commit = "b1"});
  const std::string cand = Store({.branch = "pr", .commit = "c1", .time_ms = 13});
  auto verdict = [&](const std::string& policy) {
    auto ev = Gate(cand, policy);
    EXPECT_TRUE(ev.ok()) << ev.status();
    return ev.ok() && !ev->result.verdicts.empty() ? ev->result.verdicts[0].verdict
                                                   : gate::Verdict::kMissing;
  };
  ASSERT_NO_FATAL_FAILURE(Calibrate(kDay, "5.15"));      // the node before a kernel update
  ASSERT_NO_FATAL_FAILURE(Calibrate(kDay, "6.1", "node-b"));  // another node
  EXPECT_EQ(verdict(kOneRunPolicy), gate::Verdict::kTooFewRuns);
  ASSERT_NO_FATAL_FAILURE(Calibrate(40 * kDay));  // this node and environment, but stale
  EXPECT_EQ(verdict(kOneRunPolicy), gate::Verdict::kTooFewRuns);
  // Age alone kept it out: a policy that accepts 60 days uses it.
  // (One candidate run, so a change it would fail is unconfirmed.)
  EXPECT_EQ(verdict("version: 1\ndefaults:\n  history: 1\n  calibration_max_age: 60d\n"),
            gate::Verdict::kUnconfirmed);
}

}  // namespace
}  // namespace perfgate::coordinator
