#include "client/spool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/identity.h"
#include "tests/support/processes.h"
#include "wire/convert.h"

namespace perfgate::client::spool_test {
namespace {

RunMeta Meta() {
  RunMeta m;
  m.run_id = NewUuid();
  m.agent_name = "node-1";
  m.environment = {"cpu-amd-epyc", {{"kernel", "6.1"}}};
  m.branch = "main";
  m.commit = "abc";
  m.started_at = std::chrono::system_clock::now();
  return m;
}

v1::ResultBatch Batch(const std::string& run_id, uint64_t seq) {
  v1::ResultBatch b;
  b.set_run_id(run_id);
  b.set_sequence(seq);
  auto* c = b.add_cases();
  c->mutable_benchmark()->set_suite("kernels");
  c->mutable_benchmark()->set_name("copy");
  c->add_samples()->add_values(1.5 * static_cast<double>(seq));
  return b;
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::TempDir::Create("perfgate-spool-");
    ASSERT_TRUE(dir.ok());
    dir_ = std::make_unique<testing::TempDir>(std::move(*dir));
  }
  std::unique_ptr<testing::TempDir> dir_;
};

TEST_F(SpoolTest, KeepsUnacknowledgedBatchesAndTheRun) {
  const RunMeta meta = Meta();
  auto run = SpooledRun::Create(dir_->Join("spool"), meta);
  ASSERT_TRUE(run.ok()) << run.status();
  for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(run->Append(Batch(meta.run_id, seq)).ok());
  ASSERT_TRUE(run->Acknowledge(1).ok());

  auto pending = run->ReadPending();
  ASSERT_TRUE(pending.ok()) << pending.status();
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ(pending->begin()->first, 2u);
  EXPECT_EQ(pending->at(3).cases(0).samples(0).values(0), 4.5);
  auto open = run->ReadRun();
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->run_id(), meta.run_id);
  EXPECT_EQ(wire::FromProto(open->environment().fields()).at("kernel"), "6.1");
  EXPECT_EQ(*run->LastSequence(), 3u);
  EXPECT_FALSE(run->ReadClose()->has_value());
}

TEST_F(SpoolTest, RemembersTheHighestAcknowledgedSequence) {
  const RunMeta meta = Meta();
  auto run = SpooledRun::Create(dir_->Join("spool"), meta);
  ASSERT_TRUE(run.ok());
  for (uint64_t seq = 1; seq <= 2; ++seq) ASSERT_TRUE(run->Append(Batch(meta.run_id, seq)).ok());
  ASSERT_TRUE(run->Acknowledge(2).ok());
  ASSERT_TRUE(run->Acknowledge(1).ok());
  EXPECT_TRUE(run->ReadPending()->empty());
  EXPECT_EQ(*run->LastSequence(), 2u);
}

TEST_F(SpoolTest, ARunOwnedByAnotherAgentCannotBeOpenedUntilItLetsGo) {
  std::string run_dir;
  {
    auto run = SpooledRun::Create(dir_->Join("spool"), Meta());
    ASSERT_TRUE(run.ok());
    auto listed = ListSpool(dir_->Join("spool"));
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    run_dir = listed->front();
    EXPECT_EQ(SpooledRun::Open(run_dir).status().code(), absl::StatusCode::kFailedPrecondition);
  }  // the owner is gone
  EXPECT_TRUE(SpooledRun::Open(run_dir).ok());
}

TEST_F(SpoolTest, ATruncatedBatchIsDataLossNamingTheFile) {
  const RunMeta meta = Meta();
  auto run = SpooledRun::Create(dir_->Join("spool"), meta);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(run->Append(Batch(meta.run_id, 1)).ok());
  const std::string file = run->path() + "/batch-1.pb";
  const std::string bytes = *testing::ReadFile(file);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  auto pending = run->ReadPending();
  EXPECT_EQ(pending.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(pending.status().message().find("batch-1.pb"), std::string::npos) << pending.status();
}

TEST_F(SpoolTest, RemoveLeavesNothingAndAMissingSpoolListsEmpty) {
  const RunMeta meta = Meta();
  auto run = SpooledRun::Create(dir_->Join("spool"), meta);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(run->Append(Batch(meta.run_id, 1)).ok());
  v1::CloseRunRequest close;
  close.set_run_id(meta.run_id);
  close.set_last_sequence(1);
  ASSERT_TRUE(run->Close(close).ok());
  EXPECT_EQ((*run->ReadClose())->last_sequence(), 1u);
  ASSERT_TRUE(run->Remove().ok());
  struct stat st {};
  EXPECT_NE(stat(run->path().c_str(), &st), 0);
  EXPECT_TRUE(ListSpool(dir_->Join("spool"))->empty());
  EXPECT_TRUE(ListSpool(dir_->Join("never-made"))->empty());
}

}  // namespace
}  // namespace perfgate::client::spool_test
