#include "agent/command_support.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/command_line.h"
#include "common/process.h"
#include "agent/runner.h"
#include "common/identity.h"
#include "common/status_macros.h"
#include "suites/builtin.h"

namespace perfgate::agent {

absl::StatusOr<std::map<std::string, std::vector<std::string>>> ParseSets(
    const std::vector<std::string>& sets) {
  std::map<std::string, std::vector<std::string>> out;
  for (const std::string& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set '", s, "': expected NAME=V1,V2, e.g. bytes=67108864"));
    }
    auto values = ExpandSetValues(s.substr(eq + 1));
    PERFGATE_RETURN_IF_ERROR(values);
    out[s.substr(0, eq)] = *std::move(values);
  }
  return out;
}

absl::StatusOr<suites::collectives::WorldOptions> ResolveWorld(const AgentConfig& config) {
  suites::collectives::WorldOptions w;
  w.rendezvous = config.rendezvous;
  w.transport_host = config.transport_host;
  w.device = config.device;
  w.gpus = config.gpus;
  auto env_int = [](const char* name, int* out) {
    const char* v = std::getenv(name);
    return v != nullptr && absl::SimpleAtoi(v, out);
  };
  int slurm_ntasks = 0, slurm_procid = 0;
  const bool slurm = env_int("SLURM_NTASKS", &slurm_ntasks) && slurm_ntasks > 1 &&
                     env_int("SLURM_PROCID", &slurm_procid);
  if (config.world_size > 0) {
    w.size = config.world_size;
  } else if (slurm) {
    w.size = slurm_ntasks;
  }
  if (config.rank >= 0) {
    w.rank = config.rank;
  } else if (w.size > 1) {
    if (!slurm) {
      return absl::InvalidArgumentError("--world-size > 1 needs --rank (or a Slurm task environment)");
    }
    w.rank = slurm_procid;
  }
  PERFGATE_RETURN_IF_ERROR(suites::collectives::ValidateWorldOptions(w));
  return w;
}

int Fail(const absl::Status& s, const char* what) {
  std::cerr << "perfgate-agent: " << what << ": " << s.message() << "\n";
  return kExitError;
}

absl::StatusOr<std::vector<suites::CaseInstance>> SelectCases(const AgentConfig& config) {
  // Multi-rank cases name their rank count in their key, so runs of
  // different world sizes are never compared; it comes from the world.
  std::map<std::string, std::vector<std::string>> implicit;
  if (auto world = ResolveWorld(config); world.ok()) implicit["ranks"] = {std::to_string(world->size)};
  return suites::BuiltinRegistry().Select(config.suites, config.filters, config.set_values, implicit);
}

absl::StatusOr<std::vector<suites::CaseInstance>> SelectSomeCases(const AgentConfig& config) {
  auto cases = SelectCases(config);
  if (!cases.ok() || !cases->empty()) return cases;
  std::string suites, selection;
  for (const std::string& suite : config.suites) absl::StrAppend(&suites, " --suite ", QuoteWord(suite));
  if (!config.filters.empty()) absl::StrAppend(&selection, " --filter ", QuoteWord(absl::StrJoin(config.filters, ";")));
  for (const std::string& set : config.sets) absl::StrAppend(&selection, " --set ", QuoteWord(set));
  return absl::InvalidArgumentError(absl::StrCat(
      "no case matches", suites.empty() && selection.empty() ? " (no case is built in)" : suites + selection,
      "; perfgate-agent list", suites, " shows the cases there are",
      config.filters.empty() ? "" : " (a filter is a glob over those keys, e.g. 'kernels/sgemm*')"));
}

Trigger ParseTriggerOrManual(const std::string& s) {
  Trigger t = Trigger::kManual;
  ParseTrigger(s, &t);
  return t;
}

RunMeta RunMetaOf(const AgentConfig& config, const ProbeResult& probe) {
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = config.agent_name.empty() ? probe.hostname : config.agent_name;
  meta.environment = probe.environment;
  meta.repo = config.repo;
  meta.branch = config.branch.empty() ? Git({"rev-parse", "--abbrev-ref", "HEAD"}) : config.branch;
  if (meta.branch.empty()) meta.branch = "local";
  meta.commit = config.commit.empty() ? Git({"rev-parse", "HEAD"}) : config.commit;
  meta.trigger = ParseTriggerOrManual(config.trigger);
  meta.ci_job = config.ci_job;
  meta.node = probe.hostname;
  meta.started_at = std::chrono::system_clock::now();
  meta.details = probe.details;
  return meta;
}

std::unique_ptr<NvmlThrottleSource> ThrottleOf(const ProbeResult& probe) {
  if (probe.nvml && !probe.nvml_devices.empty() && probe.nvml_devices[0] &&
      probe.gpu_facts[0].default_sm_clock_mhz) {
    return std::make_unique<NvmlThrottleSource>(*probe.nvml, *probe.nvml_devices[0],
                                                *probe.gpu_facts[0].default_sm_clock_mhz);
  }
  return nullptr;
}

absl::StatusOr<std::string> SelfExecutable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot find this binary through /proc/self/exe: ", std::strerror(errno)));
  }
  return std::string(path, static_cast<size_t>(n));
}

std::vector<std::string> SampleWorkerArgs(const AgentConfig& config) {
  std::vector<std::string> args;
  for (const std::string& s : config.suites) args.insert(args.end(), {"--suite", s});
  for (const std::string& f : config.filters) args.insert(args.end(), {"--filter", f});
  for (const std::string& s : config.sets) args.insert(args.end(), {"--set", s});
  args.insert(args.end(), {"--timeout", absl::StrCat(config.engine.timeout_s)});
  return args;
}

std::vector<AbCase> RunnableCases(const std::vector<suites::CaseInstance>& selected, std::ostream& log) {
  std::vector<AbCase> cases;
  for (const suites::CaseInstance& c : selected) {
    const std::string why = c.spec->unavailable ? c.spec->unavailable(c.id) : "";
    if (!why.empty()) {
      log << "  " << c.id.Key() << ": skipped here: " << why << "\n";
      continue;
    }
    AbCase ab_case{c.id, {}};
    for (suites::MetricKind k : c.metrics) ab_case.metrics.push_back(suites::SpecOf(k));
    if (c.spec->host_cpus) ab_case.host_cpus = c.spec->host_cpus(c.id);
    cases.push_back(std::move(ab_case));
  }
  return cases;
}

}  // namespace perfgate::agent
