#include "wire/convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "common/identity.h"

namespace perfgate::wire {
namespace {

using ::testing::HasSubstr;

RunMeta Meta() {
  RunMeta m;
  m.run_id = NewUuid();
  m.agent_name = "node-1";
  m.environment.sku = "h100-sxm5-80gb";
  m.branch = "main";
  m.trigger = Trigger::kCi;
  m.started_at = std::chrono::system_clock::now();
  return m;
}

TEST(Convert, RunDetailsRoundTripThroughOpenRun) {
  RunMeta m = Meta();
  m.details = {{"gpu0.uuid", "GPU-0b1c"}, {"nvml", "ok"}, {"slurm_job_id", ""}};
  v1::OpenRunRequest r;
  ToProto(m, &r);
  auto back = FromProto(r);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->details, m.details);
}

TEST(Convert, RefusesADetailWithAnEmptyKey) {
  RunMeta m = Meta();
  m.details = {{"", "x"}};
  v1::OpenRunRequest r;
  ToProto(m, &r);
  auto back = FromProto(r);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(back.status().message(), HasSubstr("details"));
}

TEST(Convert, RefusesAnOverlongDetailNamingItsKey) {
  RunMeta m = Meta();
  m.details = {{"gpu0.processes", std::string(5000, 'p')}};
  v1::OpenRunRequest r;
  ToProto(m, &r);
  auto back = FromProto(r);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(back.status().message(), HasSubstr("details['gpu0.processes']"));
}

CaseResult BoundedKnee() {
  CaseResult c;
  c.benchmark = {"inference", "serve_knee", {{"rates", "1000+2000"}}};
  c.metrics = {{"knee_rate", "requests/s", Direction::kHigherIsBetter}};
  c.status = CaseStatus::kSkipped;
  c.reason = "knee above the swept range";
  c.bound = ValueBound{"knee_rate", ValueBound::Kind::kAtLeast, 2000};
  return c;
}

TEST(Convert, ACaseBoundRoundTripsAndABadOneIsRefusedNamingTheField) {
  v1::CaseResult wire;
  ToProto(BoundedKnee(), &wire);
  auto back = FromProto(wire, "cases[0]");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->bound, BoundedKnee().bound);
  CaseResult none = BoundedKnee();
  none.bound.reset();
  v1::CaseResult plain;
  ToProto(none, &plain);
  EXPECT_FALSE(plain.has_bound());
  EXPECT_FALSE(FromProto(plain, "cases[0]")->bound.has_value());

  v1::CaseResult bad = wire;
  bad.mutable_bound()->set_kind(v1::ValueBound::KIND_UNSPECIFIED);
  EXPECT_THAT(FromProto(bad, "cases[0]").status().message(), HasSubstr("cases[0].bound.kind"));
  bad = wire;
  bad.mutable_bound()->set_value(std::numeric_limits<double>::infinity());
  EXPECT_THAT(FromProto(bad, "cases[0]").status().message(), HasSubstr("cases[0].bound.value: inf is not finite"));
  bad = wire;
  bad.mutable_bound()->set_metric("ttft_p99");
  EXPECT_THAT(FromProto(bad, "cases[0]").status().message(),
              HasSubstr("cases[0].bound.metric: 'ttft_p99' is none of the case's metrics"));
  bad = wire;
  v1::Sample* s = bad.add_samples();
  s->add_values(1500);
  EXPECT_THAT(FromProto(bad, "cases[0]").status().message(), HasSubstr("a case with samples gives values"));
}

}  // namespace
}  // namespace perfgate::wire
