// scripts/gpu-proof.sh on a node made of stubs: a bundle whose agent is a
// script, nvidia-smi that hangs or is missing, a device file in a folder of
// the test's own (never the real /dev), PyTorch's wheel and the loader's
// cache faked. PATH holds the stubs and links to the few tools the proof
// uses, nothing else, so a real driver or python3 on the machine cannot leak in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/processes.h"

namespace perfgate::testing::gpu_proof_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Writes `text` to `path`, its folder made, as an executable.
void WriteExecutable(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0755);
}

// The file's content; empty when it cannot be read.
std::string Slurp(const std::string& path) {
  auto text = ReadFile(path);
  return text.ok() ? *text : "";
}

// A probe that never answers: SIGTERM is ignored, only SIGKILL ends it.
constexpr char kHangs[] = "#!/bin/sh\ntrap '' TERM\nsleep 1000\n";
// The agent's probe on a node without a usable driver.
constexpr char kNoDriver[] = "sku: cpu-x\nnvml: unavailable: libnvidia-ml.so.1 not found\ngpu: none (no CUDA driver)\n";
// The agent's probe where the CUDA driver lists one GPU.
constexpr char kOneGpu[] = "sku: h100-sxm5-80gb\nnvml: ok\ngpu 0: NVIDIA H100 80GB HBM3 GPU-0 pci 0000:01:00.0 sm 132\n";

// An unpacked bundle whose agent prints `probe` for its probe and logs the
// arguments of every other call, and a PATH of stubs and the proof's tools.
class Node {
 public:
  explicit Node(const std::string& probe) : dir_(*TempDir::Create("perfgate-gpu-proof-")) {
    const std::string source = PERFGATE_SOURCE_DIR;
    WriteExecutable(Join("bundle/bin/perfgate-gpu-proof"), *ReadFile(source + "/scripts/gpu-proof.sh"));
    WriteExecutable(Join("bundle/share/perfgate/scripts/gpu-proof-report.py"),
                    *ReadFile(source + "/scripts/gpu-proof-report.py"));
    std::filesystem::create_directories(Join("bundle/libexec/perfgate/tests"));
    WriteExecutable(Join("bundle/bin/perfgate-agent"),
                    absl::StrCat("#!/bin/sh\nif [ \"$1\" = probe ]; then printf '%s' '", probe,
                                 "'; exit 0; fi\necho \"$@\" >> ", Join("agent.log"), "\n"));
    std::filesystem::create_directories(Join("dev"));
    std::filesystem::create_directories(Join("tools"));
    for (const char* tool : {"bash", "sh", "timeout", "sleep", "grep", "sed", "awk", "ls", "readlink", "head", "tail",
                             "cat", "date", "rm", "mkdir", "touch", "cp", "paste", "basename", "dirname", "env",
                             "printf"}) {
      auto found = FindInPath(tool);
      if (found) std::filesystem::create_symlink(*found, Join(absl::StrCat("tools/", tool)));
    }
    Stub("ldconfig", "#!/bin/sh\n");  // an empty cache unless a test says otherwise
  }

  std::string Join(const std::string& name) const { return dir_.Join(name); }
  // A tool of that name on PATH, before the real ones.
  void Stub(const std::string& name, const std::string& script) { WriteExecutable(Join("stubs/" + name), script); }

  // Runs the proof into out/ with probes bounded at 1 s.
  CommandResult Proof() {
    ProcessOptions options;
    options.env = {{"PATH", Join("stubs") + ":" + Join("tools")},
                   {"PERFGATE_PROOF_PROBE_S", "1"},
                   {"PERFGATE_PROOF_DEV_DIR", Join("dev")},
                   {"PERFGATE_PROOF_CUDA_DIRS", Join("no-toolkit")}};
    auto r = RunCommand({Join("bundle/bin/perfgate-gpu-proof"), Join("out")}, options, std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status();  // a hang ends here, killed at 60 s
    return r.ok() ? *r : CommandResult{};
  }
  std::string Results() const { return Slurp(Join("out/gpu-results.md")); }

 private:
  TempDir dir_;
};

// Runs the proof and checks its exit code and that every stage finished;
// the results it wrote.
std::string ProofResults(Node& node, int exit_code) {
  const CommandResult r = node.Proof();
  EXPECT_EQ(r.exit_code, exit_code) << r.output;
  for (const char* stage : {"env", "gpu_tests", "kernels", "model", "collectives", "ab", "counts"}) {
    EXPECT_TRUE(std::filesystem::exists(node.Join(absl::StrCat("out/", stage, "/done")))) << stage;
  }
  return node.Results();
}

TEST(GpuProof, KillsAnNvidiaSmiThatNeverAnswersAndFailsWithEveryFileWritten) {
  Node node(kNoDriver);
  node.Stub("nvidia-smi", kHangs);
  const std::string md = ProofResults(node, 1);
  EXPECT_THAT(md, HasSubstr("nothing could measure the GPU this node has (a probe of it hangs): "
                            "nvidia-smi -L did not answer within 1 s"));
  EXPECT_THAT(md, HasSubstr("## Checks that failed"));
}

TEST(GpuProof, FailsWhereADeviceFileIsThereButNeitherNvidiaSmiNorTheDriverSeesAGpu) {
  Node node(kNoDriver);
  std::ofstream(node.Join("dev/nvidia0")) << "";
  EXPECT_THAT(ProofResults(node, 1),
              HasSubstr(absl::StrCat("nothing could measure the GPU this node has (", node.Join("dev/nvidia0"),
                                     " is there): nvidia-smi not found; the CUDA driver finds none (no CUDA driver; "
                                     "NVML: unavailable: libnvidia-ml.so.1 not found)")));
}

TEST(GpuProof, PassesWithEveryRowNotMeasuredWhereTheNodeHasNoDriverAndNoDevice) {
  Node node(kNoDriver);
  const std::string md = ProofResults(node, 0);
  EXPECT_THAT(md, HasSubstr("not measured: no NVIDIA driver on this node: nvidia-smi not found"));
  EXPECT_THAT(md, Not(HasSubstr("## Checks that failed")));
  // Neither library is anywhere: said so, with where it was looked for.
  EXPECT_THAT(md, HasSubstr("libnccl.so.2 not found (searched the loader's cache, 1 toolkit folders, "
                            "the site-packages of 0 python3): the NCCL cases skip"));
  EXPECT_THAT(md, HasSubstr("libcublasLt.so.13, .12 or .11 not found"));
}

TEST(GpuProof, MeasuresAGpuTheDriverListsWhereNvidiaSmiIsMissing) {
  Node node(kOneGpu);
  const CommandResult r = node.Proof();
  const std::string md = node.Results();
  EXPECT_THAT(md, HasSubstr("- device: NVIDIA H100 80GB HBM3 GPU-0 pci 0000:01:00.0 sm 132 (1 GPUs; nvidia-smi lists "
                            "0, the CUDA driver 1; nvidia-smi not found)"));
  // The stages ran the agent on the GPU, each run within its bound.
  const std::string calls = Slurp(node.Join("agent.log"));
  EXPECT_THAT(calls, HasSubstr("run --offline --time-budget 40s --suite kernels"));
  EXPECT_THAT(calls, HasSubstr("run --offline --time-budget 70s --suite training"));
  EXPECT_THAT(calls, HasSubstr("ab --offline"));
  // This stub measures nothing: the A/B runs judged nothing, which fails.
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(md, HasSubstr("A/B: aa1 judged no metric"));
  // No Nsight Compute on this node's PATH or in a toolkit: the counts say so.
  EXPECT_THAT(md, HasSubstr("## Counts on the GPU (ncu)"));
  EXPECT_THAT(md, HasSubstr("not measured: no Nsight Compute (ncu) on this node"));
}

TEST(GpuProof, RecordsWhereEachLibraryWasFoundAndPutsAWheelsFolderOnTheLibraryPath) {
  Node node(kNoDriver);
  const std::string site = node.Join("site-packages");
  std::filesystem::create_directories(site + "/nvidia/nccl/lib");
  std::ofstream(site + "/nvidia/nccl/lib/libnccl.so.2") << "";
  // A python3 whose site-packages hold PyTorch's NCCL wheel, and a loader
  // cache that knows cuBLASLt.
  node.Stub("python3", absl::StrCat("#!/bin/sh\necho ", site, "/nvidia/nccl/lib\n"));
  node.Stub("ldconfig", "#!/bin/sh\nprintf '\\tlibcublasLt.so.12 (libc6,x86-64) => /opt/cuda/libcublasLt.so.12\\n'\n");
  const CommandResult r = node.Proof();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string md = node.Results();
  EXPECT_THAT(md, HasSubstr(absl::StrCat("- library: libnccl.so.2 ", site,
                                         "/nvidia/nccl/lib/libnccl.so.2 (from the site-packages of ",
                                         node.Join("stubs/python3"), ")")));
  EXPECT_THAT(md, HasSubstr("- library: libcublasLt.so.12 /opt/cuda/libcublasLt.so.12 (from the loader's cache, "
                            "ldconfig -p)"));
  EXPECT_THAT(Slurp(node.Join("out/env/cuda-libraries.txt")),
              HasSubstr(absl::StrCat("LD_LIBRARY_PATH=", site, "/nvidia/nccl/lib")));
}

}  // namespace
}  // namespace perfgate::testing::gpu_proof_test
