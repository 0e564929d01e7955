#include "tests/support/podman.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

namespace perfgate::testing {

absl::StatusOr<std::unique_ptr<TempDir>> PodmanDir(const std::string& prefix) {
  absl::StatusOr<TempDir> dir = TempDir::Create(prefix);
  if (!dir.ok()) return dir.status();
  const std::string conf = dir->Join("containers.conf");
  std::ofstream(conf) << "[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = \"cgroupfs\"\n"
                         "runtime = \"runc\"\n";
  setenv("CONTAINERS_CONF", conf.c_str(), 1);
  if (!FindInPath("podman")) {
    return absl::FailedPreconditionError("podman is missing: scripts/install-deps.sh installs it");
  }
  return std::make_unique<TempDir>(std::move(*dir));
}

CommandResult Exec(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  auto r = RunCommand(argv, {}, timeout);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  std::cout << "--- " << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << " (exit " << r->exit_code
            << ") ---\n"
            << r->output;
  return *r;
}

}  // namespace perfgate::testing
