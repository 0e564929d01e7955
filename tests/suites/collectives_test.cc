#include "suites/collectives/collectives.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "suites/collectives/lockstep.h"
#include "suites/collectives/nccl_adapter.h"
#include "suites/collectives/ops.h"
#include "suites/collectives/world.h"
#include "suites/collectives/tcp_store.h"
#include "tests/support/processes.h"

namespace perfgate::suites::collectives {
namespace {

using perfgate::testing::TempDir;

// --- Sizes and bus factors, against numbers worked out by hand. -----------

// --- Which GPU a rank drives. ----------------------------------------------

TEST(RankDevice, AnExplicitDeviceWins) {
  EXPECT_EQ(RankDevice(3, "1", 5, 8), 3);
}

TEST(RankDevice, SlurmsLocalIdPicksTheDeviceAmongAllVisible) {
  EXPECT_EQ(RankDevice(-1, "5", 13, 8), 5);
}

TEST(RankDevice, ATaskBoundToOneGpuUsesTheOnlyDeviceItSees) {
  // srun --gpus-per-task=1: task 5 sees one device, its own, as device 0.
  EXPECT_EQ(RankDevice(-1, "5", 13, 1), 0);
  EXPECT_EQ(RankDevice(-1, "3", 3, 2), 1);
}

TEST(RankDevice, WithoutSlurmTheRankWrapsOverTheVisibleDevices) {
  EXPECT_EQ(RankDevice(-1, nullptr, 13, 8), 5);
  EXPECT_EQ(RankDevice(-1, "not a number", 2, 8), 2);
}

TEST(CollectiveArithmetic, BusFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 8), 1.75);       // 2 * 7 / 8
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllReduce, 2), 1.0);        // 2 * 1 / 2
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllGather, 4), 0.75);       // 3 / 4
  EXPECT_DOUBLE_EQ(BusFactor(Op::kReduceScatter, 8), 0.875);  // 7 / 8
  EXPECT_DOUBLE_EQ(BusFactor(Op::kAllToAll, 2), 0.5);         // 1 / 2
  EXPECT_DOUBLE_EQ(BusFactor(Op::kBroadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(BusFactor(Op::kSendRecv, 3), 1.0);
}

TEST(CollectiveArithmetic, BandwidthIsDecimalGigabytesPerSecond) {
  // 1e9 B in 0.5 s = 2 GB/s.
  EXPECT_DOUBLE_EQ(AlgorithmBandwidth(1e9, 0.5), 2.0);
  // 1 GiB all_reduce over 4 ranks in 10 ms: algbw 107.3741824, x 1.5.
  EXPECT_NEAR(BusBandwidth(Op::kAllReduce, 4, 1073741824.0, 0.01), 161.0612736, 1e-9);
}

TEST(CollectiveArithmetic, WholeBufferOperationsKeepTheRequestedSize) {
  const Layout l = LayoutOf(Op::kAllReduce, 1000, 8, DType::kFloat32);
  EXPECT_EQ(l.send_count, 250u);
  EXPECT_EQ(l.recv_count, 250u);
  EXPECT_DOUBLE_EQ(l.algorithm_bytes, 1000);
  EXPECT_DOUBLE_EQ(LayoutOf(Op::kSendRecv, 64, 2, DType::kInt32).algorithm_bytes, 64);
}

TEST(CollectiveArithmetic, SplitOperationsRoundEachBlockDownToSixteenBytes) {
  // 1024 B = 256 floats; 256 / 3 = 85, down to a multiple of 4 = 84 per rank;
  // S = 84 * 3 * 4 = 1008 B.
  const Layout g = LayoutOf(Op::kAllGather, 1024, 3, DType::kFloat32);
  EXPECT_EQ(g.chunk, 84u);
  EXPECT_EQ(g.send_count, 84u);
  EXPECT_EQ(g.recv_count, 252u);
  EXPECT_DOUBLE_EQ(g.algorithm_bytes, 1008);
  // reduce_scatter 4096 B over 4: 1024 floats in, 256 out, S = 4096.
  const Layout r = LayoutOf(Op::kReduceScatter, 4096, 4, DType::kFloat32);
  EXPECT_EQ(r.send_count, 1024u);
  EXPECT_EQ(r.recv_count, 256u);
  EXPECT_DOUBLE_EQ(r.algorithm_bytes, 4096);
  // 8 B over 2 ranks: one float each, below a 16-byte block: nothing moves.
  EXPECT_DOUBLE_EQ(LayoutOf(Op::kAllToAll, 8, 2, DType::kFloat32).algorithm_bytes, 0);
}

TEST(CollectiveArithmetic, GeometricSizesCoverTheRangeInclusive) {
  EXPECT_EQ(GeometricSizes(8, 64, 2), (std::vector<std::string>{"8", "16", "32", "64"}));
  EXPECT_EQ(GeometricSizes(8, 100, 4), (std::vector<std::string>{"8", "32"}));
  EXPECT_EQ(GeometricSizes(kDefaultMinBytes, kDefaultMaxBytes, 2).size(), 20u);  // 2^3 .. 2^22
  EXPECT_TRUE(GeometricSizes(64, 8, 2).empty());
  EXPECT_TRUE(GeometricSizes(8, 64, 1).empty());
}

// --- The exact input pattern and what each operation must produce. --------

TEST(CollectiveExpectations, InputsAreSmallRankShiftedIntegers) {
  EXPECT_EQ(InputValue(0, 0), 1);
  EXPECT_EQ(InputValue(1, 0), 32);     // shifted by 31 per rank
  EXPECT_EQ(InputValue(0, 4092), 4093);
  EXPECT_EQ(InputValue(0, 4093), 1);   // period 4093
}

TEST(CollectiveExpectations, EachOperationExpectsItsOwnSources) {
  Layout l;
  l.chunk = 4;
  // all_reduce over 3 ranks at index 0: 1 + 32 + 63.
  EXPECT_EQ(ExpectedValue(Op::kAllReduce, 3, 2, 0, l), 96);
  // all_gather: index 5 is block 1, element 1 of rank 1's input: 1 + 31 + 1.
  EXPECT_EQ(ExpectedValue(Op::kAllGather, 2, 0, 5, l), 33);
  // reduce_scatter: rank 1's element 2 sums index 6 of both ranks: 7 + 38.
  EXPECT_EQ(ExpectedValue(Op::kReduceScatter, 2, 1, 2, l), 45);
  // alltoall: rank 1's index 1 is block 0 (from rank 0), element 4 + 1 of it.
  EXPECT_EQ(ExpectedValue(Op::kAllToAll, 2, 1, 1, l), 6);
  // sendrecv: rank 0 receives from rank 2: 10 + 62 + 1.
  EXPECT_EQ(ExpectedValue(Op::kSendRecv, 3, 0, 10, l), 73);
  // broadcast: rank 0's input everywhere.
  EXPECT_EQ(ExpectedValue(Op::kBroadcast, 4, 3, 7, l), 8);
}

TEST(CollectiveExpectations, SumsOverManyRanksStayExactInFloat) {
  Layout l;
  const int32_t v = ExpectedValue(Op::kAllReduce, 4096, 0, 4092, l);
  EXPECT_LT(v, 1 << 24);  // every partial sum is an exactly representable float
  EXPECT_EQ(static_cast<int32_t>(static_cast<float>(v)), v);
}

TEST(CollectiveRendezvous, ParsesFileAndTcpAndRejectsTheRest) {
  auto f = ParseRendezvous("file:/shared/rdzv");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->kind, RendezvousSpec::Kind::kFile);
  EXPECT_EQ(f->path, "/shared/rdzv");
  auto t = ParseRendezvous("tcp:node-0:29500");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->kind, RendezvousSpec::Kind::kTcp);
  EXPECT_EQ(t->host, "node-0");
  EXPECT_EQ(t->port, 29500);
  EXPECT_FALSE(ParseRendezvous("tcp:node-0").ok());
  EXPECT_FALSE(ParseRendezvous("nfs:/x").ok());
  EXPECT_FALSE(ValidateWorldOptions({.rank = 2, .size = 2, .rendezvous = "file:/x"}).ok());
  EXPECT_FALSE(ValidateWorldOptions({.rank = 0, .size = 2}).ok());
}

// --- Gloo ranks in threads. ------------------------------------------------

EngineOptions Quick() {
  EngineOptions o;
  o.warmup_runs = 1;
  o.min_samples = 5;
  o.min_time_s = 0;
  o.max_noise = 10;  // stop as soon as the sample minimum is met
  o.timeout_s = 5;
  return o;
}

// Runs `op` at each of `sizes` (and both in-place forms where they exist) as
// `n` ranks in threads, one World each; returns results[rank][case].
std::vector<std::vector<CaseResult>> RunRanks(int n, const std::string& rendezvous, Op op,
                                              const std::vector<std::string>& sizes,
                                              int corrupt_rank = -1,
                                              const std::string& dtype = "float32") {
  std::vector<std::vector<CaseResult>> results(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      World world({.rank = r, .size = n, .rendezvous = rendezvous, .transport_host = "127.0.0.1",
                   .corrupt_rank = corrupt_rank});
      for (const std::string& bytes : sizes) {
        for (int in_place = 0; in_place <= (HasInPlace(op) ? 1 : 0); ++in_place) {
          BenchmarkId id{"collectives", OpName(op),
                         {{"backend", "gloo"}, {"bytes", bytes}, {"dtype", dtype},
                          {"inplace", std::to_string(in_place)}}};
          State state(id, {MetricKind::kTime, MetricKind::kAlgBandwidth, MetricKind::kBusBandwidth},
                      Quick(), 0);
          RunCase(state, world, op);
          results[r].push_back(state.TakeResult());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

void ExpectEveryCasePasses(int n, Op op) {
  auto dir = TempDir::Create("perfgate-coll-");
  ASSERT_TRUE(dir.ok());
  const std::vector<std::string> sizes = {"8", "1000", "65536"};
  auto results = RunRanks(n, "file:" + dir->path(), op, sizes);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(results[r].size(), results[0].size());
    for (size_t c = 0; c < results[r].size(); ++c) {
      const CaseResult& res = results[r][c];
      const size_t bytes = std::stoul(res.benchmark.params.at("bytes"));
      SCOPED_TRACE(res.benchmark.Key() + " rank " + std::to_string(r));
      if (LayoutOf(op, bytes, n, DType::kFloat32).algorithm_bytes == 0) {
        EXPECT_EQ(res.status, CaseStatus::kSkipped) << res.reason;
        continue;
      }
      ASSERT_EQ(res.status, CaseStatus::kOk) << res.reason;
      // Every rank stops on rank 0's word, after the same samples.
      EXPECT_EQ(res.samples.size(), results[0][c].samples.size());
      EXPECT_GE(res.samples.size(), 5u);
      const double s = LayoutOf(op, bytes, n, DType::kFloat32).algorithm_bytes;
      for (const Sample& sample : res.samples) {
        const double seconds = sample.values[0] / 1e3;
        EXPECT_NEAR(sample.values[1], s / seconds / 1e9, 1e-9 * sample.values[1]);
        EXPECT_NEAR(sample.values[2], sample.values[1] * BusFactor(op, n), 1e-9 * sample.values[1]);
      }
    }
  }
}

class GlooOps : public ::testing::TestWithParam<std::tuple<Op, int>> {};

TEST_P(GlooOps, EveryOperationPassesItsCheckInAndOutOfPlace) {
  ExpectEveryCasePasses(std::get<1>(GetParam()), std::get<0>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(
    TwoAndThreeRanks, GlooOps,
    ::testing::Combine(::testing::ValuesIn(kAllOps), ::testing::Values(2, 3)),
    [](const ::testing::TestParamInfo<std::tuple<Op, int>>& info) {
      return std::string(OpName(std::get<0>(info.param))) + "_" +
             std::to_string(std::get<1>(info.param)) + "_ranks";
    });

TEST(GlooCollectives, Int32ResultsAreCheckedToo) {
  auto dir = TempDir::Create("perfgate-coll-");
  ASSERT_TRUE(dir.ok());
  auto results = RunRanks(2, "file:" + dir->path(), Op::kReduceScatter, {"4096"}, -1, "int32");
  for (const auto& rank : results) {
    for (const CaseResult& r : rank) EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
  }
}

TEST(GlooCollectives, AWrongElementFailsTheCaseNamingOpSizeRankAndIndex) {
  auto dir = TempDir::Create("perfgate-coll-");
  ASSERT_TRUE(dir.ok());
  auto results = RunRanks(2, "file:" + dir->path(), Op::kAllReduce, {"4096"}, /*corrupt_rank=*/1);
  for (const CaseResult& r : results[1]) {
    EXPECT_EQ(r.status, CaseStatus::kFailed);
    // 4096 B = 1024 floats; the hook changes the middle one.
    EXPECT_NE(r.reason.find("all_reduce: 4096 B, rank 1: element 512 is"), std::string::npos)
        << r.reason;
  }
  // Rank 0, the one that reports, fails the case too and says which rank.
  for (const CaseResult& r : results[0]) {
    EXPECT_EQ(r.status, CaseStatus::kFailed);
    EXPECT_NE(r.reason.find("rank 1 got a wrong result"), std::string::npos) << r.reason;
  }
}

TEST(GlooCollectives, RanksMeetThroughTheTcpStore) {
  auto port = perfgate::testing::FreeTcpPort();
  ASSERT_TRUE(port.ok());
  auto results = RunRanks(3, "tcp:127.0.0.1:" + std::to_string(*port), Op::kBroadcast, {"1024"});
  for (const auto& rank : results) {
    for (const CaseResult& r : rank) EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
  }
}

TEST(GlooCollectives, OneRankRunsWithoutARendezvous) {
  auto results = RunRanks(1, "", Op::kAllReduce, {"1024"});
  for (const CaseResult& r : results[0]) {
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
    EXPECT_EQ(r.samples.front().values[2], 0.0);  // 2(n-1)/n = 0 for one rank
  }
}

TEST(TcpStore, GetWaitsForALaterSet) {
  auto server = TcpStoreServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  TcpStore reader("127.0.0.1", (*server)->port(), std::chrono::seconds(10));
  std::thread writer([&] {
    TcpStore w("127.0.0.1", (*server)->port(), std::chrono::seconds(10));
    w.set("key", {'v', '1'});
  });
  EXPECT_EQ(reader.get("key"), (std::vector<char>{'v', '1'}));
  writer.join();
}

// --- The agent as two processes. --------------------------------------------

// "key  metric  median unit noise n status" rows of the summary table: the
// sample count per case key.
std::map<std::string, std::string> SampleCounts(const std::string& output) {
  std::map<std::string, std::string> counts;
  std::istringstream in(output);
  std::string line;
  const std::regex row(R"(^(collectives/\S+)\s+time\s+\S+\s+ms\s+\S+%\s+(\d+)\s+(\w+))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, row)) counts[m[1]] = m[2].str() + " " + m[3].str();
  }
  return counts;
}

TEST(CollectivesAgent, TwoRankProcessesFinishWithTheSameSampleCounts) {
  const char* bin = std::getenv("PERFGATE_BIN_DIR");
  ASSERT_NE(bin, nullptr) << "PERFGATE_BIN_DIR is set by CTest";
  const std::string agent = std::string(bin) + "/agent/perfgate-agent";
  auto dir = TempDir::Create("perfgate-coll-agent-");
  ASSERT_TRUE(dir.ok());
  auto port = perfgate::testing::FreeTcpPort();  // nothing listens: rank 0 spools
  ASSERT_TRUE(port.ok());
  std::vector<std::unique_ptr<perfgate::testing::ChildProcess>> ranks;
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> argv = {
        agent, "run", "--suite", "collectives", "--filter", "collectives/all_reduce*;collectives/sendrecv*",
        "--set", "bytes=1024,65536", "--rank", std::to_string(r), "--world-size", "2",
        "--rendezvous", "file:" + dir->Join("rdzv"), "--transport-host", "127.0.0.1",
        "--coordinator", "127.0.0.1:" + std::to_string(*port), "--rpc-timeout", "2",
        "--spool", dir->Join("spool" + std::to_string(r)), "--min-samples", "5",
        "--min-time", "0", "--max-noise", "1000", "--timeout", "5", "--reconnect-for", "0"};
    auto child = perfgate::testing::ChildProcess::Start(argv, dir->Join("out" + std::to_string(r)));
    ASSERT_TRUE(child.ok()) << child.status();
    ranks.push_back(std::move(*child));
  }
  std::vector<std::optional<int>> codes;
  for (auto& c : ranks) codes.push_back(c->Wait(std::chrono::seconds(60)));
  ASSERT_TRUE(codes[0].has_value()) << ranks[0]->OutputTail();
  ASSERT_TRUE(codes[1].has_value()) << ranks[1]->OutputTail();
  // Rank 0 found no coordinator and kept the run in its spool (exit 2);
  // rank 1 never talks to one and exits with the cases' status.
  EXPECT_EQ(*codes[0], 2) << ranks[0]->OutputTail();
  EXPECT_EQ(*codes[1], 0) << ranks[1]->OutputTail();
  EXPECT_NE(ranks[0]->Output().find("is kept in"), std::string::npos) << ranks[0]->OutputTail();
  const auto counts0 = SampleCounts(ranks[0]->Output());
  const auto counts1 = SampleCounts(ranks[1]->Output());
  EXPECT_EQ(counts0.size(), 6u) << ranks[0]->OutputTail();  // 2 sizes x (2 + 1) forms
  EXPECT_EQ(counts0, counts1);
  for (const auto& [key, count] : counts0) EXPECT_NE(count.find(" ok"), std::string::npos) << key;
}

// --- Energy in lockstep. ----------------------------------------------------

// A device whose energy counter gains 5 J between two readings, or that has
// no counter (`missing` is then its reason).
class SteppingCounter final : public ThrottleSource {
 public:
  explicit SteppingCounter(std::string missing = "") : missing_(std::move(missing)) {}
  ThrottleReading Read() override { return {true, 1980, 0}; }
  double DefaultSmClockMhz() const override { return 1980; }
  absl::StatusOr<double> EnergyJoules() override {
    if (!missing_.empty()) return absl::UnavailableError(missing_);
    joules_ += 5;
    return joules_;
  }

 private:
  std::string missing_;
  double joules_ = 1000;
};

Measurement LockstepOn(ThrottleSource& device) {
  World solo{WorldOptions{}};
  EngineOptions o;
  o.sample_count = 4;
  auto m = MeasureInLockstep(solo, o, &device, 0, [] { return absl::OkStatus(); },
                             []() -> absl::StatusOr<double> { return 0.001; });
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : Measurement{};
}

TEST(MeasureInLockstep, ReadsThisRanksEnergyCounterOnceBeforeAndOnceAfterTheSamples) {
  SteppingCounter device;
  const Measurement m = LockstepOn(device);
  ASSERT_EQ(m.sample_s.size(), 4u);
  ASSERT_TRUE(m.energy_j.has_value()) << m.energy_unavailable;
  EXPECT_DOUBLE_EQ(*m.energy_j, 5.0);  // two readings, not one pair per sample
}

TEST(MeasureInLockstep, SaysWhyWhenTheDeviceHasNoEnergyCounter) {
  SteppingCounter device("nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)");
  const Measurement m = LockstepOn(device);
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_EQ(m.energy_unavailable, "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)");
}

}  // namespace
}  // namespace perfgate::suites::collectives
