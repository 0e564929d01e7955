// Writing notifications inside a repository's own transaction, so an event
// (a regression, a triage move, a failed gate, an ended bisection) and its deliveries commit or
// roll back together. Internal to coordinator/store/ (it includes libpqxx).
#pragma once

#include <pqxx/pqxx>

#include <cstdint>
#include <string>

#include "coordinator/store/bisections.h"
#include "coordinator/store/notifications.h"
#include "coordinator/store/regressions.h"
#include "gate/gate.h"

namespace perfgate::coordinator::store {

/// Inserts one outbox row per endpoint that wants `e` (its event type among
/// the endpoint's, its branch and SKU matching the endpoint's globs);
/// returns how many.
int EnqueueInTransaction(pqxx::transaction_base& txn, const NotificationEvent& e);

/// A regression found ("regression.new"), or moved by `triage`
/// ("regression.triage", the move given).
NotificationEvent RegressionNotification(const Regression& r, const RegressionEvent* triage);
/// A bisection that ended ("bisection.finished"): its outcome, and the
/// regression it was started for (0 for an explicit range), whose branch and
/// SKU the endpoints' globs are matched against.
NotificationEvent BisectionNotification(int64_t bisection_id, const BisectionOutcome& outcome,
                                        int64_t regression_id, const std::string& branch, const std::string& sku);
/// A gate that failed: the gating verdicts of `result` that fail it
/// (gate::Fails), its summary and the report's link.
NotificationEvent GateFailedNotification(int64_t report_id, const std::string& branch, const std::string& sku,
                                         const std::string& commit, const std::string& baseline_branch,
                                         const gate::GateResult& result);

}  // namespace perfgate::coordinator::store
