// The outbox's delivery loop and the checks of a webhook endpoint.
#include "coordinator/notifier.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "coordinator/notification_body.h"

namespace perfgate::coordinator {
namespace {

// "scheme://host[:port]" and the path of a URL (its path "/" when none).
struct SplitUrl {
  std::string origin, path;
};

std::optional<SplitUrl> Split(const std::string& url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return std::nullopt;
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  const size_t host_start = scheme_end + 3;
  const size_t path_start = url.find('/', host_start);
  SplitUrl out{url.substr(0, path_start), path_start == std::string::npos ? "/" : url.substr(path_start)};
  if (out.origin.size() == host_start) return std::nullopt;
  return out;
}

bool KnownEvent(const std::string& event) {
  return std::find(std::begin(store::kNotificationEvents), std::end(store::kNotificationEvents), event) !=
         std::end(store::kNotificationEvents);
}

// What a person makes of cpp-httplib's error of a request that got no answer.
std::string Why(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "could not connect (refused, unreachable or no such host)";
    case httplib::Error::ConnectionTimeout:
      return "timed out connecting";
    case httplib::Error::Read:
      return "no answer (the connection closed or the read timed out)";
    case httplib::Error::Write:
      return "could not send the body";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    case httplib::Error::SSLLoadingCerts:
      return "could not load the CA certificates (--webhook-ca)";
    case httplib::Error::SSLServerVerification:
      return "the server's certificate did not verify against the CA certificates";
    default:
      return httplib::to_string(e);
  }
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

double BackoffSeconds(const NotifierOptions& o, int attempts) {
  const double wait = o.backoff_initial_s * std::pow(2.0, std::max(attempts, 1) - 1);
  return std::min(wait, o.backoff_max_s);
}

absl::Status CheckEndpoint(const store::NotificationEndpoint& e) {
  if (e.name.empty() || e.name.size() > 100 ||
      e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("webhook name '", e.name, "': use 1 to 100 letters, digits, '.', '_' or '-'"));
  }
  if (!Split(e.url).has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--url '", e.url, "' is not an http:// or https:// URL with a host"));
  }
  if (e.format != "json" && e.format != "slack") {
    return absl::InvalidArgumentError(absl::StrCat("--format '", e.format, "': expected json or slack"));
  }
  if (e.events.empty()) return absl::InvalidArgumentError("--event: name at least one event");
  for (const std::string& ev : e.events) {
    if (!KnownEvent(ev)) {
      return absl::InvalidArgumentError(absl::StrCat("--event '", ev, "': expected one of ",
                                                     absl::StrJoin(store::kNotificationEvents, ", ")));
    }
  }
  if (e.branch.empty() || e.sku.empty()) {
    return absl::InvalidArgumentError("--branch and --sku are globs and may not be empty ('*': any)");
  }
  if (e.secret.size() < 16) {
    return absl::InvalidArgumentError(
        "the webhook secret has fewer than 16 characters; make one with `openssl rand -hex 32`");
  }
  return absl::OkStatus();
}

Notifier::Notifier(store::NotificationRepository& repo, NotifierOptions options)
    : repo_(repo), options_(std::move(options)) {}

Notifier::~Notifier() = default;

void Notifier::Start() {
  loop_ = std::make_unique<Periodic>(std::chrono::duration<double>(options_.poll_interval_s), Periodic::Start::kNow,
                                     [this] {
                                       for (;;) {
                                         auto delivered = DeliverDue();
                                         if (!delivered.ok()) {
                                           std::cerr << "perfgate-coordinator: notifications: "
                                                     << delivered.status().message() << "\n";
                                           return;
                                         }
                                         if (*delivered < options_.batch) return;
                                       }
                                     });
}

absl::StatusOr<int> Notifier::DeliverDue() {
  PERFGATE_ASSIGN_OR_RETURN(std::vector<store::OutboxEntry> due,
                            repo_.ClaimDueNotifications(options_.batch, options_.lease_s));
  int delivered = 0;
  for (const store::OutboxEntry& entry : due) {
    const store::DeliveryOutcome outcome = Deliver(entry);
    if (outcome.delivered) ++delivered;
    const absl::Status s = repo_.RecordDelivery(outcome);
    if (!s.ok()) std::cerr << "perfgate-coordinator: notifications: " << s.message() << "\n";
  }
  return delivered;
}

store::DeliveryOutcome Notifier::Deliver(const store::OutboxEntry& entry) {
  store::DeliveryOutcome out;
  out.id = entry.id;
  out.claim_token = entry.claim_token;
  auto fail = [&](std::string why) {
    out.error = std::move(why);
    out.give_up = entry.attempts + 1 >= options_.max_attempts;
    out.retry_in_s = BackoffSeconds(options_, entry.attempts + 1);
    return out;
  };
  auto body = RenderBody(entry.format, entry.payload, entry.idempotency_key, options_.public_url);
  if (!body.ok()) return fail(std::string(body.status().message()));
  const std::optional<SplitUrl> url = Split(entry.url);
  if (!url.has_value()) return fail(absl::StrCat("'", entry.url, "' is not an http:// or https:// URL"));

  httplib::Client client(url->origin);
  const auto timeout = std::chrono::duration<double>(options_.timeout_s);
  client.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client.enable_server_certificate_verification(true);
  if (!options_.ca_file.empty()) client.set_ca_cert_path(options_.ca_file.c_str());
  const int64_t timestamp = UnixSeconds();
  const httplib::Headers headers = {
      {kSignatureHeader, SignDelivery(entry.secret, timestamp, *body)},
      {kTimestampHeader, std::to_string(timestamp)},
      {kIdempotencyHeader, entry.idempotency_key},
      {kEventHeader, entry.event_type},
      {"User-Agent", "perfgate-coordinator"}};
  const httplib::Result res = client.Post(url->path, headers, *body, "application/json");
  if (!res) {
    return fail(absl::StrCat("POST ", entry.url, ": ", Why(res.error())));
  }
  if (res->status < 200 || res->status >= 300) {
    return fail(absl::StrCat("POST ", entry.url, ": HTTP ", res->status, ": ", res->body.substr(0, 200)));
  }
  out.delivered = true;
  return out;
}

}  // namespace perfgate::coordinator
