// What one webhook delivery carries (docs/notifications.md): the body in
// the endpoint's format (the event's message in the API's JSON, or a
// Slack-compatible message), and the headers that let a receiver check it: a timestamp, an
// HMAC-SHA256 signature of timestamp and body with the endpoint's secret,
// and an idempotency key that stays the same on every retry.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace perfgate::coordinator {

inline constexpr char kSignatureHeader[] = "X-Perfgate-Signature";  // "sha256=<64 hex>"
inline constexpr char kTimestampHeader[] = "X-Perfgate-Timestamp";  // Unix seconds
inline constexpr char kIdempotencyHeader[] = "Idempotency-Key";     // a UUID, one per event and endpoint
inline constexpr char kEventHeader[] = "X-Perfgate-Event";          // e.g. regression.new

/// "sha256=" and the hex HMAC-SHA256, keyed by `secret`, of
/// "<timestamp>.<body>".
std::string SignDelivery(const std::string& secret, int64_t timestamp, const std::string& body);
/// True when `signature` is SignDelivery's for these, compared in constant time.
bool SignatureMatches(const std::string& secret, int64_t timestamp, const std::string& body,
                      const std::string& signature);

/// The body sent to an endpoint of `format` (json or slack) for an outbox
/// payload (v1::NotificationEvent in the API's JSON): json is the message
/// with `idempotency_key` and, when `public_url` is set, `dashboard_url`
/// set; slack is {"text": ...}, one line a person reads, with the
/// dashboard link. A payload queued by a release before payloads were
/// messages (no `version`) goes out as it was stored (json, with the two
/// keys added) or as a line naming its event, branch and SKU (slack).
/// INVALID_ARGUMENT for a payload that is neither, naming the field, or an
/// unknown format.
absl::StatusOr<std::string> RenderBody(const std::string& format, const std::string& payload,
                                       const std::string& idempotency_key, const std::string& public_url);

}  // namespace perfgate::coordinator
