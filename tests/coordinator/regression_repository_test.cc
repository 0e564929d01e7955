// One conformance suite for every RegressionRepository
// (coordinator/store/regressions.h): the PostgreSQL store on a private,
// migrated server, and the in-memory repository the domain's tests use.
// Each test runs against both, so the two cannot drift apart.
#include <gtest/gtest.h>

#include "tests/coordinator/repository_backends.h"

namespace perfgate::coordinator {
namespace {

class RegressionRepositoryConformance : public RepositoryConformance {
 protected:
  store::RegressionRepository& Repo() { return backend_->Regressions(); }

  // A detection of series (benchmark, main, cpu-test) first bad at a new run.
  store::DetectedRegression Detection(const std::string& benchmark, double change = 0.15,
                                      const std::string& branch = "main") {
    store::DetectedRegression d;
    d.regression.benchmark = benchmark;
    d.regression.metric = "real_time";
    d.regression.sku = "cpu-test";
    d.regression.branch = branch;
    d.regression.unit = "ns";
    d.regression.good_commit = "c1";
    d.regression.bad_commit = "c2";
    d.regression.first_bad_run_id = backend_->NewRunId();
    d.regression.median_before = 100;
    d.regression.median_after = 100 * (1 + change);
    d.regression.change = change;
    d.regression.p_value = 0.001;
    d.detected_after_run_id = d.regression.first_bad_run_id;
    return d;
  }

  int64_t Saved(const store::DetectedRegression& d) {
    auto saved = Repo().SaveDetectedRegression(d, {});
    EXPECT_TRUE(saved.ok() && saved->has_value()) << saved.status();
    return saved.ok() && saved->has_value() ? (*saved)->id : 0;
  }

};

TEST_P(RegressionRepositoryConformance, StoresADetectionAsNewWithTheEventOfItsDetection) {
  const store::DetectedRegression d = Detection("gbench/BM_A");
  auto saved = Repo().SaveDetectedRegression(d, {});
  ASSERT_TRUE(saved.ok() && saved->has_value()) << saved.status();
  EXPECT_GT((*saved)->id, 0);
  EXPECT_EQ((*saved)->state, RegressionState::kNew);
  EXPECT_DOUBLE_EQ((*saved)->change, 0.15);
  auto got = Repo().GetRegression((*saved)->id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->first_bad_run_id, d.regression.first_bad_run_id);
  EXPECT_EQ(got->unit, "ns");
  ASSERT_EQ(got->events.size(), 1u);
  EXPECT_FALSE(got->events[0].from_state.has_value());
  EXPECT_EQ(got->events[0].to_state, RegressionState::kNew);
  EXPECT_EQ(got->events[0].actor, "perfgate-coordinator");
  EXPECT_EQ(got->events[0].note, "detected after run " + d.detected_after_run_id + " of main closed");
  EXPECT_EQ(Repo().GetRegression((*saved)->id + 1000).status().code(), absl::StatusCode::kNotFound);
}

TEST_P(RegressionRepositoryConformance, TheSameFirstBadRunIsStoredOnce) {
  const store::DetectedRegression d = Detection("gbench/BM_A");
  Saved(d);
  auto again = Repo().SaveDetectedRegression(d, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->has_value());
  auto all = Repo().FindRegressions({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
}

TEST_P(RegressionRepositoryConformance, AChangeSeenAgainNearbyFollowsTheEstimateOnlyWhileNew) {
  const store::DetectedRegression first = Detection("gbench/BM_A", 0.15);
  const int64_t id = Saved(first);
  store::DetectedRegression later = Detection("gbench/BM_A", 0.22);
  later.nearby_runs = {first.regression.first_bad_run_id};
  auto moved = Repo().SaveDetectedRegression(later, {});
  ASSERT_TRUE(moved.ok() && !moved->has_value()) << moved.status();
  auto got = Repo().GetRegression(id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->first_bad_run_id, later.regression.first_bad_run_id);
  EXPECT_DOUBLE_EQ(got->change, 0.22);

  ASSERT_TRUE(Repo().ApplyTriage({id, RegressionState::kAcknowledged, "seen", "ann", ""}, {}).ok());
  store::DetectedRegression third = Detection("gbench/BM_A", 0.30);
  third.nearby_runs = {later.regression.first_bad_run_id};
  auto kept = Repo().SaveDetectedRegression(third, {});
  ASSERT_TRUE(kept.ok() && !kept->has_value()) << kept.status();
  got = Repo().GetRegression(id);
  ASSERT_TRUE(got.ok());
  EXPECT_DOUBLE_EQ(got->change, 0.22) << "a change someone looked at keeps its estimate";
}

TEST_P(RegressionRepositoryConformance, FindsByStateBranchAndBenchmarkNewestFirstWithinTheLimit) {
  const int64_t a = Saved(Detection("gbench/BM_A"));
  const int64_t b = Saved(Detection("gbench/BM_B"));
  const int64_t c = Saved(Detection("gbench/BM_A", 0.15, "release"));
  ASSERT_TRUE(Repo().ApplyTriage({b, RegressionState::kInvalid, "noise", "ann", ""}, {}).ok());

  auto all = Repo().FindRegressions({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, c);
  EXPECT_EQ((*all)[2].id, a);
  EXPECT_EQ((*all)[0].events.size(), 1u);

  store::RegressionFilter on_main;
  on_main.branch = "main";
  on_main.state = RegressionState::kNew;
  auto main_new = Repo().FindRegressions(on_main);
  ASSERT_TRUE(main_new.ok());
  ASSERT_EQ(main_new->size(), 1u);
  EXPECT_EQ(main_new->front().id, a);

  store::RegressionFilter of_a;
  of_a.benchmark = "gbench/BM_A";
  of_a.limit = 1;
  auto newest = Repo().FindRegressions(of_a);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u);
  EXPECT_EQ(newest->front().id, c);
}

TEST_P(RegressionRepositoryConformance, TriageMovesTheStateAndKeepsEveryMove) {
  const int64_t id = Saved(Detection("gbench/BM_A"));
  auto fixed = Repo().ApplyTriage({id, RegressionState::kFixed, "reverted", "ann", "c9"}, {});
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->state, RegressionState::kFixed);
  EXPECT_EQ(fixed->fixed_by_commit, "c9");
  ASSERT_EQ(fixed->events.size(), 2u);
  EXPECT_EQ(fixed->events[1].from_state, RegressionState::kNew);
  EXPECT_EQ(fixed->events[1].to_state, RegressionState::kFixed);
  EXPECT_EQ(fixed->events[1].actor, "ann");
  EXPECT_EQ(fixed->events[1].note, "reverted");
  EXPECT_EQ(fixed->events[1].commit, "c9");

  auto again = Repo().ApplyTriage({id, RegressionState::kFixed, "again", "bob", "c9"}, {});
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("is already fixed"), std::string::npos) << again.status();
  EXPECT_EQ(Repo().ApplyTriage({id + 1000, RegressionState::kAccepted, "x", "bob", ""}, {}).status().code(),
            absl::StatusCode::kNotFound);
  auto reopened = Repo().ApplyTriage({id, RegressionState::kInvestigating, "came back", "bob", ""}, {});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(reopened->fixed_by_commit, "") << "only 'fixed' names a commit";
  EXPECT_EQ(reopened->events.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Implementations, RegressionRepositoryConformance, ConformanceBackends(), BackendName);

}  // namespace
}  // namespace perfgate::coordinator
