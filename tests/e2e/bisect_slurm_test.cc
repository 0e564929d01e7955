// `perfgate bisect` on the private Slurm cluster the tests start
// (bisect_fixture.h): each round of probes is one sbatch array job, of three
// probes after the bad endpoint's, and the bisection names the commit that
// adds 2 % work. The probes count instructions (--count): what this test
// shows is the array, and a count decides each probe in one process, where
// timed rounds took two minutes; the timed search is bisect_e2e_test.cc's.
#include "tests/e2e/bisect_fixture.h"
#include "tests/support/slurm.h"

namespace perfgate::bisect_slurm_test {
namespace {

TEST_F(BisectEndToEnd, EachRoundRunsAsAnSbatchArrayOnTheSlurmCluster) {
  if (absl::Status s = testing::SlurmCluster::CanRun(); !s.ok()) GTEST_SKIP() << s.message();
  auto cluster = testing::SlurmCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::vector<std::string> commits = MakeRepo("slurm", 2);
  std::vector<std::string> args = BisectArgs(dir_->Join("slurm"), commits);
  args.insert(args.end(), {"--slurm", "--probes-per-round", "3", "--count", "--min-change", "1"});
  testing::ProcessOptions options;
  options.env = (*cluster)->env();
  auto r = RunCommand(args, options, std::chrono::minutes(10));
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  EXPECT_EQ(r->exit_code, 0) << r->output << (*cluster)->LogTails();
  EXPECT_NE(r->output.find("sbatch array of 1 probe(s)"), std::string::npos);  // the bad endpoint
  EXPECT_NE(r->output.find("sbatch array of 3 probe(s)"), std::string::npos);
  const v1::Bisection b = GetBisection(BisectionId(r->output));
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_CULPRIT) << b.DebugString();
  EXPECT_EQ(b.culprit(), commits[kCulpritCommit - 1]) << b.DebugString();
}

}  // namespace
}  // namespace perfgate::bisect_slurm_test
