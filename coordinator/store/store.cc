#include "coordinator/store/store.h"

#include <utility>

#include "common/status_macros.h"
#include "coordinator/store/database.h"

namespace perfgate::coordinator {
namespace store {

DatabaseOwner::DatabaseOwner(std::unique_ptr<Database> db) : db_owned_(std::move(db)) {}
DatabaseOwner::~DatabaseOwner() = default;

}  // namespace store

Store::Store(std::unique_ptr<store::Database> db)
    : DatabaseOwner(std::move(db)),
      SchemaRepository(*db_owned_),
      RunRepository(*db_owned_),
      BatchRepository(*db_owned_),
      SummaryRepository(*db_owned_),
      HistoryRepository(*db_owned_),
      CalibrationRepository(*db_owned_),
      RetentionRepository(*db_owned_),
      ReportRepository(*db_owned_),
      CatalogRepository(*db_owned_),
      PgCredentialRepository(*db_owned_),
      PgRegressionRepository(*db_owned_),
      BisectionRepository(*db_owned_),
      NotificationRepository(*db_owned_),

      JobRepository(*db_owned_) {}

Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Connect(const std::string& conninfo, int pool_size) {
  auto db = store::Database::Connect(conninfo, pool_size);
  PERFGATE_RETURN_IF_ERROR(db);
  return std::unique_ptr<Store>(new Store(std::move(*db)));
}

}  // namespace perfgate::coordinator
