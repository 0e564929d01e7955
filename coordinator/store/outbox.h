// Writing notifications inside a repository's own transaction, so an event
// (a regression, a triage move, a failed gate, an ended bisection) and its
// deliveries commit or roll back together; the events themselves are the
// domain's (coordinator/notification_events.h). Internal to
// coordinator/store/ (it includes libpqxx).
#pragma once

#include <pqxx/pqxx>

#include <optional>

#include "coordinator/store/notifications.h"

namespace perfgate::coordinator::store {

/// Inserts one outbox row per endpoint that wants `e` (its event type among
/// the endpoint's, its branch and SKU matching the endpoint's globs);
/// returns how many.
int EnqueueInTransaction(pqxx::transaction_base& txn, const NotificationEvent& e);

/// Puts what `notify` words for `stored` in the outbox (nothing when it
/// is empty or words nothing).
template <typename Stored>
void NotifyInTransaction(pqxx::transaction_base& txn, const NotifyWith<Stored>& notify, const Stored& stored) {
  if (!notify) return;
  if (std::optional<NotificationEvent> e = notify(stored)) EnqueueInTransaction(txn, *e);
}

}  // namespace perfgate::coordinator::store
