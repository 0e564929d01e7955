// Webhook endpoints and the outbox: rows only. The claim of due deliveries
// skips rows other coordinators hold (FOR UPDATE SKIP LOCKED), so replicas
// sharing a database deliver each row once while their leases hold.
#include "coordinator/store/notifications.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/outbox.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
namespace {

// The columns RowToEndpoint reads, in its order.
const std::string& EndpointColumns() {
  static const std::string columns =
      absl::StrCat("id, name, url, format, secret, branch, sku, array_to_json(events)::text, ",
                   MicrosFromTimestamp("created_at"), ", allow_private");
  return columns;
}

NotificationEndpoint RowToEndpoint(const pqxx::row& row) {
  NotificationEndpoint e;
  e.id = row[0].as<int64_t>();
  e.name = row[1].as<std::string>();
  e.url = row[2].as<std::string>();
  e.format = row[3].as<std::string>();
  e.secret = row[4].as<std::string>();
  e.branch = row[5].as<std::string>();
  e.sku = row[6].as<std::string>();
  e.events = Json::parse(row[7].as<std::string>()).get<std::vector<std::string>>();
  e.created_at = FromMicros(row[8].as<int64_t>());
  e.allow_private = row[9].as<bool>();
  return e;
}

// The outbox columns after the endpoint's (OutboxColumns).
const std::string& OutboxRest() {
  static const std::string columns = absl::StrCat(
      "o.event_type, o.idempotency_key::text, o.payload, o.state, "
      "o.attempts, o.last_error, coalesce(o.claim_token::text, ''), ",
      MicrosFromTimestamp("o.created_at"), ", ", MicrosFromTimestamp("o.next_attempt_at"), ", ",
      MicrosFromTimestamp("o.last_attempt_at"), ", ", MicrosFromTimestamp("o.delivered_at"), ", e.allow_private");
  return columns;
}

// The columns of an outbox row; the endpoint's URL and secret only for a
// delivery (`with_secrets`), empty for a listing, which the read role asks.
std::string OutboxColumns(bool with_secrets) {
  return absl::StrCat("o.id, e.name, ", with_secrets ? "e.url" : "''", ", e.format, ",
                      with_secrets ? "e.secret" : "''", ", ", OutboxRest());
}

std::optional<TimePoint> OptionalTime(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return FromMicros(f.as<int64_t>());
}

OutboxEntry RowToEntry(const pqxx::row& row) {
  OutboxEntry o;
  o.id = row[0].as<int64_t>();
  o.endpoint = row[1].as<std::string>();
  o.url = row[2].as<std::string>();
  o.format = row[3].as<std::string>();
  o.secret = row[4].as<std::string>();
  o.event_type = row[5].as<std::string>();
  o.idempotency_key = row[6].as<std::string>();
  o.payload = row[7].as<std::string>();
  // The column's CHECK admits only the names.
  o.state = ParseDeliveryState(row[8].as<std::string>()).value_or(DeliveryState::kFailed);
  o.attempts = row[9].as<int>();
  o.last_error = row[10].as<std::string>();
  o.claim_token = row[11].as<std::string>();
  o.created_at = FromMicros(row[12].as<int64_t>());
  o.next_attempt_at = FromMicros(row[13].as<int64_t>());
  o.last_attempt_at = OptionalTime(row[14]);
  o.delivered_at = OptionalTime(row[15]);
  o.allow_private = row[16].as<bool>();
  return o;
}

}  // namespace

absl::StatusOr<NotificationEndpoint> NotificationRepository::AddEndpoint(const NotificationEndpoint& e) {
  return db_.Run("adding a webhook endpoint", [&](pqxx::connection& c) -> absl::StatusOr<NotificationEndpoint> {
    pqxx::work txn(c);
    const pqxx::result row = txn.exec_params(
        absl::StrCat("INSERT INTO notification_endpoints (name, url, format, secret, branch, sku, events, "
                     "allow_private) "
                     "SELECT $1, $2, $3, $4, $5, $6, array_agg(x), $8 FROM jsonb_array_elements_text($7::jsonb) x "
                     "ON CONFLICT (name) DO NOTHING RETURNING ",
                     EndpointColumns()),
        e.name, e.url, e.format, e.secret, e.branch, e.sku, Json(e.events).dump(), e.allow_private);
    if (row.empty()) {
      return absl::AlreadyExistsError(
          absl::StrCat("a webhook endpoint named '", e.name, "' exists; remove it first or pick another name"));
    }
    txn.commit();
    return RowToEndpoint(row[0]);
  });
}

absl::StatusOr<std::vector<NotificationEndpoint>> NotificationRepository::ListEndpoints() {
  std::vector<NotificationEndpoint> out;
  absl::Status s = db_.Run("listing webhook endpoints", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row :
         txn.exec(absl::StrCat("SELECT ", EndpointColumns(), " FROM notification_endpoints ORDER BY name"))) {
      out.push_back(RowToEndpoint(row));
    }
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

absl::Status NotificationRepository::RemoveEndpoint(const std::string& name) {
  return db_.Run("removing a webhook endpoint", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    if (txn.exec_params("DELETE FROM notification_endpoints WHERE name = $1", name).affected_rows() == 0) {
      return absl::NotFoundError(absl::StrCat("no webhook endpoint is named '", name, "'"));
    }
    txn.commit();
    return absl::OkStatus();
  });
}

absl::StatusOr<int> NotificationRepository::EnqueueNotification(const NotificationEvent& e) {
  return db_.Run("queueing a notification", [&](pqxx::connection& c) -> absl::StatusOr<int> {
    pqxx::work txn(c);
    const int n = EnqueueInTransaction(txn, e);
    txn.commit();
    return n;
  });
}

absl::StatusOr<std::vector<OutboxEntry>> NotificationRepository::ListOutbox(const OutboxFilter& f) {
  std::vector<OutboxEntry> out;
  absl::Status s = db_.Run("listing the notification outbox", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat("SELECT ", OutboxColumns(false),
                          " FROM notification_outbox o JOIN notification_endpoints e ON e.id = o.endpoint_id "
                          "WHERE ($1 = '' OR e.name = $1) AND ($2 = '' OR o.state = $2) "
                          "ORDER BY o.id DESC LIMIT $3"),
             f.endpoint, f.state ? std::string(ToString(*f.state)) : std::string(),
             static_cast<int64_t>(ClampRows(kDeliveryRows, f.limit)))) {
      out.push_back(RowToEntry(row));
    }
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

absl::StatusOr<std::vector<OutboxEntry>> NotificationRepository::ClaimDueNotifications(int limit,
                                                                                        double lease_s) {
  std::vector<OutboxEntry> out;
  absl::Status s = db_.Run("claiming due notifications", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat("WITH due AS (SELECT id FROM notification_outbox WHERE state = 'pending' "
                          "AND next_attempt_at <= now() ORDER BY next_attempt_at, id LIMIT $1 "
                          "FOR UPDATE SKIP LOCKED), "
                          "o AS (UPDATE notification_outbox SET claim_token = gen_random_uuid(), "
                          "next_attempt_at = now() + make_interval(secs => $2) "
                          "FROM due WHERE notification_outbox.id = due.id RETURNING notification_outbox.*) "
                          "SELECT ",
                          OutboxColumns(true), " FROM o JOIN notification_endpoints e ON e.id = o.endpoint_id ORDER BY o.id"),
             limit, lease_s)) {
      out.push_back(RowToEntry(row));
    }
    txn.commit();
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

absl::Status NotificationRepository::RecordDelivery(const DeliveryOutcome& d) {
  return db_.Run("recording a notification attempt", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    const pqxx::result r = txn.exec_params(
        "UPDATE notification_outbox SET attempts = attempts + 1, last_attempt_at = now(), claim_token = NULL, "
        "state = CASE WHEN $3 THEN 'delivered' WHEN $6 THEN 'failed' ELSE 'pending' END, "
        "delivered_at = CASE WHEN $3 THEN now() END, "
        "last_error = CASE WHEN $3 THEN last_error ELSE $4 END, "
        "next_attempt_at = CASE WHEN $3 OR $6 THEN now() ELSE now() + make_interval(secs => $5) END "
        "WHERE id = $1 AND claim_token::text = $2 AND state = 'pending'",
        d.id, d.claim_token, d.delivered, d.error, d.retry_in_s, d.give_up);
    if (r.affected_rows() == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "notification ", d.id, " is no longer claimed by this attempt (its lease ran out); not recorded"));
    }
    txn.commit();
    return absl::OkStatus();
  });
}

}  // namespace perfgate::coordinator::store
