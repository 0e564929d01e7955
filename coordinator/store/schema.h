// The database schema: the versioned migrations embedded in the binary
// (coordinator/migrations/), applied in order and recorded.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

class SchemaRepository : protected Repository {
 public:
  /// Applies every migration not yet applied, each in its own transaction,
  /// and records it in schema_migrations. Safe to call concurrently and twice.
  /// FAILED_PRECONDITION, with nothing touched, when the database holds a
  /// migration newer than any this binary knows (a newer release's).
  absl::Status Migrate();
  /// Highest applied migration version (0 when none).
  absl::StatusOr<int> SchemaVersion();
  /// Highest migration version this binary knows.
  static int LatestSchemaVersion();

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
