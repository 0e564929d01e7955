// `perfgate calibrations`: per node and case, age, fitness at the policy's
// tolerance, stale and superseded calibrations marked.
#include "cli/calibrations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gate/policy.h"

namespace perfgate::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1'790'000'000;
constexpr int64_t kDay = 86400;

void Add(v1::ListCalibrationsResponse* r, const std::string& node, const std::string& benchmark,
         double spread, int64_t days_ago, const std::string& hash) {
  v1::StoredCalibration* c = r->add_calibrations();
  c->set_sku("cpu-amd-epyc");
  c->set_node(node);
  c->set_environment_hash(hash);
  c->mutable_entry()->set_benchmark(benchmark);
  c->mutable_entry()->set_metric("time");
  c->mutable_entry()->set_unit("ms");
  c->mutable_entry()->set_direction(v1::LOWER_IS_BETTER);
  c->mutable_entry()->set_spread(spread);
  c->mutable_entry()->set_processes(10);
  c->mutable_measured_at()->set_seconds(kNow - days_ago * kDay - 60);
}

// The line of the table that names `benchmark` on `node`'s block.
std::string Row(const std::string& table, const std::string& node, const std::string& benchmark) {
  const size_t block = table.find("node " + node + " ");
  if (block == std::string::npos) return "";
  const size_t at = table.find(benchmark, block);
  if (at == std::string::npos) return "";
  const size_t start = table.rfind('\n', at) + 1;
  return table.substr(start, table.find('\n', at) - start);
}

TEST(CalibrationsRender, ShowsAgeAndFitnessAndMarksStaleAndSupersededCalibrations) {
  v1::ListCalibrationsResponse r;
  r.mutable_now()->set_seconds(kNow);
  Add(&r, "n1", "kernels/copy{bytes=1}", 0.002, 2, "aaaaaaaaaaaaaaaa");
  Add(&r, "n1", "kernels/sgemm{m=512}", 0.002, 45, "aaaaaaaaaaaaaaaa");
  Add(&r, "n1", "kernels/triad{bytes=1}", 0.05, 1, "aaaaaaaaaaaaaaaa");
  Add(&r, "n1", "kernels/triad{bytes=1}", 0.002, 9, "bbbbbbbbbbbbbbbb");  // before an update
  Add(&r, "n2", "kernels/copy{bytes=1}", 0.002, 3, "cccccccccccccccc");
  const std::string table = RenderCalibrations(r, gate::Policy{});

  EXPECT_THAT(Row(table, "n1", "kernels/copy{bytes=1}"),
              AllOf(HasSubstr("0.20 %"), HasSubstr(" 2d "), HasSubstr("aaaaaaaaaaaa "), HasSubstr(" fit"),
                    Not(HasSubstr("stale")), Not(HasSubstr("not fit"))));
  EXPECT_THAT(Row(table, "n1", "kernels/sgemm{m=512}"), AllOf(HasSubstr(" 45d "), HasSubstr("stale")));
  EXPECT_THAT(Row(table, "n1", "kernels/triad{bytes=1}"), HasSubstr("not fit"));
  const size_t superseded = table.find("bbbbbbbbbbbb");
  ASSERT_NE(superseded, std::string::npos) << table;
  EXPECT_THAT(table.substr(superseded, table.find('\n', superseded) - superseded),
              HasSubstr("other environment"));
  EXPECT_THAT(Row(table, "n2", "kernels/copy{bytes=1}"),
              AllOf(HasSubstr(" 3d "), Not(HasSubstr("other environment"))));
  EXPECT_THAT(table, HasSubstr("5 calibrations, 1 stale; 2 current ones fit"));

  // A policy that keeps calibrations 60 days makes none stale.
  gate::Policy lenient;
  lenient.calibration_max_age = std::chrono::hours(24 * 60);
  EXPECT_THAT(Row(RenderCalibrations(r, lenient), "n1", "kernels/sgemm{m=512}"), Not(HasSubstr("stale")));
}

TEST(CalibrationsRender, SaysHowToMeasureWhenNoneIsStored) {
  EXPECT_THAT(RenderCalibrations(v1::ListCalibrationsResponse{}, gate::Policy{}),
              HasSubstr("perfgate-agent calibrate"));
}

}  // namespace
}  // namespace perfgate::cli
