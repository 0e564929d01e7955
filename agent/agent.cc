#include "agent/agent.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/client.h"
#include "agent/probe.h"
#include "agent/runner.h"
#include "common/identity.h"
#include "suites/builtin.h"

namespace perfgate::agent {
namespace {

// Output of a fixed git command in the working directory; empty when git or
// the repository is absent.
std::string Git(const char* args) {
  std::string cmd = absl::StrCat("git ", args, " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) return "";
  return std::string(absl::StripTrailingAsciiWhitespace(out));
}

absl::StatusOr<std::map<std::string, std::vector<std::string>>> ParseSets(
    const std::vector<std::string>& sets) {
  std::map<std::string, std::vector<std::string>> out;
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set '", s, "': expected NAME=V1,V2, e.g. bytes=67108864"));
    }
    out[s.substr(0, eq)] = absl::StrSplit(s.substr(eq + 1), ',', absl::SkipEmpty());
  }
  return out;
}

absl::StatusOr<std::vector<suites::CaseInstance>> Select(const AgentConfig& config) {
  auto sets = ParseSets(config.sets);
  if (!sets.ok()) return sets.status();
  return suites::BuiltinRegistry().Select(config.suites, config.filters, *sets);
}

Trigger ParseTriggerOrManual(const std::string& s) {
  Trigger t = Trigger::kManual;
  ParseTrigger(s, &t);
  return t;
}

int Fail(const absl::Status& s, const char* what) {
  std::cerr << "perfgate-agent: " << what << ": " << s.message() << "\n";
  return kExitError;
}

}  // namespace

int RunCommand(const AgentConfig& config) {
  auto cases = Select(config);
  if (!cases.ok()) return Fail(cases.status(), "bad selection");
  if (cases->empty()) return Fail(absl::InvalidArgumentError("no case matches the selection"), "bad selection");
  RunnerOptions options;
  options.engine = config.engine;
  options.engine.max_noise = config.max_noise_pct / 100.0;
  for (const std::string& spec : config.slowdowns) {
    auto s = ParseSlowdown(spec);
    if (!s.ok()) return Fail(s.status(), "bad option");
    options.slowdowns.push_back(*s);
  }
  ClientOptions client_options;
  client_options.address = config.coordinator;
  if (!config.token_file.empty()) {
    std::ifstream in(config.token_file);
    if (!in) return Fail(absl::NotFoundError(config.token_file), "cannot read the token file");
    std::getline(in, client_options.token);
  }

  const ProbeResult probe = ProbeMachine();
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = config.agent_name.empty() ? probe.hostname : config.agent_name;
  meta.environment = probe.environment;
  meta.repo = config.repo;
  meta.branch = config.branch;
  meta.commit = config.commit;
  if (meta.branch.empty()) meta.branch = Git("rev-parse --abbrev-ref HEAD");
  if (meta.branch.empty()) meta.branch = "local";
  if (meta.commit.empty()) meta.commit = Git("rev-parse HEAD");
  // Ancestors, nearest first, so a gate can restrict its baseline to the
  // merge-base and what came before it.
  if (!meta.commit.empty()) {
    const std::string parents = Git(absl::StrCat("rev-list --max-count=200 ", meta.commit, "~1").c_str());
    meta.parent_commits = absl::StrSplit(parents, '\n', absl::SkipEmpty());
  }
  meta.trigger = ParseTriggerOrManual(config.trigger);
  meta.ci_job = config.ci_job;
  meta.node = probe.hostname;
  meta.started_at = std::chrono::system_clock::now();

  std::cout << "perfgate-agent: sku " << meta.environment.sku << ", " << cases->size()
            << " cases, coordinator " << config.coordinator << "\n";
  if (!probe.cuda.available) std::cout << "perfgate-agent: no GPU: " << probe.cuda.note << "\n";

  CoordinatorClient client(client_options);
  if (auto s = client.RegisterAgent(meta.agent_name, probe.hostname, PERFGATE_VERSION); !s.ok()) {
    return Fail(s, "coordinator refused the agent");
  }
  if (auto s = client.OpenRun(meta); !s.ok()) return Fail(s, "coordinator refused the run");
  std::cout << "perfgate-agent: run " << meta.run_id << " (" << meta.branch << " "
            << meta.commit.substr(0, 12) << ")\n" << std::flush;

  uint64_t sequence = 0;
  std::vector<CaseResult> done;
  bool case_failed = false;
  absl::Status streamed = RunCases(*cases, options, [&](CaseResult r) -> absl::Status {
    std::cout << "  " << r.benchmark.Key() << ": " << r.samples.size() << " samples, "
              << ToString(r.status) << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n"
              << std::flush;
    case_failed = case_failed || r.status == CaseStatus::kFailed;
    auto ack = client.SendBatch(meta.run_id, ++sequence, {r});
    if (!ack.ok()) return ack.status();
    // Keep only what the summary table needs.
    done.push_back(std::move(r));
    return absl::OkStatus();
  });
  if (!streamed.ok()) {
    // Best effort: mark the run failed so it never serves as a baseline.
    client.CloseRun(meta.run_id, RunStatus::kFailed, sequence - 1, std::string(streamed.message())).ok();
    return Fail(streamed, "coordinator rejected the results");
  }
  auto closed = client.CloseRun(meta.run_id, RunStatus::kComplete, sequence, "");
  if (!closed.ok()) return Fail(closed.status(), "coordinator refused to close the run");

  std::cout << "\n" << FormatSummaryTable(done) << "\n";
  std::cout << "run_id: " << meta.run_id << "  (" << *closed << " samples stored)\n";
  if (!config.run_id_file.empty()) {
    std::ofstream out(config.run_id_file);
    out << meta.run_id << "\n";
    if (!out) return Fail(absl::InternalError(config.run_id_file), "cannot write the run id file");
  }
  return case_failed ? kExitCaseFailed : kExitOk;
}

int ListCommand(const AgentConfig& config) {
  auto cases = Select(config);
  if (!cases.ok()) return Fail(cases.status(), "bad selection");
  for (const suites::CaseInstance& c : *cases) {
    std::cout << c.id.Key() << "\n";
    for (suites::MetricKind k : c.spec->metrics) {
      const MetricSpec m = suites::SpecOf(k);
      std::cout << "    " << m.name << " [" << m.unit << "] " << ToString(m.direction) << "\n";
    }
  }
  return kExitOk;
}

int ProbeCommand() {
  const ProbeResult p = ProbeMachine();
  std::cout << "sku: " << p.environment.sku << "\n";
  std::cout << "hostname: " << p.hostname << "\n";
  for (const auto& [k, v] : p.environment.fields) std::cout << k << ": " << v << "\n";
  if (!p.cuda.available) std::cout << "gpu: none (" << p.cuda.note << ")\n";
  for (const GpuInfo& g : p.cuda.devices) {
    std::cout << "gpu " << g.index << ": " << g.name << " " << g.uuid << " pci " << g.pci_bus_id
              << " sm " << g.sm_count << "\n";
  }
  return kExitOk;
}

}  // namespace perfgate::agent
