// Delivers the notification outbox (docs/notifications.md): claims the
// deliveries that are due (store/notifications.h; replicas sharing the
// database never claim the same row), posts each to its endpoint with
// cpp-httplib (HTTPS verified against the system's CAs or --webhook-ca) at
// the addresses its host resolved to once they were checked
// (webhook_url.h), and records the attempt: delivered, or retried with
// exponential back-off until its attempts run out. What an attempt records
// names the endpoint, never its URL, and quotes of an answer only its
// status line: the read role lists it. Also checks endpoints before they
// are stored.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/periodic.h"
#include "coordinator/store/notifications.h"

namespace perfgate::coordinator {

struct NotifierOptions {
  double poll_interval_s = 2;     // how often the outbox is looked at
  int batch = 20;                 // deliveries claimed at once
  double lease_s = 120;           // a claim's hold on a row; longer than a delivery
  double backoff_initial_s = 10;  // the wait after the first failed attempt
  double backoff_max_s = 3600;    // the longest wait between attempts
  int max_attempts = 30;          // then the delivery is marked failed
  double timeout_s = 10;          // connect, and read of the answer
  std::string ca_file;            // CA bundle for HTTPS endpoints (empty: the system's)
  std::string public_url;         // base of dashboard links in bodies (empty: none)
};

/// The wait after `attempts` failed attempts: initial * 2^(attempts-1), at most max.
double BackoffSeconds(const NotifierOptions& o, int attempts);

/// INVALID_ARGUMENT naming the field when `e` could not be delivered to:
/// its name, URL (CheckWebhookUrl: an http:// or https:// URL whose literal
/// address is public unless `e.allow_private`), format, events, globs or
/// secret (at least 16 characters).
absl::Status CheckEndpoint(const store::NotificationEndpoint& e);

class Notifier {
 public:
  Notifier(store::NotificationRepository& repo, NotifierOptions options);
  ~Notifier();  // stops the background loop, finishing the delivery under way

  /// One pass: claims up to a batch of due deliveries, sends and records
  /// them; returns how many were delivered.
  absl::StatusOr<int> DeliverDue();
  /// Runs DeliverDue every poll interval (at once when a batch was full)
  /// on a thread of its own, until destroyed.
  void Start();

 private:
  store::DeliveryOutcome Deliver(const store::OutboxEntry& entry);

  store::NotificationRepository& repo_;
  const NotifierOptions options_;
  std::unique_ptr<Periodic> loop_;
};

}  // namespace perfgate::coordinator
