// `perfgate regressions` and `perfgate triage`, over the coordinator's HTTP
// API (client/http_client.h): the list is the same the dashboard shows, and a
// triage is the same write the page makes, both the messages of
// proto/perfgate/v1/regression.proto. Both send the credential of
// --token-file and speak HTTPS with the TLS options, as the gRPC commands do.
#include <iostream>

#include "absl/strings/str_format.h"
#include "client/http_client.h"
#include "common/regression_state.h"
#include "common/row_limits.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "perfgate/v1/regression.pb.h"
#include "wire/api_convert.h"

namespace perfgate::cli {
namespace {

// A regression's state by its short name ("acknowledged"), "?" for none.
std::string StateName(v1::RegressionState state) {
  const std::optional<RegressionState> s = wire::FromProto(state);
  return s ? std::string(ToString(*s)) : std::string("?");
}

void PrintRegression(const v1::Regression& r) {
  std::cout << absl::StrFormat("%-6d %-13s %-9s %s %s on %s/%s\n", r.id(), StateName(r.state()),
                               SignedPercent(r.has_change(), r.change()), r.benchmark(), r.metric(), r.sku(),
                               r.branch());
  std::cout << "       commits " << r.good_commit() << " -> " << r.bad_commit() << ", first bad run "
            << r.first_bad_run_id() << "\n";
}

}  // namespace

int RegressionsCommand(const Config& c) {
  const client::HttpClientOptions o = HttpOptions(c);
  const std::string path = absl::StrFormat(
      "/api/v1/regressions?state=%s&branch=%s&sku=%s&limit=%d", client::UrlEncode(c.state),
      client::UrlEncode(c.branch), client::UrlEncode(c.sku), c.limit == 0 ? kRegressionRows.fallback : c.limit);
  v1::ListRegressionsResponse list;
  if (absl::Status s = client::HttpGetMessage(o, path, &list); !s.ok()) return HttpError(s, "regressions");
  if (list.regressions().empty()) {
    std::cout << "no regressions\n";
    return kExitPass;
  }
  std::cout << absl::StrFormat("%-6s %-13s %-9s %s\n", "id", "state", "change", "series");
  for (const v1::Regression& r : list.regressions()) PrintRegression(r);
  return kExitPass;
}

int TriageCommand(const Config& c) {
  const client::HttpClientOptions o = HttpOptions(c);
  v1::TriageRequest body;
  // The state's name was checked when the flags were read (config.cc).
  if (const std::optional<RegressionState> state = ParseRegressionState(c.state)) body.set_state(wire::ToProto(*state));
  body.set_note(c.note);
  body.set_by(c.by);
  body.set_commit(c.commit);
  v1::Regression r;
  const absl::Status s =
      client::HttpPostMessage(o, absl::StrFormat("/api/v1/regressions/%d/triage", c.regression_id), body, &r);
  if (!s.ok()) return HttpError(s, "triage");
  PrintRegression(r);
  return kExitPass;
}

}  // namespace perfgate::cli
