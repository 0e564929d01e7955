// The bundle for air-gapped GPU nodes (scripts/bundle.sh), made from this
// build and unpacked in a bare container (label `container`): the Debian 12
// base of the container tests (scripts/container-base.sh), run by its
// digest, with none of the libraries perfgate links and no network. Inside,
// every binary must find its libraries through its own RPATH, the agent runs
// offline on the host backends of every suite, `perfgate compare` judges two
// such result files, the coordinator answers --help, and
// `perfgate-gpu-proof` writes every file of the proof with its "not
// measured" reasons. One container run for all tests; each test reads what
// it left in the output folder.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/support/podman.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

using testing::Bin;
using testing::CommandResult;
using testing::Exec;
using testing::TempDir;

constexpr uint64_t kMaxBundleBytes = 40ull << 20;

// What runs inside the container, in the unpacked bundle; each step leaves
// its output and exit status in /work/out. One small case per suite keeps
// the runs short; the collectives case runs on Gloo with one rank. A case
// has 2 s: the others reach their plateau in under one, the Gloo case
// seldom reaches its noise target and stops at the timeout with its
// samples (at 5 s it was half of each run's 11 s).
constexpr char kInside[] = R"(
set -u
out=/work/out
mkdir -p /opt/bundle "$out" && tar -xf /work/perfgate-*-linux-x86_64.tar -C /opt/bundle && cd /opt/bundle/perfgate-*
# The project's libraries must not be on the base: the bundle brings them.
ls /usr/lib/x86_64-linux-gnu /usr/lib 2>/dev/null |
  grep -E '^lib(grpc|protobuf|absl|yaml-cpp|pqxx|openblas|gloo|boost)' > "$out/base-libraries.txt"
for b in bin/perfgate libexec/perfgate/perfgate-agent bin/perfgate-coordinator libexec/perfgate/tests/*; do
  [ -e "$b" ] && ldd "$b" | grep 'not found' | sed "s|^|$b: |"
done > "$out/missing.txt"
bin/perfgate-coordinator --help > "$out/coordinator-help.txt" 2>&1; echo $? > "$out/coordinator-help.exit"
for side in a b; do
  bin/perfgate-agent run --offline --output "$out/$side.json" \
    --suite kernels --suite training --suite inference --suite collectives \
    --filter 'kernels/sgemm{k=512,*' --filter 'training/step{backend=host*' \
    --filter 'inference/decode{backend=host,batch=1,*' \
    --filter 'collectives/all_reduce{backend=gloo,bytes=65536,dtype=float32,inplace=0}' \
    --min-time 0.1 --timeout 2 > "$out/run-$side.log" 2>&1
  echo $? > "$out/run-$side.exit"
done
bin/perfgate compare --baseline "$out/a.json" --candidate "$out/b.json" --policy share/perfgate/policy.yaml \
  > "$out/compare.log" 2>&1; echo $? > "$out/compare.exit"
start=$(date +%s)
bin/perfgate-gpu-proof "$out/proof" > "$out/proof.log" 2>&1; echo $? > "$out/proof.exit"
echo $(( $(date +%s) - start )) > "$out/proof.seconds"
bin/perfgate-gpu-proof "$out/proof" > "$out/proof-again.log" 2>&1; echo $? > "$out/proof-again.exit"
)";

std::string SourceDir() { return PERFGATE_SOURCE_DIR; }

// What the tests share: the bundle and the container's output folder.
struct Shared {
  std::unique_ptr<TempDir> dir;
  std::string archive;
  std::string bundle_output;
  std::string out;  // the container's /work/out
};
Shared* shared = nullptr;

class BundleEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (geteuid() != 0) return;  // each test skips, saying why
    shared = new Shared;
    auto dir = testing::PodmanDir("perfgate-bundle-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    shared->dir = std::move(*dir);

    CommandResult bundle = Exec({SourceDir() + "/scripts/bundle.sh", Bin("."), shared->dir->path()});
    ASSERT_EQ(bundle.exit_code, 0) << bundle.output;
    shared->bundle_output = bundle.output;
    shared->archive = bundle.output.substr(0, bundle.output.find('\n'));
    // The base has no xz: the archive goes in as plain tar, beside it.
    ASSERT_EQ(Exec({"xz", "-d", "-k", shared->archive}).exit_code, 0);

    CommandResult base = Exec({SourceDir() + "/scripts/container-base.sh"});
    ASSERT_EQ(base.exit_code, 0) << base.output;
    CommandResult digest = Exec({"podman", "image", "inspect", "--format", "{{.Digest}}", "localhost/perfgate-ci/debian:bookworm"});
    ASSERT_EQ(digest.exit_code, 0) << digest.output;
    const std::string pinned = "localhost/perfgate-ci/debian@" + digest.output.substr(0, digest.output.find('\n'));

    shared->out = shared->dir->Join("out");
    ASSERT_EQ(::mkdir(shared->out.c_str(), 0755), 0);
    CommandResult run = Exec({"podman", "run", "--rm", "--network=none", "-v", shared->dir->path() + ":/work",
                              pinned, "sh", "-c", kInside},
                             std::chrono::minutes(8));
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }

  void TearDown() override {
    delete shared;
    shared = nullptr;
  }
};

const ::testing::Environment* const kEnvironment = ::testing::AddGlobalTestEnvironment(new BundleEnvironment);

class Bundle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "podman runs here as root only (docs/containers.md, \"Testing\")";
    ASSERT_NE(shared, nullptr);
  }
  static std::string Out(const std::string& name) {
    auto text = testing::ReadFile(shared->out + "/" + name);
    EXPECT_TRUE(text.ok()) << name << ": " << text.status();
    return text.ok() ? *text : "";
  }
  static int ExitOf(const std::string& step) {
    const std::string text = Out(step + ".exit");
    return text.empty() ? -1 : std::stoi(text);
  }
};

TEST_F(Bundle, IsAtMostFortyMebibytesCompressedAndSaysItsSize) {
  struct stat st {};
  ASSERT_EQ(::stat(shared->archive.c_str(), &st), 0) << shared->archive;
  EXPECT_LE(static_cast<uint64_t>(st.st_size), kMaxBundleBytes);
  EXPECT_NE(shared->bundle_output.find("size: "), std::string::npos) << shared->bundle_output;
  EXPECT_NE(shared->archive.find("-linux-x86_64.tar.xz"), std::string::npos) << shared->archive;
}

TEST_F(Bundle, RunsOnABaseWithoutTheProjectsLibraries) {
  EXPECT_EQ(Out("base-libraries.txt"), "") << "the base is not bare";
  // Each line names the binary and the library it lacks.
  EXPECT_EQ(Out("missing.txt"), "");
}

TEST_F(Bundle, CoordinatorAnswersHelp) {
  EXPECT_EQ(ExitOf("coordinator-help"), 0) << Out("coordinator-help.txt");
  EXPECT_NE(Out("coordinator-help.txt").find("serve"), std::string::npos);
}

TEST_F(Bundle, AgentRunsEverySuiteOfflineOnTheHostBackends) {
  for (const char* side : {"a", "b"}) {
    ASSERT_EQ(ExitOf(absl::StrCat("run-", side)), 0) << Out(absl::StrCat("run-", side, ".log"));
    const nlohmann::json results = nlohmann::json::parse(Out(absl::StrCat(side, ".json")));
    // Measured: ok, or stopped by the per-case timeout with its samples (a
    // one-rank Gloo all-reduce on a busy 2-core machine rarely gets quiet).
    std::set<std::string> measured;
    for (const auto& c : results.at("cases")) {
      const bool ran = c.at("status") == "ok" || c.at("status") == "timed_out";
      if (ran && !c.at("samples").empty()) measured.insert(c.at("benchmark").at("suite").get<std::string>());
    }
    EXPECT_EQ(measured, (std::set<std::string>{"kernels", "training", "inference", "collectives"}))
        << Out(absl::StrCat("run-", side, ".log"));
  }
}

TEST_F(Bundle, CompareJudgesTwoResultFilesOfTheBundledAgent) {
  const int code = ExitOf("compare");
  // One file a side: pass or inconclusive (too few processes), never an error.
  EXPECT_TRUE(code == 0 || code == 3) << code << "\n" << Out("compare.log");
  EXPECT_NE(Out("compare.log").find("kernels/sgemm"), std::string::npos) << Out("compare.log");
}

TEST_F(Bundle, GpuProofWritesEveryFileWithItsReasonAndExitsZeroWithoutAGpu) {
  ASSERT_EQ(ExitOf("proof"), 0) << Out("proof.log");
  std::string seconds = Out("proof.seconds");
  std::cout << "perfgate-gpu-proof took " << seconds.substr(0, seconds.find('\n')) << " s without a GPU\n";
  const std::string md = Out("proof/gpu-results.md");
  for (const char* section : {"## Device tests", "## Kernels", "## Training step and inference", "## Collectives",
                              "## A/B: the gate on this card"}) {
    EXPECT_NE(md.find(section), std::string::npos) << section << "\n" << md;
  }
  EXPECT_NE(md.find("not measured: no NVIDIA driver on this node"), std::string::npos) << md;
  EXPECT_EQ(md.find("## Checks that failed"), std::string::npos) << md;
  for (const char* stage : {"env", "gpu_tests", "kernels", "model", "collectives", "ab"}) {
    struct stat st {};
    EXPECT_EQ(::stat((shared->out + "/proof/" + stage + "/done").c_str(), &st), 0) << stage;
  }
  // The raw JSON of every run is there too, each skipped case with its reason.
  const nlohmann::json kernels = nlohmann::json::parse(Out("proof/kernels/kernels.json"));
  ASSERT_FALSE(kernels.at("cases").empty());
  EXPECT_EQ(kernels.at("cases")[0].at("status"), "skipped");
}

TEST_F(Bundle, GpuProofRunAgainSkipsTheStagesAlreadyDone) {
  EXPECT_EQ(ExitOf("proof-again"), 0) << Out("proof-again.log");
  const std::string log = Out("proof-again.log");
  for (const char* stage : {"env", "gpu_tests", "kernels", "model", "collectives", "ab"}) {
    EXPECT_NE(log.find(std::string(stage) + ": done in an earlier call, skipped"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace perfgate
