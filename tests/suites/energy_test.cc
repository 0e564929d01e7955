// Energy as metrics: what a case reports from the engine's counter readings,
// and that an energy regression gates like a time regression, on an H100
// named by its recorded device description (tests/data/devices).
#include "suites/energy.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "common/identity.h"
#include "formats/result_file.h"
#include "gate/gate.h"
#include "gate/policy.h"
#include "suites/state.h"

namespace perfgate::suites {
namespace {

constexpr double kGemmFlops = 2.0 * 8192 * 8192 * 8192;

// A measurement of `times` whose counter gave `watts` on average over them.
Measurement Metered(std::vector<double> times, double watts) {
  Measurement m;
  m.sample_s = std::move(times);
  m.throttled.assign(m.sample_s.size(), false);
  m.reason = StopReason::kNoiseTarget;
  m.energy_window_s = 2.0;
  m.energy_j = watts * m.energy_window_s;
  return m;
}

size_t IndexOf(const CaseResult& r, const std::string& metric) {
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    if (r.metrics[i].name == metric) return i;
  }
  return r.metrics.size();
}

TEST(CaseEnergy, ChargesEachSampleTheAveragePowerForItsOwnTime) {
  State s(BenchmarkId{"kernels", "gemm", {}}, {MetricKind::kTime, MetricKind::kTflops}, EngineOptions{}, 0);
  s.SetFlopsPerIteration(kGemmFlops);
  s.Record(Metered({0.0014, 0.0016}, 650));
  const CaseResult r = s.TakeResult();
  ASSERT_EQ(r.metrics.size(), 5u);
  EXPECT_EQ(r.metrics[2].name, "power");
  EXPECT_EQ(r.metrics[3].name, "energy");
  EXPECT_EQ(r.metrics[4].name, "energy_per_tflop");
  for (size_t i = 2; i < 5; ++i) EXPECT_EQ(r.metrics[i].direction, Direction::kLowerIsBetter);
  ASSERT_EQ(r.samples[1].values.size(), 5u);
  EXPECT_DOUBLE_EQ(r.samples[0].values[2], 650);
  EXPECT_DOUBLE_EQ(r.samples[0].values[3], 650 * 0.0014);
  EXPECT_DOUBLE_EQ(r.samples[1].values[3], 650 * 0.0016);
  EXPECT_DOUBLE_EQ(r.samples[1].values[4], 650 * 0.0016 / (kGemmFlops / 1e12));
}

TEST(CaseEnergy, ReportsJoulesPerTokenWhereAnIterationHasTokens) {
  State s(BenchmarkId{"inference", "decode", {}}, {MetricKind::kTime, MetricKind::kTokensPerSecond},
          EngineOptions{}, 0);
  s.SetTokensPerIteration(64);
  s.Record(Metered({0.004}, 400));
  const CaseResult r = s.TakeResult();
  ASSERT_EQ(IndexOf(r, "energy_per_token"), 4u);
  EXPECT_DOUBLE_EQ(r.samples[0].values[4], 400 * 0.004 / 64);
  EXPECT_EQ(IndexOf(r, "energy_per_tflop"), r.metrics.size());
}

TEST(CaseEnergy, LeavesEnergyOutAndSaysWhyWhereTheDeviceHasNoCounter) {
  State s(BenchmarkId{"kernels", "gemm", {}}, {MetricKind::kTime}, EngineOptions{}, 0);
  Measurement m = Metered({0.001, 0.001}, 300);
  m.energy_j.reset();
  m.energy_unavailable = "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)";
  s.Record(m);
  const CaseResult r = s.TakeResult();
  ASSERT_EQ(r.metrics.size(), 1u);  // no energy metric at all: never a zero
  EXPECT_EQ(r.samples[0].values.size(), 1u);
  EXPECT_EQ(r.reason, "noise_target; energy unavailable: nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)");
}

TEST(CaseEnergy, LeavesEnergyOutWhenOnlySomeMeasurementsReadTheCounter) {
  State s(BenchmarkId{"kernels", "gemm", {}}, {MetricKind::kTime}, EngineOptions{}, 0);
  s.Record(Metered({0.001}, 300));
  Measurement host = Metered({0.001}, 300);
  host.energy_j.reset();  // taken without a device source
  s.Record(host);
  const CaseResult r = s.TakeResult();
  EXPECT_EQ(r.metrics.size(), 1u);
  EXPECT_NE(r.reason.find("energy unavailable: not every measurement"), std::string::npos) << r.reason;
}

TEST(CaseEnergy, AddsNothingToAHostCase) {
  State s(BenchmarkId{"kernels", "sgemm", {}}, {MetricKind::kTime}, EngineOptions{}, 0);
  Measurement m = Metered({0.001}, 0);
  m.energy_j.reset();
  s.Record(m);
  const CaseResult r = s.TakeResult();
  EXPECT_EQ(r.metrics.size(), 1u);
  EXPECT_EQ(r.reason, "noise_target");
}

// A serving case's metrics are values; each run is one device sample, with
// the energy its tokens cost.
TEST(CaseEnergy, ChargesAValueSampleItsOwnTokens) {
  State s(BenchmarkId{"inference", "serve", {}}, {MetricKind::kTtftP50, MetricKind::kGoodput}, EngineOptions{}, 0);
  s.RecordValues({12.0, 300.0}, Metered({2.0}, 500), 1000);
  s.RecordValues({14.0, 290.0}, Metered({2.5}, 400), 1250);
  const CaseResult r = s.TakeResult();
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  const size_t per_token = IndexOf(r, "energy_per_token"), power = IndexOf(r, "power");
  ASSERT_LT(per_token, r.metrics.size());
  ASSERT_LT(power, r.metrics.size());
  EXPECT_DOUBLE_EQ(r.samples[0].values[0], 12.0);  // the values come first, unchanged
  EXPECT_DOUBLE_EQ(r.samples[0].values[power], 500);
  EXPECT_DOUBLE_EQ(r.samples[0].values[per_token], 500 * 2.0 / 1000);
  EXPECT_DOUBLE_EQ(r.samples[1].values[per_token], 400 * 2.5 / 1250);
}

TEST(CaseEnergy, AValueSampleWithoutACounterSaysWhyAndOneOnTheHostAddsNothing) {
  State device(BenchmarkId{"inference", "serve", {}}, {MetricKind::kGoodput}, EngineOptions{}, 0);
  Measurement unread = Metered({1.0}, 0);
  unread.energy_j.reset();
  unread.energy_unavailable = "nvmlDeviceGetTotalEnergyConsumption: Not Supported";
  unread.throttled = {true};
  device.RecordValues({300.0}, unread, 1000);
  const CaseResult r = device.TakeResult();
  EXPECT_EQ(r.metrics.size(), 1u);
  EXPECT_NE(r.reason.find("energy unavailable: nvmlDeviceGetTotalEnergyConsumption"), std::string::npos)
      << r.reason;
  EXPECT_TRUE(r.samples.at(0).throttled);

  State host(BenchmarkId{"inference", "serve", {}}, {MetricKind::kGoodput}, EngineOptions{}, 0);
  unread.energy_unavailable.clear();
  host.RecordValues({300.0}, unread, 1000);
  const CaseResult h = host.TakeResult();
  EXPECT_EQ(h.metrics.size(), 1u);
  EXPECT_EQ(h.reason.find("energy"), std::string::npos) << h.reason;
}

// The SKU key of a recorded device description, as the agent derives it.
std::string SkuOfRecordedDevice(const std::string& file) {
  std::ifstream in(std::filesystem::path(PERFGATE_TEST_DATA_DIR) / "devices" / file);
  const nlohmann::json d = nlohmann::json::parse(in);
  const auto pci = static_cast<uint32_t>(std::stoul(d.at("pci_device_id").get<std::string>(), nullptr, 16));
  return GpuSkuKey(d.at("name").get<std::string>(), d.at("total_memory_bytes").get<uint64_t>(), pci);
}

// One process's bf16 8192^3 GEMM: 20 samples around 1.4 ms with 0.3 % noise,
// the counter giving `watts` over them, written to a result file and read back.
CaseResult GemmProcess(std::mt19937& rng, double watts, const std::string& sku, const std::string& dir, int n) {
  State s(BenchmarkId{"kernels", "gemm", {{"dtype", "bf16"}, {"k", "8192"}, {"m", "8192"}, {"n", "8192"}}},
          {MetricKind::kTime, MetricKind::kTflops}, EngineOptions{}, 0);
  s.SetFlopsPerIteration(kGemmFlops);
  std::normal_distribution<double> time(1.4e-3, 1.4e-3 * 0.003);
  std::normal_distribution<double> power(watts, watts * 0.003);
  std::vector<double> times;
  for (int i = 0; i < 20; ++i) times.push_back(time(rng));
  s.Record(Metered(times, power(rng)));
  RunMeta meta;
  meta.run_id = "run-" + std::to_string(n);
  meta.environment.sku = sku;
  const std::string path = dir + "/process-" + std::to_string(n) + ".json";
  EXPECT_TRUE(WriteResultFile(path, meta, {s.TakeResult()}).ok());
  absl::StatusOr<ResultSet> back = ReadResultFile(path);
  EXPECT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->sku, sku);
  return back->cases.at(0);
}

TEST(CaseEnergy, ATenPercentEnergyRegressionOnAnH100IsCaughtLikeATimeRegression) {
  const std::string sku = SkuOfRecordedDevice("h100-sxm5-80gb.json");
  ASSERT_EQ(sku, "h100-sxm5-80gb");
  const std::string dir = ::testing::TempDir();
  std::mt19937 rng(7);
  // Six processes a side, interleaved as an A/B job's rounds; the candidate
  // draws 10 % more power for the same time.
  std::vector<CaseResult> base, cand;
  for (int round = 0; round < 6; ++round) {
    base.push_back(GemmProcess(rng, 650, sku, dir, 2 * round));
    cand.push_back(GemmProcess(rng, 715, sku, dir, 2 * round + 1));
  }
  const CaseResult& one = cand.front();
  ASSERT_NE(IndexOf(one, "energy_per_tflop"), one.metrics.size()) << "energy metrics lost in the result file";
  EXPECT_EQ(one.metrics[IndexOf(one, "energy")].direction, Direction::kLowerIsBetter);

  const std::string key = one.benchmark.Key();
  const gate::CaseBlocks blocks{std::vector<unsigned>(6, 20), true};
  gate::GateInput input;
  input.mode = gate::Mode::kAb;
  input.sku = sku;
  input.candidate = gate::RunDataFromCases("candidate", cand, {{key, blocks}});
  input.baselines.push_back(gate::RunDataFromCases("baseline", base, {{key, blocks}}));
  absl::StatusOr<gate::PolicyFile> policy =
      gate::ReadPolicyFile(std::string(PERFGATE_SOURCE_DIR) + "/deploy/policy/default.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  const gate::GateResult result = gate::EvaluateGate(input, policy->policy);

  std::map<std::string, gate::Verdict> verdicts;
  for (const gate::MetricVerdict& v : result.verdicts) verdicts[v.metric] = v.verdict;
  EXPECT_EQ(verdicts.at("time"), gate::Verdict::kPass);
  EXPECT_EQ(verdicts.at("tflops"), gate::Verdict::kPass);
  EXPECT_EQ(verdicts.at("power"), gate::Verdict::kRegression);
  EXPECT_EQ(verdicts.at("energy"), gate::Verdict::kRegression);
  EXPECT_EQ(verdicts.at("energy_per_tflop"), gate::Verdict::kRegression);
  EXPECT_EQ(result.outcome, gate::Outcome::kRegression);
}

}  // namespace
}  // namespace perfgate::suites
