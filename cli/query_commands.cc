// The queries of `perfgate`: `runs` (recent runs), `run` (one run with its
// summaries), `history` (a metric's series and its change points) and
// `fleet` (the outlier nodes of one sweep).
#include <ctime>
#include <iostream>
#include <map>
#include <string>

#include "absl/strings/str_format.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "wire/api_json.h"
#include "wire/convert.h"
#include "wire/query_convert.h"
#include "report/fleet.h"
#include "report/history.h"

namespace perfgate::cli {
namespace {

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0) return "-";
  std::time_t secs = t.seconds();
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::gmtime(&secs));
  return buf;
}

}  // namespace

int RunsCommand(const Config& c) {
  v1::ListRunsRequest req;
  req.set_branch(c.branch);
  req.set_sku(c.sku);
  req.set_limit(c.limit);
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.ListRuns(req);
  if (!resp.ok()) return RpcError(resp.status(), "runs", c.coordinator);
  std::cout << absl::StrFormat("%-36s  %-19s  %-20s  %-12s  %-18s  %-9s %8s\n", "run", "finished (UTC)",
                               "branch", "commit", "sku", "status", "samples");
  for (const auto& r : resp->runs()) {
    std::cout << absl::StrFormat("%-36s  %-19s  %-20s  %-12s  %-18s  %-9s %8d\n", r.run_id(),
                                 Time(r.finished_at()), r.branch(), r.commit().substr(0, 12), r.sku(),
                                 v1::RunStatus_Name(r.status()), r.samples());
  }
  if (resp->truncated()) {
    std::cerr << "note: the newest " << resp->runs_size() << " runs fill one reply (4 MiB); ask for fewer with "
              << "--limit or narrow with --branch or --sku to see older ones\n";
  }
  return kExitPass;
}

int RunCommand(const Config& c) {
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.GetRun(c.run_id);
  if (!resp.ok()) return RpcError(resp.status(), "run", c.coordinator);
  const auto& r = resp->run();
  std::cout << "run " << r.run_id() << "\n  branch " << r.branch() << " commit " << r.commit()
            << "\n  sku " << r.sku() << " node " << r.node() << "\n  status "
            << v1::RunStatus_Name(r.status()) << ", " << r.samples() << " samples\n";
  const std::map<std::string, std::string> fields(resp->environment().fields().begin(),
                                                  resp->environment().fields().end());
  for (const auto& [key, value] : fields) std::cout << "  " << key << ": " << value << "\n";
  std::cout << absl::StrFormat("\n%-44s %-11s %12s %-8s %7s %5s %4s  %s\n", "benchmark", "metric", "median",
                               "unit", "noise", "n", "thr", "case");
  for (const auto& m : resp->summaries()) {
    std::cout << absl::StrFormat("%-44s %-11s %12.4g %-8s %6.2f%% %5d %4d  %s\n", m.benchmark(), m.metric(),
                                 m.median(), m.unit(), m.noise() * 100, m.n(), m.n_throttled(),
                                 v1::CaseStatus_Name(m.status()));
  }
  return kExitPass;
}

int HistoryCommand(const Config& c) {
  v1::HistoryRequest req;
  req.set_benchmark(c.benchmark);
  req.set_metric(c.metric);
  req.set_sku(c.sku);
  req.set_branch(c.branch);
  req.set_limit(c.limit);
  if (c.history_from) wire::ToProto(*c.history_from, req.mutable_from());
  if (c.history_to) wire::ToProto(*c.history_to, req.mutable_to());
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.History(req);
  if (!resp.ok()) return RpcError(resp.status(), "history", c.coordinator);
  auto history = wire::FromProto(*resp);
  if (!history.ok()) return BadAnswer(history.status(), "history");
  std::cout << report::RenderHistory(*history, c.benchmark, c.metric);
  // The answer as received: the HTTP API's JSON of the same message (an older coordinator's lacks the names).
  resp->set_benchmark(c.benchmark);
  resp->set_metric(c.metric);
  return WriteFile(c.json_file, wire::ToApiJson(*resp, /*indented=*/true)) ? 0 : kExitError;
}

int FleetCommand(const Config& c) {
  v1::FleetRequest req;
  req.set_sku(c.sku);
  req.set_sweep(c.sweep);
  req.set_benchmark(c.benchmark);
  req.set_metric(c.metric);
  req.set_k(c.k);
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.Fleet(req);
  if (!resp.ok()) return RpcError(resp.status(), "fleet", c.coordinator);
  auto fleet = wire::FromProto(*resp);
  if (!fleet.ok()) return BadAnswer(fleet.status(), "fleet");
  std::cout << report::RenderFleet(*fleet, c.sku, c.sweep);
  resp->set_sku(c.sku);
  resp->set_sweep(c.sweep);
  if (!WriteFile(c.json_file, wire::ToApiJson(*resp, /*indented=*/true))) return kExitError;
  return report::FleetExitCode(*fleet);
}

}  // namespace perfgate::cli
