// The outbox rows written inside other repositories' transactions.
#include "coordinator/store/outbox.h"

#include "absl/strings/str_cat.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {

int EnqueueInTransaction(pqxx::transaction_base& txn, const NotificationEvent& e) {
  const pqxx::result rows = txn.exec_params(
      "INSERT INTO notification_outbox (endpoint_id, event_type, payload) "
      "SELECT id, $1, $2 FROM notification_endpoints WHERE $1 = ANY (events) "
      "AND perfgate_glob_match(branch, $3) AND perfgate_glob_match(sku, $4) RETURNING id",
      e.type, e.payload, e.branch, e.sku);
  return static_cast<int>(rows.size());
}

}  // namespace perfgate::coordinator::store
