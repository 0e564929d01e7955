// The bundle's bin/perfgate-agent (scripts/agent-start.sh, with
// scripts/runtime-libs.sh --search) on a node made of fake library trees: a
// CUDA toolkit folder, two python3 virtual environments (PyTorch's NCCL
// wheel in the second's site-packages) and a loader's cache of the test's
// own (a stub ldconfig). PATH holds the environments, the stub and links to
// the few tools the scripts use, so this machine's CUDA cannot leak in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/processes.h"

namespace perfgate::testing::agent_start_test {
namespace {

using ::testing::HasSubstr;

// Creates `path` and its folder with `text`, executable when asked.
void Put(const std::string& path, const std::string& text, bool executable = false) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  if (executable) ::chmod(path.c_str(), 0755);
}

class Node {
 public:
  Node() : dir_(*TempDir::Create("perfgate-agent-start-")) {
    const std::string source = PERFGATE_SOURCE_DIR;
    Put(Join("bundle/bin/perfgate-agent"), *ReadFile(source + "/scripts/agent-start.sh"), true);
    Put(Join("bundle/libexec/perfgate/runtime-libs.sh"), *ReadFile(source + "/scripts/runtime-libs.sh"), true);
    std::filesystem::create_directories(Join("tools"));
    for (const char* tool : {"bash", "sh", "timeout", "grep", "sed", "awk", "ls", "readlink", "cat", "paste",
                             "dirname", "env", "printf", "sort"}) {
      if (auto found = FindInPath(tool)) std::filesystem::create_symlink(*found, Join(absl::StrCat("tools/", tool)));
    }
    Put(Join("stubs/ldconfig"), "#!/bin/sh\n", true);  // an empty cache unless a test says otherwise
    std::filesystem::create_directories(Join("ld"));
  }

  std::string Join(const std::string& name) const { return dir_.Join(name); }

  // A python3 virtual environment `name` (its bin/ goes on PATH in the
  // order made); its site-packages folder.
  std::string Python(const std::string& name) {
    auto r = RunCommand({PERFGATE_SYSTEM_PYTHON, "-m", "venv", "--without-pip", Join(name)});
    EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->output : r.status().ToString());
    path_ += Join(name) + "/bin:";
    for (const auto& entry : std::filesystem::directory_iterator(Join(name + "/lib"))) {
      if (entry.path().filename().string().rfind("python3", 0) == 0) return entry.path().string() + "/site-packages";
    }
    ADD_FAILURE() << "no lib/python3.* in " << Join(name);
    return "";
  }
  // An (empty) library file at `path`: the search looks for names only.
  static void Library(const std::string& path) { Put(path, ""); }
  // The agent behind the wrapper: a stub that prints what it was given.
  void EchoAgent() {
    Put(Join("bundle/libexec/perfgate/perfgate-agent"),
        "#!/bin/sh\necho \"LD_LIBRARY_PATH=$LD_LIBRARY_PATH\"\necho \"PERFGATE_GPU_LIBRARIES=$PERFGATE_GPU_LIBRARIES\"\n",
        true);
  }
  // The agent behind the wrapper: the real one.
  void RealAgent() {
    std::filesystem::create_symlink(Bin("agent/perfgate-agent"), Join("bundle/libexec/perfgate/perfgate-agent"));
  }

  // bin/perfgate-agent ARGS... with the node's PATH, toolkit and LD_LIBRARY_PATH.
  CommandResult Agent(const std::vector<std::string>& args, const std::string& inherited = "") {
    std::vector<std::string> argv = {Join("bundle/bin/perfgate-agent")};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions options;
    options.env = {{"PATH", path_ + Join("stubs") + ":" + Join("tools")},
                   {"PERFGATE_CUDA_DIRS", Join("cuda/lib64")},
                   {"LD_LIBRARY_PATH", Join("ld")},
                   {"PERFGATE_GPU_LIBRARIES", inherited}};
    auto r = RunCommand(argv, options, std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r.ok() ? r->exit_code : -1, 0) << (r.ok() ? r->output : "");
    return r.ok() ? *r : CommandResult{};
  }

 private:
  TempDir dir_;
  std::string path_;  // the environments' bin/ folders, each with ':'
};

TEST(AgentStart, FindsNcclInTheSecondPython3sSitePackagesAndTheRunDetailsSayWhereEachLibraryCameFrom) {
  Node node;
  node.Python("plain");
  const std::string torch = node.Python("torch");
  Node::Library(torch + "/nvidia/nccl/lib/libnccl.so.2");
  Node::Library(node.Join("cuda/lib64/libcublasLt.so.13"));
  node.RealAgent();
  const std::string out = node.Agent({"probe"}).output;
  EXPECT_THAT(out, HasSubstr(absl::StrCat("library.libnccl.so.2: ", torch, "/nvidia/nccl/lib/libnccl.so.2 (from the "
                                          "site-packages of ", node.Join("torch/bin/python3"), ")\n")));
  EXPECT_THAT(out, HasSubstr(absl::StrCat("library.libcublasLt.so.13: ", node.Join("cuda/lib64/libcublasLt.so.13"),
                                          " (from the CUDA toolkit)\n")));
}

TEST(AgentStart, PutsTheFoldersFoundOutsideTheLoadersPathAfterLdLibraryPath) {
  Node node;
  const std::string torch = node.Python("torch");
  Node::Library(torch + "/nvidia/nccl/lib/libnccl.so.2");
  Node::Library(node.Join("cuda/lib64/libcublasLt.so.12"));
  node.EchoAgent();
  EXPECT_THAT(node.Agent({}).output, HasSubstr(absl::StrCat("LD_LIBRARY_PATH=", node.Join("ld"), ":",
                                                            torch, "/nvidia/nccl/lib:", node.Join("cuda/lib64"), "\n")));
}

TEST(AgentStart, TakesTheLoadersCacheAsItIsAndSaysWhichLibraryIsMissing) {
  Node node;
  node.Python("plain");
  Put(node.Join("stubs/ldconfig"),
      "#!/bin/sh\nprintf '2 libs found in cache\\n\\tlibnccl.so.2 (libc6,x86-64) => /opt/nccl/libnccl.so.2\\n'\n", true);
  node.EchoAgent();
  const std::string out = node.Agent({}).output;
  EXPECT_THAT(out, HasSubstr(absl::StrCat("LD_LIBRARY_PATH=", node.Join("ld"), "\n")));
  EXPECT_THAT(out, HasSubstr("PERFGATE_GPU_LIBRARIES=libnccl.so.2 /opt/nccl/libnccl.so.2 (from the loader's cache, "
                             "ldconfig -p);libcublasLt.so.13 not found (searched LD_LIBRARY_PATH, the loader's cache, "
                             "0 CUDA toolkit folders, the site-packages of 2 python3 on PATH)\n"));
}

TEST(AgentStart, LeavesWhatAnAgentInheritsFromOneStartedThroughItAsItIs) {
  Node node;
  const std::string torch = node.Python("torch");
  Node::Library(torch + "/nvidia/nccl/lib/libnccl.so.2");
  node.EchoAgent();
  const std::string out = node.Agent({}, "libnccl.so.2 /opt/nccl/libnccl.so.2 (from the loader's cache, ldconfig -p)").output;
  EXPECT_THAT(out, HasSubstr(absl::StrCat("LD_LIBRARY_PATH=", node.Join("ld"), "\n")));
  EXPECT_THAT(out, HasSubstr("PERFGATE_GPU_LIBRARIES=libnccl.so.2 /opt/nccl/libnccl.so.2 (from the loader's cache, "
                             "ldconfig -p)\n"));
}

}  // namespace
}  // namespace perfgate::testing::agent_start_test
