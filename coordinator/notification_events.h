// The notifications the coordinator sends (docs/notifications.md), worded
// here from what a write stored: which changes notify — a regression found
// (regression.new), a triage move (regression.triage), a bisection ended
// (bisection.finished), a gate that failed (gate.failed) — and the generic
// JSON body each carries. The store only queues what these word, in the
// write's own transaction (store::NotifyWith); the notifier delivers them.
#pragma once

#include <optional>

#include "coordinator/store/bisections.h"
#include "coordinator/store/notifications.h"
#include "coordinator/store/regressions.h"
#include "coordinator/store/reports.h"
#include "gate/gate.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {

/// regression.new for a regression just stored.
std::optional<store::NotificationEvent> RegressionFound(const store::Regression& r);
/// regression.triage for a regression just moved: its last event is the move.
std::optional<store::NotificationEvent> RegressionTriaged(const store::Regression& r);
/// bisection.finished: its outcome, and the regression it was started for.
std::optional<store::NotificationEvent> BisectionFinished(const store::FinishedBisection& b);
/// gate.failed with `result`'s failing gating verdicts (gate::Fails) when
/// its outcome is a regression; nothing otherwise.
store::NotifyWith<store::StoredReport> GateFailed(const gate::GateResult& result);

/// The regression without its events as webhooks carry it (the HTTP API
/// answers v1::Regression instead, regression_messages.h): times in seconds
/// since the epoch, a value that is not finite null.
nlohmann::json RegressionJson(const store::Regression& r);
/// One triage event as JSON (from, to, by, note, commit): `from` is "" for
/// the detection that made the regression.
nlohmann::json RegressionEventJson(const store::RegressionEvent& e);

}  // namespace perfgate::coordinator
