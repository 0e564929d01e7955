// perfgate-coordinator: `serve` the gRPC services over PostgreSQL, `migrate`
// the schema and exit, manage the callers' `credentials`, or run the
// `maintenance` a scheduler calls (partitions ahead of time, retention), or
// manage the `webhooks` told of regressions and failed gates.
// The command line is parsed and checked whole (config.h) before the command
// (commands.h) runs.
#include "common/exit_codes.h"
#include "coordinator/commands.h"
#include "coordinator/config.h"

int main(int argc, char** argv) {
  using namespace perfgate::coordinator;
  const CommandLine line = ParseCommandLine(argc, argv);
  if (line.exit_code) return *line.exit_code;
  switch (line.command) {
    case Command::kServe: return ServeCommand(line.config);
    case Command::kMigrate: return MigrateCommand(line.config);
    case Command::kCredentials: return CredentialsCommand(line.config);
    case Command::kMaintenance: return MaintenanceCommand(line.config);
    case Command::kWebhooks: return WebhooksCommand(line.config);
  }
  return perfgate::kExitError;
}
