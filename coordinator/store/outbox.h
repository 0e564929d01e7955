// Writing notifications inside a repository's own transaction, so an event
// (a regression, a triage move, a failed gate) and its deliveries commit or
// roll back together. Internal to coordinator/store/ (it includes libpqxx).
#pragma once

#include <pqxx/pqxx>

#include <cstdint>
#include <string>

#include "coordinator/store/notifications.h"
#include "coordinator/store/regressions.h"

namespace perfgate::coordinator::store {

/// Inserts one outbox row per endpoint that wants `e` (its event type among
/// the endpoint's, its branch and SKU matching the endpoint's globs);
/// returns how many.
int EnqueueInTransaction(pqxx::transaction_base& txn, const NotificationEvent& e);

/// A regression found ("regression.new"), or moved by `triage`
/// ("regression.triage", the move given).
NotificationEvent RegressionNotification(const Regression& r, const RegressionEvent* triage);
/// A gate that failed: its report's failing gating verdicts, summary and
/// link.
NotificationEvent GateFailedNotification(int64_t report_id, const std::string& branch, const std::string& sku,
                                         const std::string& commit, const std::string& baseline_branch,
                                         const std::string& report_json);

}  // namespace perfgate::coordinator::store
