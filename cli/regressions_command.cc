// `perfgate regressions` and `perfgate triage`, over the coordinator's HTTP
// API (client/http_client.h): the list is the same the dashboard shows, and a
// triage is the same write the page makes. Both send the credential of
// --token-file and speak HTTPS with the TLS options, as the gRPC commands do.
#include <iostream>

#include "absl/strings/str_format.h"
#include "client/http_client.h"
#include "common/row_limits.h"
#include "cli/command_support.h"
#include "cli/commands.h"

namespace perfgate::cli {
namespace {

void PrintRegression(const nlohmann::json& r) {
  std::cout << absl::StrFormat("%-6d %-13s %-9s %s %s on %s/%s\n", r["id"].get<int64_t>(),
                               r["state"].get<std::string>(), SignedPercent(r["change"]),
                               r["benchmark"].get<std::string>(), r["metric"].get<std::string>(),
                               r["sku"].get<std::string>(), r["branch"].get<std::string>());
  std::cout << "       commits " << r["good_commit"].get<std::string>() << " -> "
            << r["bad_commit"].get<std::string>() << ", first bad run "
            << r["first_bad_run_id"].get<std::string>() << "\n";
}

}  // namespace

int RegressionsCommand(const Config& c) {
  const client::HttpClientOptions o = HttpOptions(c);
  const std::string path = absl::StrFormat(
      "/api/v1/regressions?state=%s&branch=%s&sku=%s&limit=%d", client::UrlEncode(c.state),
      client::UrlEncode(c.branch), client::UrlEncode(c.sku), c.limit == 0 ? kRegressionRows.fallback : c.limit);
  auto body = client::HttpGet(o, path);
  if (!body.ok()) return HttpError(body.status(), "regressions");
  const nlohmann::json& list = (*body)["regressions"];
  if (list.empty()) {
    std::cout << "no regressions\n";
    return kExitPass;
  }
  std::cout << absl::StrFormat("%-6s %-13s %-9s %s\n", "id", "state", "change", "series");
  for (const nlohmann::json& r : list) PrintRegression(r);
  return kExitPass;
}

int TriageCommand(const Config& c) {
  const client::HttpClientOptions o = HttpOptions(c);
  nlohmann::json body = {{"state", c.state}, {"note", c.note}, {"by", c.by}};
  if (!c.commit.empty()) body["commit"] = c.commit;
  auto r = client::HttpPost(o, absl::StrFormat("/api/v1/regressions/%d/triage", c.regression_id), body);
  if (!r.ok()) return HttpError(r.status(), "triage");
  PrintRegression(*r);
  return kExitPass;
}

}  // namespace perfgate::cli
