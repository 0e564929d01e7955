// Choosing a gate's baseline from stored runs: branch, SKU, environment
// fields named by the policy, the merge-base's ancestry, same node first.
#include "coordinator/domain/evaluate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/identity.h"
#include "coordinator/store.h"
#include "tests/coordinator/migrated_store_test.h"
#include "tests/coordinator/run_spec.h"

namespace perfgate::coordinator {
namespace {

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
    for (uint32_t i = 0; i < 5 && !spec.bound; ++i) c.samples.push_back({i, {spec.time_ms}, false});
    c.status = spec.bound ? CaseStatus::kSkipped : CaseStatus::kOk;
    c.bound = spec.bound;
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 1, {c}).ok());
    EXPECT_TRUE(store_->CloseRun(meta.run_id, spec.status, 1, "").ok());
    return meta.run_id;
  }

  absl::StatusOr<GateEvaluation> Gate(const std::string& candidate, const std::string& policy) {
    return HistoryGate(*store_, candidate, policy);
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

  // Stores a complete side of an A/B job: one case whose samples came from
  // one process per entry of `processes` (run details "ab_blocks:KEY", the
  // samples each took), sent in two batches, the later samples first.
  // The two sides of an A/B job of six rounds, one process of five samples
  // a side each, sample i of a round holding at(round, i) (baseline,
  // candidate); their run ids as stored.
  std::pair<std::string, std::string> StoreRounds(const std::function<std::pair<double, double>(int, int)>& at) {
    std::vector<std::vector<double>> base(6), cand(6);
    for (int round = 0; round < 6; ++round) {
      for (int i = 0; i < 5; ++i) {
        const auto [b, c] = at(round, i);
        base[round].push_back(b);
        cand[round].push_back(c);
      }
    }
    return {StoreSide("ab-baseline", base), StoreSide("pr", cand)};
  }

  // An A/B gate of the candidate against the baseline side, default policy.
  static GateRequest AbRequest(const std::string& base_id, const std::string& cand_id) {
    GateRequest req;
    req.candidate_run_id = cand_id;
    req.mode = gate::Mode::kAb;
    req.baseline_run_id = base_id;
    req.policy_yaml = "version: 1\n";
    return req;
  }

  std::string StoreSide(const std::string& branch, const std::vector<std::vector<double>>& processes) {
    RunMeta meta;
    meta.run_id = NewUuid();
    meta.agent_name = "agent";
    meta.environment = {"cpu-amd-epyc", {{"kernel", "6.1"}}};
    meta.branch = branch;
    meta.commit = "c1";
    meta.node = "node-a";
    meta.started_at = std::chrono::system_clock::now();
    CaseResult first, second;
    first.benchmark = second.benchmark = {"kernels", "sgemm", {{"m", "512"}}};
    first.metrics = second.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
    std::vector<size_t> sizes;
    std::vector<double> all;
    for (const auto& p : processes) {
      sizes.push_back(p.size());
      all.insert(all.end(), p.begin(), p.end());
    }
    for (uint32_t i = 0; i < all.size(); ++i) {
      (i < all.size() / 2 ? second : first).samples.push_back({i, {all[i]}, false});
    }
    second.status = CaseStatus::kOk;
    meta.details["ab_blocks:" + first.benchmark.Key()] = absl::StrJoin(sizes, ",");
    EXPECT_TRUE(store_->OpenRun(meta).ok());
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 1, {first}).ok());
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 2, {second}).ok());
    auto closed = store_->CloseRun(meta.run_id, RunStatus::kComplete, 2, "");
    EXPECT_TRUE(closed.ok()) << closed.status();
    return meta.run_id;
  }
};

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

// A side of an A/B job keeps the medians of its processes with its summary
// (in sample order, whatever order the batches came in); a run of one
// process keeps none.
TEST_F(EvaluateTest, CloseStoresTheMediansOfTheProcessesOfAnAbSide) {
  const std::string side = StoreSide("ab", {{3, 1, 2}, {7, 5}, {9, 8, 30}});
  auto stored = store_->GetGateSummaries(side);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  ASSERT_TRUE((*stored)[0].process_medians.has_value());
  EXPECT_EQ(*(*stored)[0].process_medians, (std::vector<double>{2, 6, 9}));
  EXPECT_EQ((*stored)[0].summary.median, 6);

  const std::string single = Store({.commit = "one"});
  auto plain = store_->GetGateSummaries(single);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(plain->size(), 1u);
  EXPECT_FALSE((*plain)[0].process_medians.has_value());
}

// A case that could only bound its value (a knee beyond the swept rates)
// is stored with its bound, and the history gate judges the bound, never a
// value: a candidate at most 4 ms against runs of 10 ms is better by at
// least 60 %, one at most 12 ms says nothing either way.
TEST_F(EvaluateTest, AStoredBoundIsJudgedAsABoundAgainstTheHistory) {
  for (int i = 0; i < 3; ++i) Store({.commit = absl::StrCat("b", i)});
  const std::string faster =
      Store({.commit = "fast", .bound = ValueBound{"time", ValueBound::Kind::kAtMost, 4.0}});
  auto stored = store_->GetGateSummaries(faster);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].summary.bound, (ValueBound{"time", ValueBound::Kind::kAtMost, 4.0}));
  auto ev = Gate(faster, "version: 1\n");
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_EQ(ev->result.verdicts.size(), 1u);
  EXPECT_EQ(ev->result.verdicts[0].verdict, gate::Verdict::kImprovement) << ev->result.verdicts[0].note;
  EXPECT_NEAR(ev->result.verdicts[0].change, -0.6, 1e-12);

  const std::string open = Store({.commit = "open", .bound = ValueBound{"time", ValueBound::Kind::kAtMost, 12.0}});
  ev = Gate(open, "version: 1\n");
  ASSERT_TRUE(ev.ok()) << ev.status();
  ASSERT_EQ(ev->result.verdicts.size(), 1u);
  EXPECT_EQ(ev->result.verdicts[0].verdict, gate::Verdict::kUndecided) << ev->result.verdicts[0].note;
  // A run without a bound stores none.
  auto plain = store_->GetGateSummaries(Store({.commit = "plain"}));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE((*plain)[0].summary.bound.has_value());
}

// The gate of A/B sides gives the same verdict, to the last bit, from the
// stored process medians as from the samples (what it reads for a run
// closed before the medians were stored).
TEST_F(EvaluateTest, StoredProcessMediansJudgeAsTheSamplesDo) {
  const auto [base_id, cand_id] = StoreRounds([](int round, int i) {
    return std::pair(10.0 + 0.05 * ((round * 7 + i * 3) % 5) + 0.01 * round,
                     10.6 + 0.05 * ((round * 3 + i * 2) % 5) + 0.01 * round);
  });
  const GateRequest req = AbRequest(base_id, cand_id);
  auto from_medians = EvaluateCandidate(*store_, req);
  ASSERT_TRUE(from_medians.ok()) << from_medians.status();
  {
    pqxx::connection conn(ConnInfo());
    pqxx::work txn(conn);
    EXPECT_EQ(txn.exec("UPDATE summaries SET process_medians = NULL WHERE process_medians IS NOT NULL")
                  .affected_rows(),
              2);
    txn.commit();
  }
  auto from_samples = EvaluateCandidate(*store_, req);
  ASSERT_TRUE(from_samples.ok()) << from_samples.status();
  ASSERT_EQ(from_medians->result.verdicts.size(), 1u);
  ASSERT_EQ(from_samples->result.verdicts.size(), 1u);
  const gate::MetricVerdict& a = from_medians->result.verdicts[0];
  const gate::MetricVerdict& b = from_samples->result.verdicts[0];
  // Six processes a side, paired by round: a 6 % regression.
  EXPECT_EQ(a.method, gate::Method::kBlocks);
  EXPECT_EQ(a.blocks, 6u);
  EXPECT_EQ(a.verdict, gate::Verdict::kRegression) << a.note;
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_EQ(a.method, b.method);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.change, b.change);
  EXPECT_EQ(a.change_ci_low, b.change_ci_low);
  EXPECT_EQ(a.change_ci_high, b.change_ci_high);
  EXPECT_EQ(a.p_value, b.p_value);
  EXPECT_EQ(a.note, b.note);
  EXPECT_EQ(from_medians->result.outcome, from_samples->result.outcome);
}

// Two runs compared (the dashboard's compare) show the change a gate of
// the pair prints: here the paired shift of their rounds, which a change
// of the runs' pooled medians is not. The machine drifted from about 10 ms
// to about 30 ms halfway, and the candidate is 0.6 ms slower in every
// round: +6 % then +2 % paired, about +3 % by the pooled medians.
TEST_F(EvaluateTest, TwoRunsComparedShowTheChangeTheGateOfThePairPrints) {
  const auto [base_id, cand_id] = StoreRounds([](int round, int i) {
    const double level = (round < 3 ? 10.0 : 30.0) + 0.05 * ((round * 7 + i * 3) % 5);
    return std::pair(level, level + 0.6);
  });
  const GateRequest req = AbRequest(base_id, cand_id);
  auto gated = EvaluateCandidate(*store_, req);
  ASSERT_TRUE(gated.ok()) << gated.status();
  auto base_data = LoadRunData(*store_, gated->baselines.at(0));
  auto cand_data = LoadRunData(*store_, gated->candidate);
  ASSERT_TRUE(base_data.ok() && cand_data.ok());
  const std::vector<gate::MetricVerdict> changes =
      EstimateChanges(*base_data, *cand_data, gated->candidate.meta.environment.sku);
  ASSERT_EQ(gated->result.verdicts.size(), 1u);
  ASSERT_EQ(changes.size(), 1u);
  const gate::MetricVerdict& g = gated->result.verdicts[0];
  const gate::MetricVerdict& c = changes[0];
  EXPECT_EQ(c.method, gate::Method::kBlocks);
  EXPECT_EQ(c.change, g.change);
  EXPECT_EQ(c.change_ci_low, g.change_ci_low);
  EXPECT_EQ(c.change_ci_high, g.change_ci_high);
  EXPECT_NEAR(c.change, std::exp((std::log(10.7 / 10.1) + std::log(30.7 / 30.1)) / 2) - 1, 0.002);
  auto sums = store_->GetSummaries(base_id), cand_sums = store_->GetSummaries(cand_id);
  ASSERT_TRUE(sums.ok() && cand_sums.ok());
  const double pooled = (*cand_sums)[0].median / (*sums)[0].median - 1;
  EXPECT_GT(std::fabs(c.change - pooled), 0.005) << c.change << " vs pooled " << pooled;
}

}  // namespace
}  // namespace perfgate::coordinator
