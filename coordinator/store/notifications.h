// Webhook endpoints and the outbox of their deliveries as stored
// (migration 0012, docs/notifications.md). A write that notifies takes its
// event from the domain (NotifyWith, worded in
// coordinator/notification_events.h) and puts it in the outbox in its own
// transaction (outbox.h);
// this reads endpoints and deliveries, claims the deliveries that are due
// so that one coordinator of many sends each, and records how a delivery
// went. What a delivery looks like and when it is retried is decided in
// coordinator/notifier.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/enum_names.h"
#include "common/row_limits.h"
#include "common/run_types.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

/// The events an endpoint may ask for.
inline constexpr const char* kNotificationEvents[] = {"regression.new", "regression.triage", "gate.failed",
                                                      "bisection.finished"};

struct NotificationEndpoint {
  int64_t id = 0;
  std::string name, url;
  std::string format = "json";  // json or slack
  std::string secret;           // signs the deliveries
  std::string branch = "*", sku = "*";  // globs: '*' is any run of characters
  std::vector<std::string> events;
  bool allow_private = false;  // may be posted to at loopback, private and link-local addresses
  TimePoint created_at{};
};

/// An event as the outbox keeps it until delivery.
struct NotificationEvent {
  std::string type;            // one of kNotificationEvents
  std::string branch, sku;     // matched against each endpoint's globs
  std::string payload;         // the generic JSON body
};

/// The notification a write sends with what it stored, as the domain words
/// it (coordinator/notification_events.h): nullopt, or no function at all,
/// and the write notifies nobody. The store decides nothing about it; it
/// puts it in the outbox in the write's own transaction.
template <typename Stored>
using NotifyWith = std::function<std::optional<NotificationEvent>(const Stored&)>;

/// Where one delivery stands: pending until delivered, or failed when its
/// attempts ran out or its address was refused.
enum class DeliveryState { kPending, kDelivered, kFailed };
/// The names, in the enum's order: what the outbox's column, the HTTP API
/// and `webhooks outbox --state` use.
inline constexpr std::string_view kDeliveryStateNames[] = {"pending", "delivered", "failed"};
inline std::string_view ToString(DeliveryState state) { return EnumName(kDeliveryStateNames, state); }
inline std::optional<DeliveryState> ParseDeliveryState(std::string_view name) {
  return ParseEnumName<DeliveryState>(kDeliveryStateNames, name);
}

/// One delivery of one event to one endpoint.
struct OutboxEntry {
  int64_t id = 0;
  std::string endpoint, url, format, secret;
  bool allow_private = false;  // the endpoint's
  std::string event_type, idempotency_key, payload;
  DeliveryState state = DeliveryState::kPending;
  int attempts = 0;
  std::string last_error;
  std::string claim_token;  // set by ClaimDueNotifications
  TimePoint created_at{}, next_attempt_at{};
  std::optional<TimePoint> last_attempt_at, delivered_at;
};

/// Which deliveries to list; empty fields match all.
struct OutboxFilter {
  std::string endpoint;
  std::optional<DeliveryState> state;
  uint32_t limit = 0;  // 0: kDeliveryRows (common/row_limits.h)
};

/// How one claimed delivery went.
struct DeliveryOutcome {
  int64_t id = 0;
  std::string claim_token;   // the claim it was made under
  bool delivered = false;
  std::string error;         // why not, when not delivered
  double retry_in_s = 0;     // when to try again, when not delivered
  bool give_up = false;      // no further attempt: the row becomes failed
};

class NotificationRepository : protected Repository {
 public:
  /// Stores a new endpoint. ALREADY_EXISTS when the name is taken.
  absl::StatusOr<NotificationEndpoint> AddEndpoint(const NotificationEndpoint& e);
  /// Every endpoint, by name.
  absl::StatusOr<std::vector<NotificationEndpoint>> ListEndpoints();
  /// Removes an endpoint and its deliveries. NOT_FOUND when unknown.
  absl::Status RemoveEndpoint(const std::string& name);
  /// Puts an event in the outbox of every endpoint that wants it, in a
  /// transaction of its own; returns how many deliveries it made.
  absl::StatusOr<int> EnqueueNotification(const NotificationEvent& e);
  /// Deliveries, newest first, without their endpoints' URLs and secrets
  /// (left empty: only a claim, which delivers, carries them).
  absl::StatusOr<std::vector<OutboxEntry>> ListOutbox(const OutboxFilter& f);
  /// Up to `limit` pending deliveries that are due, oldest first, each
  /// claimed for `lease_s` seconds (rows another coordinator is claiming
  /// are skipped, not waited for): attempts by others start after the lease.
  absl::StatusOr<std::vector<OutboxEntry>> ClaimDueNotifications(int limit, double lease_s);
  /// Records an attempt of a claimed delivery. FAILED_PRECONDITION when the
  /// claim is no longer this one (its lease ran out and another took it).
  absl::Status RecordDelivery(const DeliveryOutcome& outcome);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
