// The commands of perfgate-coordinator, behind a thin main: a configuration
// parsed and checked at start (config.h) in, exit code (common/exit_codes.h)
// out. One file per command: serve_command.cc, credentials_command.cc,
// maintenance_command.cc (with `migrate`), webhooks_command.cc.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/config.h"
#include "coordinator/store.h"

namespace perfgate::coordinator {

/// Applies pending migrations, then serves gRPC (and HTTP when asked) until
/// SIGINT or SIGTERM.
int ServeCommand(const CoordinatorConfig& config);
/// Applies pending migrations and exits.
int MigrateCommand(const CoordinatorConfig& config);
/// Issues, revokes or lists the callers' credentials.
int CredentialsCommand(const CoordinatorConfig& config);
/// Adds, lists or removes webhook endpoints, or lists the outbox.
int WebhooksCommand(const CoordinatorConfig& config);
/// Makes the partitions of samples ahead of time, then removes expired runs.
int MaintenanceCommand(const CoordinatorConfig& config);

/// Tells `s` on stderr as "perfgate-coordinator: <what>: <message>" and
/// returns kExitError.
int Fail(const absl::Status& s, const char* what);

/// A time as the commands print it: "2026-01-02T03:04:05Z".
std::string UtcTime(TimePoint t);

/// The store of --database with every migration applied; `schema_version`
/// gets the version it is at.
absl::StatusOr<std::unique_ptr<Store>> OpenStore(const CoordinatorConfig& config, int* schema_version);
/// OpenStore, then "perfgate-coordinator: schema at version N" on stdout.
absl::StatusOr<std::unique_ptr<Store>> OpenStoreAndTellVersion(const CoordinatorConfig& config);

}  // namespace perfgate::coordinator
