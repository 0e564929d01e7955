// The parts of the NVML layer that need no driver: PCI bus id spellings (how
// a CUDA device is found in NVML) and the throttle reading made from NVML's
// answers. The struct layouts are checked by static_assert in measure/nvml.cc.
#include "measure/nvml.h"

#include <gtest/gtest.h>

namespace perfgate {
namespace {

TEST(PciBusId, CudaSpellingBecomesLowerCaseWithAFourDigitDomain) {
  EXPECT_EQ(CanonicalPciBusId("0000:1B:00.0").value(), "0000:1b:00.0");
}

TEST(PciBusId, NvmlSpellingBecomesTheSameCanonicalAddress) {
  EXPECT_EQ(CanonicalPciBusId("00000000:1B:00.0").value(), CanonicalPciBusId("0000:1b:00.0").value());
}

TEST(PciBusId, CudaSpellingBecomesWhatNvmlPrintsInPciInfo) {
  EXPECT_EQ(NvmlPciBusId("0000:1b:00.0").value(), "00000000:1B:00.0");
  EXPECT_EQ(NvmlPciBusId("0000:0E:00.0").value(), "00000000:0E:00.0");
}

TEST(PciBusId, RoundTripsBetweenCudaAndNvmlSpellings) {
  for (const std::string id : {"0000:1b:00.0", "0000:c1:1f.7", "0001:01:00.1"}) {
    EXPECT_EQ(CanonicalPciBusId(NvmlPciBusId(id).value()).value(), id);
  }
}

TEST(PciBusId, KeepsDomainsWiderThanFourDigits) {
  // VMD and some virtual machines put GPUs in domains above 0xffff.
  EXPECT_EQ(CanonicalPciBusId("00010000:3A:00.0").value(), "10000:3a:00.0");
  EXPECT_EQ(NvmlPciBusId("10000:3a:00.0").value(), "00010000:3A:00.0");
}

TEST(PciBusId, ReadsAnAddressWithoutDomainAsDomainZero) {
  EXPECT_EQ(CanonicalPciBusId("1b:00.0").value(), "0000:1b:00.0");
}

TEST(PciBusId, RejectsTextThatIsNoAddress) {
  for (const std::string bad : {"", "GPU-1234", "0000:1b:00", "0000:1bb:00.0", "0000:1b:20.0",
                                "0000:1b:00.8", "000000000:1b:00.0", "0000:1g:00.0"}) {
    EXPECT_EQ(CanonicalPciBusId(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ThrottleReadingOf, IsInvalidWithoutAClock) {
  EXPECT_FALSE(ThrottleReadingOf(std::nullopt, 0x4).valid);
}

TEST(ThrottleReadingOf, KeepsClockAndReasonsOfABusyDevice) {
  const ThrottleReading r = ThrottleReadingOf(1410, 0x4);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.sm_clock_mhz, 1410.0);
  EXPECT_EQ(r.reasons, 0x4u);
  EXPECT_TRUE(IsThrottled(r, r, 1980));
}

TEST(ThrottleReadingOf, AnIdleDevicesLowClockDoesNotMarkASampleThrottled) {
  // 345 MHz is far below 0.75 x 1980, but the GPU-idle reason says why.
  const ThrottleReading idle = ThrottleReadingOf(345, 0x1);
  const ThrottleReading busy = ThrottleReadingOf(1980, 0);
  EXPECT_TRUE(idle.valid);
  EXPECT_FALSE(IsThrottled(idle, busy, 1980));
  // The same clock without the idle reason is throttling.
  EXPECT_TRUE(IsThrottled(ThrottleReadingOf(345, 0), busy, 1980));
}

TEST(ThrottleReadingOf, AnIdleDeviceStillReportsAThrottleReason) {
  EXPECT_TRUE(IsThrottled(ThrottleReadingOf(345, 0x1 | 0x40), ThrottleReadingOf(1980, 0), 1980));
}

TEST(ThrottleReadingOf, AMissingReasonReadLeavesOnlyTheClockRule) {
  const ThrottleReading r = ThrottleReadingOf(1980, std::nullopt);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.reasons, 0u);
}

}  // namespace
}  // namespace perfgate
