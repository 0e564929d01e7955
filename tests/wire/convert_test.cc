#include "wire/convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace perfgate::wire
