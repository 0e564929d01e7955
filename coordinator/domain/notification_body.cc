// Signing and rendering of webhook deliveries.
#include "coordinator/domain/notification_body.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/regression_state.h"
#include "nlohmann/json.hpp"
#include "perfgate/v1/notification.pb.h"
#include "wire/api_convert.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {
namespace {

using Json = nlohmann::json;

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

std::string Percent(bool measured, double change) {
  return measured ? absl::StrFormat("%+.1f %%", change * 100) : std::string("(change unknown)");
}

// A triage state's short name ("acknowledged"); "" for UNSPECIFIED (the detection).
std::string StateName(v1::RegressionState state) {
  const std::optional<RegressionState> s = wire::FromProto(state);
  return s ? std::string(ToString(*s)) : std::string();
}

std::string RegressionLine(const v1::NotificationEvent& e) {
  const v1::Regression& r = e.regression();
  const std::string series = absl::StrCat(r.benchmark(), " ", r.metric(), " on ", e.branch(), " / ", e.sku());
  if (e.type() == "regression.triage") {
    const v1::TriageEvent& t = e.triage();
    std::string line = absl::StrCat("Regression #", r.id(), " (", series, "): ", StateName(t.from()), " → ",
                                    StateName(t.to()), " by ", t.by());
    if (!t.commit().empty()) absl::StrAppend(&line, ", fixed by ", Short(t.commit()));
    if (!t.note().empty()) absl::StrAppend(&line, ": ", t.note());
    return line;
  }
  const auto number = [](bool has, double v) { return has ? v : std::nan(""); };
  return absl::StrCat("New regression #", r.id(), ": ", series, " ", Percent(r.has_change(), r.change()), " worse (",
                      absl::StrFormat("%.4g → %.4g %s", number(r.has_median_before(), r.median_before()),
                                      number(r.has_median_after(), r.median_after()), r.unit()),
                      "), between ", Short(r.good_commit()), " and ", Short(r.bad_commit()));
}

std::string GateLine(const v1::NotificationEvent& e) {
  const v1::GateFailure& g = e.gate();
  std::vector<std::string> failed;
  for (const v1::FailedMetric& v : g.failed()) {
    failed.push_back(absl::StrCat(v.benchmark(), " ", v.metric(), " ", Percent(v.has_change(), v.change())));
  }
  std::string line = absl::StrCat("Gate failed on ", e.branch(), " / ", e.sku(), " at ", Short(g.candidate_commit()),
                                  " against ", g.baseline_branch());
  if (!failed.empty()) absl::StrAppend(&line, ": ", absl::StrJoin(failed, "; "));
  return line;
}

std::string SlackText(const v1::NotificationEvent& e, const std::string& link) {
  std::string line;
  switch (e.subject_case()) {
    case v1::NotificationEvent::kRegression: line = RegressionLine(e); break;
    case v1::NotificationEvent::kGate: line = GateLine(e); break;
    case v1::NotificationEvent::kBisection:
      line = absl::StrCat("Bisection #", e.bisection().id(), " on ", e.branch(), " / ", e.sku(),
                          " ended: ", e.bisection().outcome().summary());
      break;
    default: line = absl::StrCat(e.type(), " on ", e.branch(), " / ", e.sku()); break;
  }
  if (!link.empty()) absl::StrAppend(&line, " <", link, "|open in perfgate>");
  return line;
}

// The dashboard's address of `path` under `public_url`; "" when either is unset.
std::string Link(const std::string& public_url, const std::string& path) {
  if (public_url.empty() || path.empty()) return "";
  std::string base = public_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + path;
}

// A payload queued before payloads were messages (version 1, hand-written
// JSON): json delivers it as stored with the key and link added; slack
// names its event, branch and SKU.
absl::StatusOr<std::string> LegacyBody(const std::string& format, Json p, const std::string& idempotency_key,
                                       const std::string& public_url) {
  const std::string path = p.contains("dashboard_path") && p["dashboard_path"].is_string()
                               ? p["dashboard_path"].get<std::string>() : std::string();
  const std::string link = Link(public_url, path);
  if (format == "json") {
    p["idempotency_key"] = idempotency_key;
    if (!link.empty()) p["dashboard_url"] = link;
    return p.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  const auto text = [&p](const char* key) { return p.contains(key) && p[key].is_string() ? p[key].get<std::string>() : ""; };
  std::string line = absl::StrCat(text("type"), " on ", text("branch"), " / ", text("sku"));
  if (!link.empty()) absl::StrAppend(&line, " <", link, "|open in perfgate>");
  return Json{{"text", line}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string SignDelivery(const std::string& secret, int64_t timestamp, const std::string& body) {
  const std::string message = absl::StrCat(timestamp, ".", body);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &size);
  return absl::StrCat("sha256=", absl::BytesToHexString(
                                     absl::string_view(reinterpret_cast<const char*>(mac), size)));
}

bool SignatureMatches(const std::string& secret, int64_t timestamp, const std::string& body,
                      const std::string& signature) {
  const std::string expected = SignDelivery(secret, timestamp, body);
  return expected.size() == signature.size() &&
         CRYPTO_memcmp(expected.data(), signature.data(), expected.size()) == 0;
}

absl::StatusOr<std::string> RenderBody(const std::string& format, const std::string& payload,
                                       const std::string& idempotency_key, const std::string& public_url) {
  if (format != "json" && format != "slack") {
    return absl::InvalidArgumentError(absl::StrCat("unknown webhook format '", format, "' (json or slack)"));
  }
  // A payload of version 1 has no `version` (it may still parse as the
  // message: its names are mostly the message's). Only then is it read a
  // second time, as the JSON it was stored as.
  v1::NotificationEvent e;
  const absl::Status read = wire::FromApiJson(payload, &e, "the stored notification");
  if (!read.ok() || e.version() == 0) {
    const Json p = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (p.is_object() && !p.contains("version")) return LegacyBody(format, p, idempotency_key, public_url);
    if (!read.ok()) return read;
  }
  const std::string link = Link(public_url, e.dashboard_path());
  if (format == "slack") return Json{{"text", SlackText(e, link)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
  e.set_idempotency_key(idempotency_key);
  e.set_dashboard_url(link);
  return wire::ToApiJson(e);
}

}  // namespace perfgate::coordinator
