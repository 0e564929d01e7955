// Signing and rendering of webhook deliveries.
#include "coordinator/notification_body.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {
namespace {

using Json = nlohmann::json;

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

// A number of the payload; NaN when absent or null (a value that was not finite).
double Num(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : std::nan("");
}

std::string Percent(double change) {
  return std::isfinite(change) ? absl::StrFormat("%+.1f %%", change * 100) : std::string("(change unknown)");
}

std::string RegressionLine(const Json& p) {
  const Json& r = p["regression"];
  const std::string series =
      absl::StrCat(r.value("benchmark", ""), " ", r.value("metric", ""), " on ", p.value("branch", ""), " / ",
                   p.value("sku", ""));
  if (p.value("type", "") == "regression.triage") {
    const Json t = p.value("triage", Json::object());
    std::string line = absl::StrCat("Regression #", r.value("id", int64_t{0}), " (", series, "): ",
                                     t.value("from", ""), " → ", t.value("to", ""), " by ", t.value("by", ""));
    if (!t.value("commit", "").empty()) absl::StrAppend(&line, ", fixed by ", Short(t.value("commit", "")));
    if (!t.value("note", "").empty()) absl::StrAppend(&line, ": ", t.value("note", ""));
    return line;
  }
  return absl::StrCat("New regression #", r.value("id", int64_t{0}), ": ", series, " ",
                      Percent(Num(r, "change")), " worse (",
                      absl::StrFormat("%.4g → %.4g %s", Num(r, "median_before"), Num(r, "median_after"),
                                      r.value("unit", "")),
                      "), between ", Short(r.value("good_commit", "")), " and ", Short(r.value("bad_commit", "")));
}

std::string GateLine(const Json& p) {
  const Json& g = p["gate"];
  std::vector<std::string> failed;
  for (const Json& v : g.value("failed", Json::array())) {
    failed.push_back(absl::StrCat(v.value("benchmark", ""), " ", v.value("metric", ""), " ",
                                  Percent(Num(v, "change"))));
  }
  std::string line = absl::StrCat("Gate failed on ", p.value("branch", ""), " / ", p.value("sku", ""), " at ",
                                  Short(g.value("candidate_commit", "")), " against ",
                                  g.value("baseline_branch", ""));
  if (!failed.empty()) absl::StrAppend(&line, ": ", absl::StrJoin(failed, "; "));
  return line;
}

std::string SlackText(const Json& p, const std::string& link) {
  const std::string type = p.value("type", "");
  std::string line;
  if (type.rfind("regression.", 0) == 0 && p.contains("regression")) {
    line = RegressionLine(p);
  } else if (type == "gate.failed" && p.contains("gate")) {
    line = GateLine(p);
  } else if (type == "bisection.finished" && p.contains("bisection")) {
    const Json& b = p["bisection"];
    line = absl::StrCat("Bisection #", b.value("id", int64_t{0}), " on ", p.value("branch", ""), " / ",
                        p.value("sku", ""), " ended: ", b.value("summary", ""));
  } else {
    line = absl::StrCat(type, " on ", p.value("branch", ""), " / ", p.value("sku", ""), ": ",
                        p.value("summary", ""));
  }
  if (!link.empty()) absl::StrAppend(&line, " <", link, "|open in perfgate>");
  return line;
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

namespace {

// RenderBody, which may throw nlohmann's exceptions on a payload of the wrong shape.
absl::StatusOr<std::string> RenderChecked(const std::string& format, const std::string& payload,
                                          const std::string& idempotency_key, const std::string& public_url) {
  Json p = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!p.is_object()) return absl::InvalidArgumentError("the stored notification is not a JSON object");
  std::string link;
  if (!public_url.empty() && p.contains("dashboard_path") && p["dashboard_path"].is_string()) {
    std::string base = public_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    link = base + p["dashboard_path"].get<std::string>();
  }
  if (format == "json") {
    p["idempotency_key"] = idempotency_key;
    if (!link.empty()) p["dashboard_url"] = link;
    return p.dump();
  }
  if (format == "slack") return Json{{"text", SlackText(p, link)}}.dump();
  return absl::InvalidArgumentError(absl::StrCat("unknown webhook format '", format, "' (json or slack)"));
}

}  // namespace

absl::StatusOr<std::string> RenderBody(const std::string& format, const std::string& payload,
                                       const std::string& idempotency_key, const std::string& public_url) {
  try {
    return RenderChecked(format, payload, idempotency_key, public_url);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the stored notification has a field of a wrong type: ", e.what()));
  }
}

}  // namespace perfgate::coordinator
