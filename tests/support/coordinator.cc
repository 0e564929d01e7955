#include "tests/support/coordinator.h"

#include <chrono>
#include <regex>

#include "absl/strings/str_cat.h"

namespace perfgate::testing {

absl::StatusOr<RunningCoordinator> StartCoordinator(const std::string& conninfo, const std::string& log_path,
                                                    const std::vector<std::string>& extra, int port) {
  std::vector<std::string> argv = {Bin("coordinator/perfgate-coordinator"), "--database", conninfo,
                                   "serve", "--listen", absl::StrCat("127.0.0.1:", port)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = ChildProcess::Start(argv, log_path);
  if (!child.ok()) return child.status();
  RunningCoordinator c{std::move(*child), ""};
  if (!c.process->WaitForLine("listening on", std::chrono::seconds(30))) {
    return absl::DeadlineExceededError(
        absl::StrCat("the coordinator did not start listening:\n", c.process->OutputTail()));
  }
  std::smatch m;
  const std::string out = c.process->Output();
  if (!std::regex_search(out, m, std::regex("listening on 127\\.0\\.0\\.1:(\\d+)"))) {
    return absl::InternalError(absl::StrCat("no address in the coordinator's output:\n", c.process->OutputTail()));
  }
  c.address = "127.0.0.1:" + m[1].str();
  return c;
}

}  // namespace perfgate::testing
