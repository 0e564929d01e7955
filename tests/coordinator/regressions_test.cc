// The triage rules of the coordinator's domain (coordinator/regressions.h)
// on the in-memory repository: no database, and what a refused change
// leaves behind is checked in the repository itself.
#include "coordinator/domain/regressions.h"

#include <gtest/gtest.h>

#include "common/identity.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/store/memory_regressions.h"
#include "perfgate/v1/notification.pb.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {
namespace {

class TriageRules : public ::testing::Test {
 protected:
  void SetUp() override {
    store::DetectedRegression d;
    d.regression.benchmark = "kernels/sgemm";
    d.regression.metric = "time";
    d.regression.sku = "cpu-test";
    d.regression.branch = "main";
    d.regression.first_bad_run_id = NewUuid();
    d.regression.change = 0.12;
    d.detected_after_run_id = d.regression.first_bad_run_id;
    auto saved = repo_.SaveDetectedRegression(d, RegressionFound);
    ASSERT_TRUE(saved.ok() && saved->has_value()) << saved.status();
    id_ = (*saved)->id;
  }

  // The change is refused naming `field`, and the regression is as detected.
  void ExpectRefused(const TriageChange& change, const std::string& field) {
    auto r = Triage(repo_, change);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_EQ(r.status().message().rfind(field + ": ", 0), 0u) << r.status();
    auto now = repo_.GetRegression(id_);
    ASSERT_TRUE(now.ok());
    EXPECT_EQ(now->state, RegressionState::kNew);
    EXPECT_EQ(now->events.size(), 1u);
    EXPECT_EQ(repo_.Notifications().size(), 1u) << "regression.new alone";
  }

  store::InMemoryRegressionRepository repo_;
  int64_t id_ = 0;
};

TEST_F(TriageRules, RefuseAMoveBackToNewAndAChangeWithoutItsWhyOrWho) {
  ExpectRefused({id_, RegressionState::kNew, "reset", "ann", ""}, "state");
  ExpectRefused({id_, RegressionState::kAcknowledged, "", "ann", ""}, "note");
  ExpectRefused({id_, RegressionState::kAcknowledged, "seen", "", ""}, "by");
  ExpectRefused({id_, RegressionState::kAcknowledged, std::string(4001, 'x'), "ann", ""}, "note");
  ExpectRefused({0, RegressionState::kAcknowledged, "seen", "ann", ""}, "id");
}

TEST_F(TriageRules, OnlyAFixNamesTheCommitThatFixedIt) {
  ExpectRefused({id_, RegressionState::kFixed, "reverted", "ann", ""}, "commit");
  ExpectRefused({id_, RegressionState::kAccepted, "intended", "ann", "c9"}, "commit");
  auto fixed = Triage(repo_, {id_, RegressionState::kFixed, "reverted", "ann", "c9"});
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->fixed_by_commit, "c9");
}

TEST_F(TriageRules, AnAcceptedMoveIsRecordedAndAnnouncedWithWhoAndWhy) {
  auto r = Triage(repo_, {id_, RegressionState::kInvestigating, "bisecting", "ann", ""});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state, RegressionState::kInvestigating);
  const auto sent = repo_.Notifications();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].type, "regression.new");
  EXPECT_EQ(sent[1].type, "regression.triage");
  v1::NotificationEvent body;
  ASSERT_TRUE(wire::FromApiJson(sent[1].payload, &body, "payload").ok()) << sent[1].payload;
  EXPECT_EQ(body.triage().from(), v1::REGRESSION_STATE_NEW);
  EXPECT_EQ(body.triage().to(), v1::REGRESSION_STATE_INVESTIGATING);
  EXPECT_EQ(body.triage().by(), "ann");
  EXPECT_EQ(body.regression().state(), v1::REGRESSION_STATE_INVESTIGATING);
}

TEST_F(TriageRules, ListingRefusesALimitAboveAThousand) {
  RegressionFilter f;
  f.limit = 1001;
  EXPECT_EQ(ListRegressions(repo_, f).status().code(), absl::StatusCode::kInvalidArgument);
  f.limit = 1000;
  auto listed = ListRegressions(repo_, f);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
}

TEST(RegressionStateOf, NamesTheFieldAndTheStatesForAnUnknownName) {
  auto fixed = RegressionStateOf("state", "fixed");
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(*fixed, RegressionState::kFixed);
  auto typo = RegressionStateOf("state", "fixd");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message(),
            "state: 'fixd' is not one of new, acknowledged, investigating, fixed, accepted, invalid");
  for (std::string_view name : kRegressionStateNames) EXPECT_EQ(ToString(*ParseRegressionState(name)), name);
}

}  // namespace
}  // namespace perfgate::coordinator
