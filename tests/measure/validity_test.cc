#include "measure/validity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfgate {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A healthy H100 SXM5 at full link, no errors, MIG off, alone.
DeviceHealth Healthy(int index = 0, std::string bus = "0000:1b:00.0") {
  DeviceHealth d;
  d.index = index;
  d.pci_bus_id = std::move(bus);
  d.ecc_volatile_corrected = 0;
  d.ecc_volatile_uncorrected = 0;
  d.ecc_aggregate_corrected = 3;
  d.ecc_aggregate_uncorrected = 0;
  d.remapped_rows_corrected = 1;
  d.remapped_rows_uncorrected = 0;
  d.pcie_gen = 5;
  d.pcie_width = 16;
  d.pcie_gen_max = 5;
  d.pcie_width_max = 16;
  d.mig_enabled = false;
  d.other_process_pids = std::vector<uint32_t>{};
  return d;
}

TEST(Validity, RunIsValidWhenNothingMoved) {
  const std::vector<DeviceHealth> start = {Healthy(0), Healthy(1, "0000:29:00.0")};
  EXPECT_THAT(InvalidForGatingReasons(start, start, {{"kernels/copy", 20, 10}}), IsEmpty());
}

TEST(Validity, RunIsValidWhenNvmlToldNothing) {
  DeviceHealth blank;
  blank.pci_bus_id = "0000:1b:00.0";
  EXPECT_THAT(InvalidForGatingReasons({blank}, {blank}, {}), IsEmpty());
}

TEST(Validity, CaseThrottledOnMostSamplesInvalidatesTheRun) {
  const auto reasons = InvalidForGatingReasons(
      {}, {}, {{"kernels/copy", 20, 10}, {"kernels/sgemm{n=4096}", 20, 11}});
  EXPECT_THAT(reasons, ElementsAre("case kernels/sgemm{n=4096}: 11 of 20 samples throttled (more "
                                   "than half)"));
}

TEST(Validity, ShortCaseThrottledThroughoutInvalidatesARunMostlyUnthrottled) {
  const auto reasons =
      InvalidForGatingReasons({}, {}, {{"kernels/long", 1000, 0}, {"kernels/short", 10, 10}});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_THAT(reasons[0], HasSubstr("kernels/short: 10 of 10"));
}

TEST(Validity, EccCounterThatMovedInvalidatesTheRun) {
  DeviceHealth end = Healthy();
  end.ecc_volatile_uncorrected = 2;
  EXPECT_THAT(InvalidForGatingReasons({Healthy()}, {end}, {}),
              ElementsAre("GPU 0 (pci 0000:1b:00.0): ECC uncorrected errors (volatile) went from 0 "
                          "to 2 during the run"));
}

TEST(Validity, AggregateEccCounterThatMovedInvalidatesTheRun) {
  DeviceHealth end = Healthy();
  end.ecc_aggregate_corrected = 4;
  EXPECT_THAT(InvalidForGatingReasons({Healthy()}, {end}, {}),
              ElementsAre(HasSubstr("ECC corrected errors (aggregate) went from 3 to 4")));
}

TEST(Validity, RemappedRowThatAppearedInvalidatesTheRun) {
  DeviceHealth end = Healthy();
  end.remapped_rows_uncorrected = 1;
  EXPECT_THAT(InvalidForGatingReasons({Healthy()}, {end}, {}),
              ElementsAre("GPU 0 (pci 0000:1b:00.0): rows remapped for uncorrectable errors went "
                          "from 0 to 1 during the run"));
}

TEST(Validity, PcieGenerationBelowMaximumAtBothReadingsInvalidatesTheRun) {
  DeviceHealth slow = Healthy();
  slow.pcie_gen = 4;
  EXPECT_THAT(InvalidForGatingReasons({slow}, {slow}, {}),
              ElementsAre("GPU 0 (pci 0000:1b:00.0): PCIe link gen 4 x16 below its maximum gen 5 "
                          "x16"));
}

TEST(Validity, PcieGenerationLoweredOnlyWhileIdleIsNoFault) {
  DeviceHealth idle = Healthy();
  idle.pcie_gen = 1;
  EXPECT_THAT(InvalidForGatingReasons({idle}, {Healthy()}, {}), IsEmpty());
}

TEST(Validity, PcieWidthBelowMaximumAtEitherReadingInvalidatesTheRun) {
  DeviceHealth narrow = Healthy();
  narrow.pcie_width = 8;
  EXPECT_THAT(InvalidForGatingReasons({narrow}, {Healthy()}, {}),
              ElementsAre("GPU 0 (pci 0000:1b:00.0): PCIe link gen 5 x8 below its maximum gen 5 "
                          "x16"));
  EXPECT_THAT(InvalidForGatingReasons({Healthy()}, {narrow}, {}),
              ElementsAre(HasSubstr("gen 5 x8 below")));
}

TEST(Validity, MigModeChangeInvalidatesTheRun) {
  DeviceHealth end = Healthy();
  end.mig_enabled = true;
  EXPECT_THAT(InvalidForGatingReasons({Healthy()}, {end}, {}),
              ElementsAre("GPU 0 (pci 0000:1b:00.0): MIG mode changed from disabled to enabled "
                          "during the run"));
}

TEST(Validity, OtherComputeProcessesInvalidateTheRunNamingEachOnce) {
  DeviceHealth start = Healthy(), end = Healthy();
  start.other_process_pids = std::vector<uint32_t>{4242};
  end.other_process_pids = std::vector<uint32_t>{4242, 777};
  end.self_listed = true;  // the agent's own pid was recognised and left out
  EXPECT_THAT(InvalidForGatingReasons({start}, {end}, {}),
              ElementsAre("GPU 0 (pci 0000:1b:00.0): 2 other compute processes shared the GPU "
                          "(pid 777, 4242)"));
}

TEST(Validity, InAContainerTheAgentsOwnContextIsNotAnotherProcess) {
  // NVML lists host pids; the agent (pid 1 in its namespace) is never among
  // them, and its context appears at the end under an unknown pid.
  DeviceHealth start = Healthy(), end = Healthy();
  start.other_process_pids = std::vector<uint32_t>{};
  end.other_process_pids = std::vector<uint32_t>{91234};
  EXPECT_THAT(InvalidForGatingReasons({start}, {end}, {}), ::testing::IsEmpty());
  // A second newcomer is someone else, and so is a process there from the start.
  end.other_process_pids = std::vector<uint32_t>{91234, 555};
  EXPECT_THAT(InvalidForGatingReasons({start}, {end}, {}),
              ElementsAre(::testing::HasSubstr("1 other compute process shared the GPU")));
  start.other_process_pids = std::vector<uint32_t>{555};
  EXPECT_THAT(InvalidForGatingReasons({start}, {end}, {}),
              ElementsAre(::testing::HasSubstr("(pid 555)")));
}

TEST(Validity, WhereTheAgentIsListedEveryOtherPidCounts) {
  DeviceHealth start = Healthy(), end = Healthy();
  end.self_listed = true;
  end.other_process_pids = std::vector<uint32_t>{91234};
  EXPECT_THAT(InvalidForGatingReasons({start}, {end}, {}),
              ElementsAre(::testing::HasSubstr("(pid 91234)")));
}

TEST(Validity, DeviceGoneAtTheEndInvalidatesTheRun) {
  EXPECT_THAT(InvalidForGatingReasons({Healthy(0), Healthy(1, "0000:29:00.0")}, {Healthy(0)}, {}),
              ElementsAre("GPU 1 (pci 0000:29:00.0): present at the start of the run, gone at its "
                          "end"));
}

TEST(Validity, DevicesAreMatchedByBusIdNotPosition) {
  DeviceHealth second = Healthy(1, "0000:29:00.0");
  second.ecc_volatile_corrected = 5;
  DeviceHealth second_end = second;
  EXPECT_THAT(InvalidForGatingReasons({Healthy(0), second}, {second_end, Healthy(0)}, {}), IsEmpty());
}

}  // namespace
}  // namespace perfgate
