// The notifications the coordinator sends (docs/notifications.md), worded
// here from what a write stored: which changes notify — a regression found
// (regression.new), a triage move (regression.triage), a bisection ended
// (bisection.finished), a gate that failed (gate.failed) — and the body each
// carries, v1::NotificationEvent (proto/perfgate/v1/notification.proto) in
// the API's JSON. The store only queues what these word, in the write's own
// transaction (store::NotifyWith); the notifier delivers them.
#pragma once

#include <cstdint>
#include <optional>

#include "coordinator/store/bisections.h"
#include "coordinator/store/notifications.h"
#include "coordinator/store/regressions.h"
#include "coordinator/store/reports.h"
#include "gate/gate.h"

namespace perfgate::coordinator {

/// The version of the payloads these word (NotificationEvent.version).
inline constexpr uint32_t kNotificationVersion = 2;

/// regression.new for a regression just stored.
std::optional<store::NotificationEvent> RegressionFound(const store::Regression& r);
/// regression.triage for a regression just moved: its last event is the move.
std::optional<store::NotificationEvent> RegressionTriaged(const store::Regression& r);
/// bisection.finished: its outcome, and the regression it was started for.
std::optional<store::NotificationEvent> BisectionFinished(const store::FinishedBisection& b);
/// gate.failed with `result`'s failing gating verdicts (gate::Fails) when
/// its outcome is a regression; nothing otherwise.
store::NotifyWith<store::StoredReport> GateFailed(const gate::GateResult& result);

}  // namespace perfgate::coordinator
