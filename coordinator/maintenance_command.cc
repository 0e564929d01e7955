#include <iostream>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/exit_codes.h"
#include "coordinator/commands.h"
#include "coordinator/domain/maintenance.h"

namespace perfgate::coordinator {

std::string UtcTime(TimePoint t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromChrono(t), absl::UTCTimeZone());
}

int Fail(const absl::Status& s, const char* what) {
  std::cerr << "perfgate-coordinator: " << what << ": " << s.message() << "\n";
  return kExitError;
}

absl::StatusOr<std::unique_ptr<Store>> OpenStore(const CoordinatorConfig& config, int* schema_version) {
  auto store = Store::Connect(config.database, config.pool_size);
  if (!store.ok()) {
    Fail(store.status(), "cannot reach the database");
    return store.status();
  }
  if (absl::Status s = (*store)->Migrate(); !s.ok()) {
    Fail(s, s.code() == absl::StatusCode::kFailedPrecondition ? "refusing the database" : "migration failed");
    return s;
  }
  auto version = (*store)->SchemaVersion();
  if (!version.ok()) {
    Fail(version.status(), "cannot read the schema version");
    return version.status();
  }
  *schema_version = *version;
  return store;
}

absl::StatusOr<std::unique_ptr<Store>> OpenStoreAndTellVersion(const CoordinatorConfig& config) {
  int version = 0;
  auto store = OpenStore(config, &version);
  if (store.ok()) std::cout << "perfgate-coordinator: schema at version " << version << std::endl;
  return store;
}

int MigrateCommand(const CoordinatorConfig& config) {
  return OpenStoreAndTellVersion(config).ok() ? kExitPass : kExitError;
}

int MaintenanceCommand(const CoordinatorConfig& config) {
  auto store = OpenStoreAndTellVersion(config);
  if (!store.ok()) return kExitError;
  if (absl::Status s = RunMaintenance(**store, config.maintenance, std::cout); !s.ok()) {
    return Fail(s, "maintenance failed");
  }
  return kExitPass;
}

}  // namespace perfgate::coordinator
