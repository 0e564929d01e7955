// nccl-tests output, printed here with the format strings of nccl-tests'
// src/util.cu (2.17) and of the 2018 src/common.cu, from rows the tests
// choose; what the reader finds is checked against those rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/identity.h"
#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;

const std::vector<testing::NcclRow> kRows = {
    {8, 2, "float", "sum", -1, {10.25, 0.01, 0.01, "0"}, {9.5, 0.01, 0.01, "0"}},
    {1048576, 262144, "float", "sum", -1, {40.5, 25.89, 25.89, "0"}, {39.75, 26.38, 26.38, "0"}},
    {134217728, 33554432, "float", "sum", -1, {1520.25, 88.29, 88.29, "0"}, {1519.5, 88.33, 88.33, "0"}},
};

std::string Key(const testing::NcclRow& r, const char* place) {
  return "nccl-tests/all_reduce{bytes=" + std::to_string(r.bytes) + ",place=" + place + ",redop=" + r.redop +
         ",type=" + r.type + "}";
}

TEST(NcclTestsOutput, GivesOneCasePerRowAndSideWithTimeAndBandwidths) {
  auto set = ParseResultText(testing::NcclOutput(kRows), "ar.txt");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "nccl-tests");
  ASSERT_EQ(set->cases.size(), 2 * kRows.size());
  for (const testing::NcclRow& r : kRows) {
    for (const auto& [place, side] : {std::pair("out-of-place", r.out), std::pair("in-place", r.in)}) {
      const CaseResult* c = testing::FindCase(*set, Key(r, place));
      ASSERT_NE(c, nullptr) << Key(r, place);
      EXPECT_EQ(c->status, CaseStatus::kOk);
      ASSERT_EQ(c->samples.size(), 1u);  // one file, one process
      EXPECT_EQ(c->samples[0].values[testing::MetricIndex(*c, "time")], side.time_us);
      EXPECT_EQ(c->samples[0].values[testing::MetricIndex(*c, "algbw")], side.algbw);
      EXPECT_EQ(c->samples[0].values[testing::MetricIndex(*c, "busbw")], side.busbw);
      EXPECT_EQ(c->metrics[testing::MetricIndex(*c, "time")].unit, "us");
      EXPECT_EQ(c->metrics[testing::MetricIndex(*c, "time")].direction, Direction::kLowerIsBetter);
      EXPECT_EQ(c->metrics[testing::MetricIndex(*c, "busbw")].direction, Direction::kHigherIsBetter);
    }
  }
  EXPECT_EQ(set->sku, GpuSkuKey(testing::kNcclDevice, 80ull << 30));
  EXPECT_EQ(set->context["gpu_name"], testing::kNcclDevice);
  EXPECT_EQ(set->context["host_name"], "node-1");
  EXPECT_EQ(set->context["avg_bus_bandwidth"], "12.5");
  EXPECT_TRUE(set->notes.empty());
}

TEST(NcclTestsOutput, AWrongResultFailsItsCaseAndUncheckedResultsAreNoted) {
  std::vector<testing::NcclRow> rows = kRows;
  rows[1].in.wrong = "7";
  rows[2].out.wrong = "N/A";
  auto set = ParseResultText(testing::NcclOutput(rows), "ar.txt");
  ASSERT_TRUE(set.ok()) << set.status();
  const CaseResult* wrong = testing::FindCase(*set, Key(rows[1], "in-place"));
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->status, CaseStatus::kFailed);
  EXPECT_THAT(wrong->reason, HasSubstr("7 wrong elements"));
  EXPECT_EQ(testing::FindCase(*set, Key(rows[1], "out-of-place"))->status, CaseStatus::kOk);
  EXPECT_EQ(testing::FindCase(*set, Key(rows[2], "out-of-place"))->status, CaseStatus::kOk);
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("1 results were not checked"));
}

TEST(NcclTestsOutput, WithoutTheCollectiveLineNamesTheCasesCollectiveAndSaysSo) {
  auto set = ParseResultText(testing::NcclOutput(kRows, false), "old.txt");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->cases[0].benchmark.name, "collective");
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("names no collective"));
}

// The 2018 layout: "bytes N type root", times in ms, a "res" column, and a
// one-sided table (broadcast).
TEST(NcclTestsOutput, OfTheOldLayoutConvertsMillisecondsAndReadsTheRoot) {
  std::string out = "# NCCL Tests compiled with NCCL 2.2\n# Using devices\n";
  out += testing::Printf("#   Rank %2d on %10s device %2d [0x%02x] %s\n", 0, "node-2", 0, 0x19, "NVIDIA H200");
  out += testing::Printf("# %10s  %12s  %6s  %6s        out-of-place\n", "", "", "", "");
  out += testing::Printf("# %10s  %12s  %6s  %6s  %7s  %5s  %5s  %7s\n", "bytes", "N", "type", "root", "time", "algbw",
                "busbw", "res");
  out += testing::Printf("%12li  %12li  %6s  %6i", 4096L, 1024L, "float", 0);
  out += testing::Printf("  %7.3f  %5.2f  %5.2f  %7.0le\n", 0.125, 0.03, 0.03, 0.0);
  auto set = ParseResultText(out, "bcast.txt");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->cases.size(), 1u);
  EXPECT_EQ(set->cases[0].benchmark.Key(), "nccl-tests/collective{bytes=4096,place=out-of-place,root=0,type=float}");
  EXPECT_DOUBLE_EQ(set->cases[0].samples[0].values[0], 125.0);  // 0.125 ms
  EXPECT_EQ(set->sku, "h200-141gb");
}

TEST(NcclTestsOutput, ATruncatedRowIsRefusedNamingItsLine) {
  std::string text = testing::NcclOutput(kRows);
  const size_t at = text.find(testing::Printf("%12li  %12li", 8L, 2L));
  ASSERT_NE(at, std::string::npos);
  const size_t end = text.find('\n', at);
  text.erase(end - 16, 16);  // the in-place busbw and #wrong
  auto set = ParseResultText(text, "cut.txt");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("cut.txt: line 12: 11 fields where the column header names 5 + 2 x 4"));
}

TEST(NcclTestsOutput, ATextTimeIsRefusedNamingItsLine) {
  std::string text = testing::NcclOutput(kRows);
  const size_t at = text.find("1520.25");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "   fast");
  auto set = ParseResultText(text, "bad.txt");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("bad.txt: line 14: time 'fast' is not a non-negative number"));
}

}  // namespace
}  // namespace perfgate
