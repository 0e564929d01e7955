// The outbox's delivery loop and the checks of a webhook endpoint.
#include "coordinator/domain/notifier.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "coordinator/domain/notification_body.h"
#include "coordinator/domain/webhook_url.h"

namespace perfgate::coordinator {
namespace {

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

// The reason phrase of an answer's status line, printable ASCII only and
// short: the receiver chose it, and the read role sees last_error.
std::string Reason(const httplib::Response& res) {
  std::string out;
  for (char c : res.reason.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out.empty() ? out : " " + out;
}

// A client of `url` that connects to `address` only (the host is kept for
// the Host header, TLS's server name and the certificate check).
std::unique_ptr<httplib::ClientImpl> MakeClient(const WebhookUrl& url, const IpAddress& address,
                                                const NotifierOptions& o) {
  std::unique_ptr<httplib::ClientImpl> client;
  if (url.scheme == "https") {
    client = std::make_unique<httplib::SSLClient>(url.host, url.port);
  } else {
    client = std::make_unique<httplib::ClientImpl>(url.host, url.port);
  }
  client->set_hostname_addr_map({{url.host, ToString(address)}});
  const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::duration<double>(o.timeout_s));
  client->set_connection_timeout(timeout);
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  client->set_follow_location(false);  // a redirect could lead anywhere the checks did not see
  client->enable_server_certificate_verification(true);
  if (!o.ca_file.empty()) client->set_ca_cert_path(o.ca_file.c_str());
  return client;
}

// The POST to the first of `addresses` that accepts a connection (at most
// four are tried); a request is never sent twice, since only a refused or
// timed-out connect moves on to the next.
httplib::Result PostTo(const WebhookUrl& url, const std::vector<IpAddress>& addresses,
                       const httplib::Headers& headers, const std::string& body, const NotifierOptions& o) {
  const size_t tries = std::min<size_t>(addresses.size(), 4);  // ResolveHost gives at least one
  for (size_t i = 0;; ++i) {
    httplib::Result res = MakeClient(url, addresses[i], o)->Post(url.target.c_str(), headers, body, "application/json");
    const bool not_connected =
        !res && (res.error() == httplib::Error::Connection || res.error() == httplib::Error::ConnectionTimeout);
    if (!not_connected || i + 1 >= tries) return res;
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
  if (absl::Status s = CheckWebhookUrl(e.url, e.allow_private); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--url: ", s.message()));
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
  auto fail = [&](absl::string_view why) {
    out.error = absl::StrCat("endpoint '", entry.endpoint, "': ", why);
    out.give_up = entry.attempts + 1 >= options_.max_attempts;
    out.retry_in_s = BackoffSeconds(options_, entry.attempts + 1);
    return out;
  };
  auto body = RenderBody(entry.format, entry.payload, entry.idempotency_key, options_.public_url);
  if (!body.ok()) return fail(body.status().message());
  // The URL was checked when the endpoint was added; its host is resolved
  // and checked again now, once, and the request goes to those addresses
  // only, so a name that moved to a private address is not posted to.
  const absl::StatusOr<WebhookUrl> url = ParseWebhookUrl(entry.url);
  if (!url.ok()) return fail(absl::StrCat("its stored URL is refused: ", url.status().message()));
  const auto addresses = CheckedAddresses(*url, entry.allow_private);
  if (!addresses.ok()) return fail(addresses.status().message());
  const int64_t timestamp = UnixSeconds();
  const httplib::Headers headers = {
      {"Host", HostHeader(*url)},
      {kSignatureHeader, SignDelivery(entry.secret, timestamp, *body)},
      {kTimestampHeader, std::to_string(timestamp)},
      {kIdempotencyHeader, entry.idempotency_key},
      {kEventHeader, entry.event_type},
      {"User-Agent", "perfgate-coordinator"}};
  const httplib::Result res = PostTo(*url, *addresses, headers, *body, options_);
  // What is recorded names the endpoint, never its URL (a secret path, a
  // token), and of an answer only its status line: the read role sees it.
  if (!res) return fail(Why(res.error()));
  if (res->status < 200 || res->status >= 300) return fail(absl::StrCat("HTTP ", res->status, Reason(*res)));
  out.delivered = true;
  return out;
}

}  // namespace perfgate::coordinator
