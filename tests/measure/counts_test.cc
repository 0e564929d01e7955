#include "measure/counts.h"

#include <gtest/gtest.h>

#include <string>

namespace perfgate {
namespace {

const std::string kRecorded = std::string(PERFGATE_TEST_DATA_DIR) + "/callgrind/work_bench_cache_sim.out";

double ValueOf(const std::vector<std::pair<MetricSpec, double>>& counts, const std::string& metric) {
  for (const auto& [spec, value] : counts) {
    if (spec.name == metric) return value;
  }
  return -1;
}

TEST(CallgrindOutput, ReadsTheTotalsOfARecordedFileWithCacheAndBranchSimulation) {
  auto totals = ReadCallgrindOutput(kRecorded);
  ASSERT_TRUE(totals.ok()) << totals.status();
  ASSERT_EQ(totals->events.size(), 13u);
  EXPECT_EQ(totals->Event("Ir"), 2404360);
  EXPECT_EQ(totals->Event("D1mr"), 69);
  EXPECT_EQ(totals->Event("Bim"), 21);
  EXPECT_EQ(totals->Event("Cycles"), -1);
}

TEST(CallgrindOutput, GivesCountsPerIterationWithSimulatedMissesNamedApart) {
  auto totals = ReadCallgrindOutput(kRecorded);
  ASSERT_TRUE(totals.ok()) << totals.status();
  auto counts = CountsPerIteration(*totals, 2);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 4u);
  EXPECT_EQ(counts->front().first.name, "instructions");
  EXPECT_EQ(counts->front().first.unit, "instr/iter");
  EXPECT_EQ(counts->front().first.direction, Direction::kLowerIsBetter);
  EXPECT_DOUBLE_EQ(ValueOf(*counts, "instructions"), 1202180);
  EXPECT_DOUBLE_EQ(ValueOf(*counts, "sim_l1_misses"), (70 + 69 + 0) / 2.0);
  EXPECT_DOUBLE_EQ(ValueOf(*counts, "sim_ll_misses"), (39 + 3 + 0) / 2.0);
  EXPECT_DOUBLE_EQ(ValueOf(*counts, "sim_branch_mispredicts"), (88 + 21) / 2.0);
}

TEST(CallgrindOutput, CountsInstructionsAloneWithoutSimulation) {
  auto totals = ParseCallgrindOutput("events: Ir\nsummary: 1000\n", "plain.out");
  ASSERT_TRUE(totals.ok()) << totals.status();
  auto counts = CountsPerIteration(*totals, 4);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_DOUBLE_EQ(counts->front().second, 250);
}

TEST(CallgrindOutput, FillsTrailingTotalsCallgrindLeftOut) {
  auto totals = ParseCallgrindOutput("events: Ir Dr Dw\ntotals: 7 2\n", "short.out");
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->Event("Dw"), 0);
}

TEST(CallgrindOutput, RefusesAFileWithoutEventsNamingIt) {
  auto totals = ParseCallgrindOutput("summary: 12\n", "cg.out");
  ASSERT_FALSE(totals.ok());
  EXPECT_EQ(totals.status().code(), absl::StatusCode::kInvalidArgument);

  EXPECT_NE(totals.status().message().find("cg.out: no 'events:' line"), std::string::npos) << totals.status();
}

TEST(CallgrindOutput, RefusesAFileCutShortBeforeItsTotals) {
  auto totals = ParseCallgrindOutput("events: Ir\nfn=(1) main\n0 5\n", "cut.out");
  ASSERT_FALSE(totals.ok());
  EXPECT_NE(totals.status().message().find("no 'totals:' or 'summary:' line"), std::string::npos) << totals.status();
}

TEST(CallgrindOutput, RefusesATotalThatIsNotACountWithItsLine) {
  auto totals = ParseCallgrindOutput("events: Ir\ntotals: 12x\n", "bad.out");
  ASSERT_FALSE(totals.ok());
  EXPECT_NE(totals.status().message().find("bad.out:2: '12x' is not a count"), std::string::npos) << totals.status();
}

TEST(CallgrindOutput, RefusesMoreTotalsThanEvents) {
  EXPECT_FALSE(ParseCallgrindOutput("events: Ir\ntotals: 1 2\n", "x.out").ok());
}

TEST(CallgrindOutput, SaysWhichFileCannotBeRead) {
  auto totals = ReadCallgrindOutput("/nonexistent/callgrind.out.1");
  ASSERT_FALSE(totals.ok());
  EXPECT_EQ(totals.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(totals.status().message().find("/nonexistent/callgrind.out.1"), std::string::npos);
}

TEST(CallgrindOutput, RefusesCountsOverNoIterations) {
  auto totals = ParseCallgrindOutput("events: Ir\ntotals: 12\n", "x.out");
  ASSERT_TRUE(totals.ok());
  EXPECT_FALSE(CountsPerIteration(*totals, 0).ok());
  EXPECT_FALSE(CountsPerIteration(*ParseCallgrindOutput("events: Dr\ntotals: 12\n", "y.out"), 1).ok());
}

TEST(CountingRegion, DoesNothingOutsideValgrind) {
  StartCounting();
  StopCounting();
  EXPECT_TRUE(IsCountMetric("instructions"));
  EXPECT_FALSE(IsCountMetric("real_time"));
}

}  // namespace
}  // namespace perfgate
