// `perfgate-agent replay`: send every run left in the spool
// (client::RunUpload::Replay) and remove what was stored.
#include <iostream>

#include "agent/agent.h"
#include "agent/command_support.h"
#include "agent/probe.h"
#include "client/upload.h"

namespace perfgate::agent {

int ReplayCommand(const AgentConfig& config) {
  auto runs = client::ListSpool(config.spool_dir);
  if (!runs.ok()) return Fail(runs.status(), "cannot read the spool");
  client::CoordinatorClient client(config.client);
  // Only the hostname is needed: replaying measures nothing.
  const std::string hostname = Hostname();
  size_t failures = 0;
  for (const std::string& dir : *runs) {
    auto replayed = client::RunUpload::Replay(client, dir, hostname, PERFGATE_VERSION);
    if (!replayed.ok()) {
      ++failures;
      std::cerr << "perfgate-agent: " << dir << ": " << replayed.status().message() << "\n";
    } else if (replayed->already_stored) {
      std::cout << "perfgate-agent: run " << replayed->run_id << " was already stored\n";
    } else {
      std::cout << "perfgate-agent: replayed run " << replayed->run_id << " (" << replayed->batches
                << " batches, " << replayed->samples_stored << " samples stored)\n";
    }
  }
  std::cout << "perfgate-agent: " << runs->size() - failures << " of " << runs->size() << " spooled runs replayed\n";
  return failures == 0 ? kExitPass : kExitError;
}

}  // namespace perfgate::agent
